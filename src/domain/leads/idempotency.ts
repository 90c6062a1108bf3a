// A retry with the same key and body gets the first answer; another body is 422. For leads the
// record is the creating transaction's last INSERT, on the unique constraint that guarantees one
// lead, so a concurrent duplicate rolls back and answers the first's answer. Other writes cannot
// join the write's transaction, so they claim the key first with a pending record; a failed write
// frees it, and a claim never completed is taken over after ABANDONED_CLAIM_MS.
import { hash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Engine } from '../../config/index.ts';
import { sqlNow, type Clock } from '../../db/clock.ts';
import { isUniqueViolation, type Db } from '../../db/client.ts';
import type { ScopedDb, ScopedTx } from '../../db/scoped.ts';
import { apiError, conflict, invalidInput } from '../../errors.ts';
import { PURGE_BATCH, purgeInBatches, startPurgeTask, type BackgroundTask } from '../../db/background-task.ts';
import { isPlainObject } from '../../lib/json.ts';

export type { BackgroundTask } from '../../db/background-task.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** The draft makes the key a string; this keeps it printable and storable anywhere. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]+$/;

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

/** Keys sorted, so the same body hashes the same however its keys were ordered. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  // A parsed Date argument has no own keys: without this, every date would hash alike.
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (isPlainObject(value)) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The same lead sent through REST or GraphQL hashes the same. */
export function requestHash(operation: string, input: unknown): string {
  return hash('sha256', `${operation}\n${canonicalJson(input)}`, 'hex');
}

export const idempotencyKeyReused = () =>
  apiError(
    'BAD_USER_INPUT',
    'idempotency_key_reused',
    `This ${IDEMPOTENCY_HEADER} was already used by this API key for a different request; use a new key for a new request.`,
  );

export type IdempotencyClaim = { apiKeyId: number; key: string; hash: string; expiredBefore: Date };

export interface KeyLookUp<T> {
  claim: IdempotencyClaim;
  answer: T | null;
  /** The purge may not have run yet: the claim frees an expired record first. */
  expired: boolean;
}

const keyColumns = (claim: IdempotencyClaim) => ({ api_key_id: claim.apiKeyId, key: claim.key });

function recordOf(claim: IdempotencyClaim, response_status: number, response_body: string, created_at: Date) {
  return { ...keyColumns(claim), request_hash: claim.hash, response_status, response_body, created_at };
}

export async function lookUpKey<T>(db: ScopedTx, claim: IdempotencyClaim): Promise<KeyLookUp<T>> {
  const record = await db.idempotencyRecord.findUnique({ where: { api_key_id_key: keyColumns(claim) } });
  if (!record || record.created_at < claim.expiredBefore) return { claim, answer: null, expired: record !== null };
  if (record.request_hash !== claim.hash) throw idempotencyKeyReused();
  return { claim, answer: JSON.parse(record.response_body) as T, expired: false };
}

/** A record made meanwhile by a concurrent duplicate fails the INSERT, which rolls the whole transaction back. */
export async function recordAnswer(
  tx: ScopedTx,
  { claim, expired }: KeyLookUp<unknown>,
  status: number,
  body: unknown,
  now: Date,
): Promise<void> {
  if (expired) await tx.idempotencyRecord.deleteMany({ where: { ...keyColumns(claim), created_at: { lt: claim.expiredBefore } } });
  await tx.idempotencyRecord.create({ data: recordOf(claim, status, JSON.stringify(body), now), select: { id: true } });
}

const PENDING_STATUS = 0;
/** The door decides the answer's own status. */
const ANSWERED_STATUS = 200;
const DUPLICATE_WAIT_MS = 5_000;
const DUPLICATE_POLL_MS = 50;
/** Far longer than any write runs, so a pending claim this old was cut off and a retry takes it over. */
const ABANDONED_CLAIM_MS = 120_000;

const idempotencyKeyInProgress = () =>
  conflict(
    'idempotency_key_in_progress',
    `A request with this ${IDEMPOTENCY_HEADER} has not answered yet; retry it in a few seconds. If it stays so, the first request was cut off: check whether its change was made, and send a new key if it was not.`,
  );

/** Dates kept as Dates: a Date field would come back as text otherwise. */
function answerText(answer: unknown): string {
  return JSON.stringify(answer, function keepDates(this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : value;
  });
}

