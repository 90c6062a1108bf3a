// The rate limits (docs/rate-limits.md): per key, per dealership, per client address.
import { positiveWholeNumber, setting, wholeNumber, type SettingDeclaration, type ValuesOf } from './declare.ts';

export interface RateLimitSettings {
  /** The window of the per-key, per-dealership and cost limits. */
  windowMs: number;
  /** Requests one API key may make per window. */
  keyRequests: number;
  /** Requests all the keys of one dealership may make together per window. */
  dealershipRequests: number;
  /** Estimated GraphQL cost (src/schema/graphql-limits.ts) one key may spend per window, on both doors. */
  keyCost: number;
  /** The window of the per-client-address limits below. */
  addressWindowMs: number;
  /** Requests with a key that is not accepted, per client address per address window. */
  authFailures: number;
  /** Sign-on token redemptions per client address per address window. */
  signOnRedemptions: number;
  /** Requests without a key per client address per minute (ANONYMOUS_WINDOW_MS). */
  anonymousRequests: number;
}

/** The defaults of the rate limits (docs/rate-limits.md, "Rate limits"). */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  windowMs: 60_000,
  keyRequests: 600,
  dealershipRequests: 1_200,
  // Ten operations at the highest cost one may have (GRAPHQL_MAX_COST), or about 190 pages of 20 cars a minute.
  keyCost: 50_000,
  addressWindowMs: 300_000,
  authFailures: 20,
  signOnRedemptions: 20,
  // Two a second from one address: a person clicking car links, or a GraphiQL user, never comes close.
  anonymousRequests: 120,
};

/** The window of RATE_LIMIT_ANONYMOUS: per minute, as it is stated. */
export const ANONYMOUS_WINDOW_MS = 60_000;

export const RATE_LIMITS_SETTINGS = {
  RATE_LIMIT_WINDOW_SECONDS: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_RATE_LIMITS.windowMs / 1_000),
    meaning: 'the window of the per-key, per-dealership and cost limits (see "Rate limits")',
  }),
  RATE_LIMIT_KEY_REQUESTS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.keyRequests),
    meaning: 'operations one API key may run per window; `0`: no limit',
  }),
  RATE_LIMIT_DEALERSHIP_REQUESTS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.dealershipRequests),
    meaning: 'operations all the keys of one dealership may run together per window; `0`: no limit',
  }),
  RATE_LIMIT_KEY_COST: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.keyCost),
    meaning: 'estimated GraphQL cost one key may spend per window, on both doors; at least `GRAPHQL_MAX_COST`, or `0`: no budget',
  }),
  RATE_LIMIT_ADDRESS_WINDOW_SECONDS: setting({
    schema: positiveWholeNumber,
    default: String(DEFAULT_RATE_LIMITS.addressWindowMs / 1_000),
    meaning: 'the window of the two per-address limits below',
  }),
  RATE_LIMIT_AUTH_FAILURES: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.authFailures),
    meaning:
      'requests with a key that is not accepted, per client address per window; beyond it, requests with a key from that address are 429; `0`: no limit',
  }),
  RATE_LIMIT_SIGN_ON: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.signOnRedemptions),
    meaning: 'partner sign-on token redemptions per client address per window; `0`: no limit',
  }),
  RATE_LIMIT_ANONYMOUS: setting({
    schema: wholeNumber(),
    default: String(DEFAULT_RATE_LIMITS.anonymousRequests),
    meaning:
      'requests without an API key (the public redirect, the partner sign-on handoff, GraphQL without a key) per client address per minute; beyond it they are 429; `0`: no limit',
  }),
} as const satisfies Record<string, SettingDeclaration>;

/** The rate limits from their settings, windows in milliseconds. */
export function rateLimitsOf(settings: ValuesOf<typeof RATE_LIMITS_SETTINGS>): RateLimitSettings {
  return {
    windowMs: settings.RATE_LIMIT_WINDOW_SECONDS * 1_000,
    keyRequests: settings.RATE_LIMIT_KEY_REQUESTS,
    dealershipRequests: settings.RATE_LIMIT_DEALERSHIP_REQUESTS,
    keyCost: settings.RATE_LIMIT_KEY_COST,
    addressWindowMs: settings.RATE_LIMIT_ADDRESS_WINDOW_SECONDS * 1_000,
    authFailures: settings.RATE_LIMIT_AUTH_FAILURES,
    signOnRedemptions: settings.RATE_LIMIT_SIGN_ON,
    anonymousRequests: settings.RATE_LIMIT_ANONYMOUS,
  };
}
