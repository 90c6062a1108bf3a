// Idempotency-Key for lead creation (draft-ietf-httpapi-idempotency-key-header): a retried POST with
// the same key from the same API key and the same body gets the first answer back and creates
// nothing; the same key with a different body is a 422 idempotency_key_reused. The record, with its
// answer, is the last statement of the creating transaction: one INSERT, on the unique (api_key_id,
// key) constraint that guarantees one lead. A concurrent duplicate queues behind the first (SQLite),
// or runs beside it and then waits on that constraint until the first commits (PostgreSQL): either
// way its own transaction rolls back on the constraint and it answers the first's answer. Failed
// requests leave no record (their transaction rolled back), so they can be retried with the same key.
//
// A record lives IDEMPOTENCY_TTL_HOURS (24 h by default), by the database's clock: after that the key
// is free again (a replay is a new request, whatever its body), and a background task deletes the
// expired records (purgeExpiredIdempotencyRecords).
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Engine } from '../../config/index.ts';
import { sqlNow, type Clock } from '../../db/clock.ts';
import type { Db, Prisma } from '../../db/client.ts';
import type { ScopedDb } from '../../db/scoped.ts';
import { apiError, invalidInput } from '../../errors.ts';
import { PURGE_BATCH, purgeInBatches, startPurgeTask, type BackgroundTask } from '../../db/background-task.ts';

export type { BackgroundTask } from '../../db/background-task.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** Visible ASCII: the draft makes the key a string; this keeps it printable and storable anywhere. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

/** The request's Idempotency-Key, or null when it has none. */
export function idempotencyKeyOf(request: Request): string | null {
  const raw = request.headers.get(IDEMPOTENCY_HEADER);
  if (raw === null) return null;
  // The draft sends the key as a structured-field string ("..."); a bare token is accepted as well.
  const key = raw.trim().replace(/^"(.*)"$/, '$1');
  if (key === '' || key.length > IDEMPOTENCY_KEY_MAX_LENGTH || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw invalidInput(IDEMPOTENCY_HEADER, `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters`);
  }
  return key;
}

/** JSON with object keys sorted, so the same body hashes the same however its keys were ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Which operation and which arguments: the same lead sent through REST or GraphQL hashes the same. */
export function requestHash(operation: string, input: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${canonicalJson(input)}`)
    .digest('hex');
}

const idempotencyKeyReused = () =>
  apiError(
    'BAD_USER_INPUT',
    'idempotency_key_reused',
    `This ${IDEMPOTENCY_HEADER} was already used by this API key for a different request; use a new key for a new request.`,
  );

export interface IdempotencyClaim {
  apiKeyId: number;
  key: string;
  hash: string;
  /** Records made before this moment have expired: their key is free. */
  expiredBefore: Date;
}

/** What the key holds now: the first request's answer, if it completed and has not expired. */
export interface StoredKey<T> {
  answer: { status: number; body: T } | null;
  /** An expired record still holds the key (the purge has not run yet): the claim frees it first. */
  expired: boolean;
}

/** The key's record as it stands; a different body under a live key is refused. */
export async function lookUpKey<T>(db: ScopedDb | Prisma.TransactionClient, claim: IdempotencyClaim): Promise<StoredKey<T>> {
  const record = await db.idempotencyRecord.findUnique({ where: { api_key_id_key: { api_key_id: claim.apiKeyId, key: claim.key } } });
  if (!record) return { answer: null, expired: false };
  if (record.created_at < claim.expiredBefore) return { answer: null, expired: true };
  if (record.request_hash !== claim.hash) throw idempotencyKeyReused();
  return { answer: { status: record.response_status, body: JSON.parse(record.response_body) as T }, expired: false };
}

/**
 * Last statement of the creating transaction: the answer a retry will get, under the key. An expired
 * record the lookup saw is deleted first; a record made meanwhile by a concurrent duplicate fails the
 * INSERT on the unique constraint, which rolls the whole transaction back.
 */
export async function recordAnswer(
  tx: Prisma.TransactionClient,
  claim: IdempotencyClaim,
  answer: { status: number; body: unknown; now: Date },
  stored: Pick<StoredKey<unknown>, 'expired'>,
): Promise<void> {
  if (stored.expired) {
    await tx.idempotencyRecord.deleteMany({
      where: { api_key_id: claim.apiKeyId, key: claim.key, created_at: { lt: claim.expiredBefore } },
    });
  }
  await tx.idempotencyRecord.create({
    data: {
      api_key_id: claim.apiKeyId,
      key: claim.key,
      request_hash: claim.hash,
      response_status: answer.status,
      response_body: JSON.stringify(answer.body),
      created_at: answer.now,
    },
    select: { id: true },
  });
}

/** The PostgreSQL advisory lock that lets one instance purge at a time (the others skip the round). */
const PURGE_LOCK_KEY = 0x1de0_7e11;

/** Deletes the records older than `ttlMs` by the database's clock, in batches (src/db/background-task.ts); answers how many. */
export function purgeExpiredIdempotencyRecords(db: Db, engine: Engine, now: Clock, ttlMs: number): Promise<number> {
  return purgeInBatches(db, engine, PURGE_LOCK_KEY, async (client) => {
    if (engine === 'postgresql') {
      return client.$executeRaw`
        DELETE FROM idempotency_records WHERE id IN (
          SELECT id FROM idempotency_records WHERE created_at < ${sqlNow(now)} - ${ttlMs} * interval '1 millisecond' LIMIT ${PURGE_BATCH})`;
    }
    const cutoff = new Date(now().getTime() - ttlMs);
    const expired = await client.idempotencyRecord.findMany({
      where: { created_at: { lt: cutoff } },
      select: { id: true },
      take: PURGE_BATCH,
    });
    return expired.length === 0
      ? 0
      : (await client.idempotencyRecord.deleteMany({ where: { id: { in: expired.map((row) => row.id) } } })).count;
  });
}

/** How often the background purge runs. */
const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;

/** Purges expired records now and then every `intervalMs` until stopped; failures are logged, never thrown. */
export function startIdempotencyPurge(
  options: { db: Db; engine: Engine; now: Clock; ttlMs: number; logger: Logger },
  intervalMs = IDEMPOTENCY_PURGE_INTERVAL_MS,
): BackgroundTask {
  const { db, engine, now, ttlMs, logger } = options;
  return startPurgeTask(() => purgeExpiredIdempotencyRecords(db, engine, now, ttlMs), intervalMs, logger, {
    purged: 'purged expired idempotency records',
    failed: 'purging expired idempotency records failed; retrying at the next round',
    detail: { ttl_hours: ttlMs / 3_600_000 },
  });
}
