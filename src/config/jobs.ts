// Background work: the notification outbox and the purges of old records.
import { z } from 'zod';
import { optional, positiveWholeNumber, setting, wholeNumberFrom1, type SettingDeclaration } from './declare.ts';

/** Below this, a lease could end between two of its renewals on a busy machine. */
const MIN_OUTBOX_LEASE_MS = 1_000;
export const HOUR_MS = 3_600_000;
/** A year: records kept longer only grow the table, retries never come that late. */
const MAX_IDEMPOTENCY_TTL_HOURS = 8_760;
/** The longest API_KEY_CALLS_RETENTION_DAYS: ten years of per-minute counts is already far more than an audit needs. */
const MAX_API_KEY_CALLS_RETENTION_DAYS = 3_650;
export const DAY_MS = 86_400_000;

export const JOBS_SETTINGS = {
  OUTBOX_LEASE_MS: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`)
        .transform(Number)
        .refine(
          (value) => value >= MIN_OUTBOX_LEASE_MS && value <= Number.MAX_SAFE_INTEGER,
          `must be a whole number of milliseconds, at least ${MIN_OUTBOX_LEASE_MS}`,
        ),
    ),
    default: '120000',
    meaning: `how long a notification's claim lasts unless its sender renews it (it does while sending): how soon another instance retries a message whose sender died; at least ${MIN_OUTBOX_LEASE_MS}`,
  }),
  OUTBOX_POLL_INTERVAL_MS: setting({
    schema: positiveWholeNumber,
    default: '5000',
    meaning: 'pause between two rounds of the outbox worker',
  }),
  IDEMPOTENCY_TTL_HOURS: setting({
    schema: wholeNumberFrom1(MAX_IDEMPOTENCY_TTL_HOURS, 'hours'),
    default: '24',
    meaning: `how long an \`Idempotency-Key\`'s answer is kept (1 to ${MAX_IDEMPOTENCY_TTL_HOURS}); later, the key is free and the record is purged`,
  }),
  API_KEY_CALLS_RETENTION_DAYS: setting({
    schema: wholeNumberFrom1(MAX_API_KEY_CALLS_RETENTION_DAYS, 'days'),
    default: '30',
    meaning: `how long the per-minute counts of each key's calls (\`npm run keys -- audit\`) are kept before they are purged (1 to ${MAX_API_KEY_CALLS_RETENTION_DAYS})`,
  }),
} as const satisfies Record<string, SettingDeclaration>;
