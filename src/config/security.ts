// The secrets: the session signing secret and the keys that encrypt secrets stored in the database.
import { z } from 'zod';
import { DEVELOPMENT_KEY, keyringOf, parseEncryptionKeys } from './secrets.ts';
import { optional, setting, type SettingDeclaration } from './declare.ts';

/** Development mode only: public, so the service refuses to use it outside development mode. */
const DEV_SIGNING_SECRET = 'dev-only-session-signing-secret-change-me';
const SESSION_SIGNING_SECRET_MIN_LENGTH = 32;
const DEVELOPMENT_KEYS = `${DEVELOPMENT_KEY.id}:${DEVELOPMENT_KEY.key.toString('base64')}`;

export const SECURITY_SETTINGS = {
  SESSION_SIGNING_SECRET: setting({
    schema: optional(
      z
        .string()
        .min(
          SESSION_SIGNING_SECRET_MIN_LENGTH,
          `must be at least ${SESSION_SIGNING_SECRET_MIN_LENGTH} characters (e.g. openssl rand -base64 48)`,
        ),
    ),
    required: `set it to a random value of ${SESSION_SIGNING_SECRET_MIN_LENGTH}+ characters, shared by all instances (e.g. openssl rand -base64 48)`,
    developmentDefault: DEV_SIGNING_SECRET,
    defaultInWords: `**required** (${SESSION_SIGNING_SECRET_MIN_LENGTH}+ characters); development: a public value`,
    meaning: 'signs the handoff session (HS256); the same on every instance',
    confidential: true,
  }),
  SECRETS_ENCRYPTION_KEYS: setting({
    schema: optional(
      z.string().transform((value, context) => {
        const parsed = parseEncryptionKeys(value);
        if ('problems' in parsed) {
          for (const message of parsed.problems) context.addIssue({ code: 'custom', message });
          return z.NEVER;
        }
        return keyringOf(parsed.keys);
      }),
    ),
    required: 'set it to <key id>:<base64 32-byte key>; make one with: npm run --silent secrets -- new-key',
    developmentDefault: DEVELOPMENT_KEYS,
    defaultInWords: '**required**; development: a public key `dev`',
    meaning: '`id:base64key,…` (32-byte keys): encrypts secrets stored in the database; the first encrypts, all decrypt',
    confidential: true,
  }),
} as const satisfies Record<string, SettingDeclaration>;
