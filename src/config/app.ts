// The service's mode and where it and the platform live.
import { z } from 'zod';
import { httpOrigin, optional, setting, trueOrFalse, type SettingDeclaration } from './declare.ts';

export type AppMode = 'production' | 'development';

export const APP_SETTINGS = {
  APP_MODE: setting({
    schema: optional(z.enum(['production', 'development'], 'must be development or production (or unset)')),
    meaning: '`development` (or `--dev` on the command line) for the local demo; see "Production and development modes"',
    defaultInWords: 'production rules',
  }),
  NODE_ENV: setting({
    schema: optional(z.string()),
    meaning: '`production`: introspection needs `read:schema`, no name suggestions in errors, explorers off',
  }),
  ENV_FILE: setting({
    schema: optional(z.string().trim()),
    default: '.env',
    meaning:
      'the file of settings read at start when it exists (relative to the project); `off` reads none; a variable already in the environment wins over the file',
  }),
  SEED_DEMO_DATA: setting({
    schema: trueOrFalse,
    default: 'false',
    developmentDefault: 'true',
    meaning: 'seed the demo data when the database has no dealership',
  }),
  PUBLIC_URL: setting({
    schema: httpOrigin,
    required: "set it to this service's public origin, e.g. https://api.example.com",
    defaultInWords: '**required**; development: `http://localhost:$PORT`',
    meaning: "this service's public origin, `http(s)://…` (the partner `redirect_url`)",
    example: 'https://api.example.com',
  }),
  PLATFORM_URL: setting({
    schema: httpOrigin,
    default: 'http://localhost:3000',
    meaning: "where the platform's pages live: the sign-on handoff lands there",
  }),
} as const satisfies Record<string, SettingDeclaration>;
