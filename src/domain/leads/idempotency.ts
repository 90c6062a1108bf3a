// Idempotency-Key for lead creation (draft-ietf-httpapi-idempotency-key-header): a retried POST with
// the same key from the same API key and the same body gets the first answer back and creates
// nothing; the same key with a different body is a 422 idempotency_key_reused. The record is written
// in the creating transaction, claimed first, so a concurrent duplicate waits on (PostgreSQL) or
// queues behind (SQLite) the first and then finds its answer; the unique (api_key_id, key) constraint
// is what guarantees one lead. Failed requests leave no record (their transaction rolled back), so
// they can be retried with the same key.
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
const IN_PROGRESS = 0;

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

/** The stored answer for this key, if the first request completed and has not expired; a different body is refused. */
export async function storedAnswer<T>(
  db: ScopedDb | Prisma.TransactionClient,
  claim: IdempotencyClaim,
): Promise<{ status: number; body: T } | null> {
  const record = await db.idempotencyRecord.findUnique({ where: { api_key_id_key: { api_key_id: claim.apiKeyId, key: claim.key } } });
  if (!record || record.created_at < claim.expiredBefore) return null;
  if (record.request_hash !== claim.hash) throw idempotencyKeyReused();
  // Status 0 is a claim whose transaction has not finished: SQLite's one connection lets it be seen.
  // The caller goes on to its own transaction, which queues behind that one and then finds the answer.
  if (record.response_status === IN_PROGRESS) return null;
  return { status: record.response_status, body: JSON.parse(record.response_body) as T };
}

/**
 * First statements of the creating transaction: frees the key if its record has expired (the purge
 * may not have run yet), then takes it, or fails on the unique constraint.
 */
export async function claimKey(tx: Prisma.TransactionClient, claim: IdempotencyClaim, now: Date): Promise<void> {
  await tx.idempotencyRecord.deleteMany({ where: { api_key_id: claim.apiKeyId, key: claim.key, created_at: { lt: claim.expiredBefore } } });
  await tx.idempotencyRecord.create({
    data: {
      api_key_id: claim.apiKeyId,
      key: claim.key,
      request_hash: claim.hash,
      response_status: IN_PROGRESS,
      response_body: 'null',
      created_at: now,
    },
  });
}

/** Last statement of the creating transaction: the answer a retry will get. */
export async function recordAnswer(tx: Prisma.TransactionClient, claim: IdempotencyClaim, status: number, body: unknown): Promise<void> {
  await tx.idempotencyRecord.update({
    where: { api_key_id_key: { api_key_id: claim.apiKeyId, key: claim.key } },
    data: { response_status: status, response_body: JSON.stringify(body) },
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
