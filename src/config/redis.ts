// Redis, which instances share key changes, caches and rate-limit budgets through.
import { z } from 'zod';
import { optional, setting, wholeNumberFrom1, type SettingDeclaration } from './declare.ts';

/** A Redis key prefix: printable ASCII without spaces, so it reads the same in every Redis tool. */
const redisKeyPrefix = z
  .string()
  .trim()
  .regex(/^[\x21-\x7e]{1,64}$/, 'must be 1 to 64 printable characters without spaces');

export const REDIS_SETTINGS = {
  REDIS_URL: setting({
    schema: optional(
      z
        .string()
        .trim()
        .refine((value) => /^rediss?:\/\/[^/\s]/.test(value), 'must be redis://host:6379 or rediss://…'),
    ),
    meaning:
      '`redis://host:6379`: instances share key changes, caches (see "Caching") and rate-limit budgets (see "Rate limits") through it; while Redis is down the service serves from its own memory and logs it',
    confidential: true,
  }),
  REDIS_COMMAND_TIMEOUT_MS: setting({
    schema: wholeNumberFrom1(10_000, 'milliseconds'),
    default: '100',
    meaning:
      'how long one Redis command may take; a command that takes longer is given up on, and only that call is answered from memory (cache bypassed, rate limits counted in this instance): a slow reply is not an outage (see `REDIS_OUTAGE_AFTER_MS`)',
  }),
  REDIS_OUTAGE_AFTER_MS: setting({
    schema: wholeNumberFrom1(600_000, 'milliseconds'),
    default: '5000',
    meaning:
      'how long Redis commands must keep failing, with no success in between, before Redis is taken for down although its connection is up (a server that accepts connections but answers nothing); then it is not asked at all (the breaker: one command a second probes it) until it answers. A connection that closes or reconnects is an outage at once',
  }),
  REDIS_KEY_PREFIX: setting({
    schema: optional(redisKeyPrefix),
    meaning:
      'what every Redis key and channel of this deployment starts with (cache entries and generations, rate limits, key changes); by default `dgw:<id>:`, where the id is made once and kept in the database, so instances of one database share their keys and deployments of different databases on one Redis never meet',
  }),
  RATE_LIMIT_REDIS_PREFIX: setting({
    schema: optional(redisKeyPrefix),
    meaning: '**deprecated** (removal after 2027-06-30): use `REDIS_KEY_PREFIX`, which this is taken as when that is not set',
  }),
} as const satisfies Record<string, SettingDeclaration>;
