// The caches of one instance: the response cache and API keys' verdicts.
import { setting, trueOrFalse, wholeNumber, type SettingDeclaration } from './declare.ts';

export const CACHE_SETTINGS = {
  RESPONSE_CACHE: setting({
    schema: trueOrFalse,
    default: 'true',
    meaning: 'serve repeated reads from the response cache (see "Caching")',
  }),
  API_KEY_CACHE_TTL_MS: setting({
    schema: wholeNumber(),
    default: '5000',
    meaning:
      "how long an instance reuses a key's verdict; the bound on a revocation being seen without Redis (`0` asks the database every time)",
  }),
} as const satisfies Record<string, SettingDeclaration>;