function answerOf<T>(text: string): T {
  return JSON.parse(text, (_key, value: unknown) =>
    isPlainObject(value) && typeof value.$date === 'string' && Object.keys(value).length === 1 ? new Date(value.$date) : value,
  ) as T;
}

interface KeyedWrite<T> {
  db: ScopedDb;
  claim: IdempotencyClaim;
  now: Date;
  run: () => Promise<T>;
  seal: (text: string) => string;
  open: (stored: string) => string;
  logger: Pick<Logger, 'warn'>;
}

export async function underIdempotencyKey<T>(write: KeyedWrite<T>): Promise<T> {
  const { db, claim } = write;
  const where = { api_key_id_key: keyColumns(claim) };
  const waitUntil = Date.now() + DUPLICATE_WAIT_MS;
  let claimedId: number | null = null;
  while (claimedId === null) {
    const record = await db.idempotencyRecord.findUnique({ where });
    if (record && record.created_at < claim.expiredBefore) {
      await db.idempotencyRecord.deleteMany({ where: { id: record.id, created_at: { lt: claim.expiredBefore } } });
      continue;
    }
    if (record) {
      if (record.request_hash !== claim.hash) throw idempotencyKeyReused();
      if (record.response_status !== PENDING_STATUS) return answerOf<T>(write.open(record.response_body));
      if (record.created_at.getTime() < write.now.getTime() - ABANDONED_CLAIM_MS) {
        await db.idempotencyRecord.deleteMany({ where: { id: record.id, response_status: PENDING_STATUS } });
        continue;
      }
      if (Date.now() >= waitUntil) throw idempotencyKeyInProgress();
      await new Promise((resolve) => setTimeout(resolve, DUPLICATE_POLL_MS));
      continue;
    }
    try {
      const data = recordOf(claim, PENDING_STATUS, '', write.now);
      claimedId = (await db.idempotencyRecord.create({ data, select: { id: true } })).id;
    } catch (error) {
      // Another request with this key claimed it a moment before: read what it holds.
      if (!isUniqueViolation(error)) throw error;
    }
  }
  let answer: T;
  try {
    answer = await write.run();
  } catch (error) {
    // Nothing was written (a write fails before it changes anything): the key is free again.
    await db.idempotencyRecord.deleteMany({ where: { id: claimedId, response_status: PENDING_STATUS } });
    throw error;
  }
  try {
    await db.idempotencyRecord.update({
      where: { id: claimedId },
      data: { response_status: ANSWERED_STATUS, response_body: write.seal(answerText(answer)) },
    });
  } catch (error) {
    // The write is made and is answered; a retry with this key is told 409 rather than writing twice.
    write.logger.warn({ err: error, idempotency_key_record: claimedId }, 'storing the answer of an Idempotency-Key failed');
  }
  return answer;
}

/** One instance purges at a time; the others skip the round. */
const PURGE_LOCK_KEY = 0x1de0_7e11;

/** Each batch is one range of the created_at index, so a round never reads the live records. */
export function purgeExpiredIdempotencyRecords(db: Db, engine: Engine, now: Clock, ttlMs: number): Promise<number> {
  return purgeInBatches(db, engine, PURGE_LOCK_KEY, async (client) => {
    if (engine === 'postgresql') {
      return client.$executeRaw`
        DELETE FROM idempotency_records WHERE id IN (
          SELECT id FROM idempotency_records WHERE created_at < ${sqlNow(now)} - ${ttlMs} * interval '1 millisecond'
          ORDER BY created_at LIMIT ${PURGE_BATCH})`;
    }
    const cutoff = new Date(now().getTime() - ttlMs);
    return (await client.idempotencyRecord.deleteMany({ where: { created_at: { lt: cutoff } }, limit: PURGE_BATCH })).count;
  });
}

const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;

export function startIdempotencyPurge(
  { db, engine, now, ttlMs, logger }: { db: Db; engine: Engine; now: Clock; ttlMs: number; logger: Logger },
  intervalMs = IDEMPOTENCY_PURGE_INTERVAL_MS,
): BackgroundTask {
  return startPurgeTask(() => purgeExpiredIdempotencyRecords(db, engine, now, ttlMs), intervalMs, logger, {
    purged: 'purged expired idempotency records',
    failed: 'purging expired idempotency records failed; retrying at the next round',
    detail: { ttl_hours: ttlMs / 3_600_000 },
  });
}
