// A request must cost no database write of its own, so calls are counted in memory and added to the
// table periodically as upsert-increments (any number of instances add to one row); a failed flush
// keeps its counts for the next.
import type { Logger } from 'pino';
import type { Engine } from '../config/index.ts';
import type { Clock } from '../db/clock.ts';
import { Prisma } from '../generated/prisma/sqlite/client.ts';
import type { Db } from '../db/client.ts';
import { PURGE_BATCH, purgeInBatches, startPurgeTask, type BackgroundTask } from '../db/background-task.ts';

export const NO_OPERATION = '-';

export type KeyCall = { apiKeyId: number; operation: string; door: 'rest' | 'graphql'; status: number };

type Counter = KeyCall & { minute: Date; calls: number; lastAtMs: number };

const MINUTE_MS = 60_000;
export const KEY_CALL_FLUSH_INTERVAL_MS = 5_000;
/** Past it, new combinations are dropped (and logged) rather than let memory grow without end while the database is down. */
const MAX_BUFFERED_COUNTERS = 10_000;
/** Well under PostgreSQL's parameter limit. */
const ROWS_PER_STATEMENT = 500;

type KeyCallDeps = { db: Db; engine: Engine; now: Clock; logger: Logger };

export interface KeyCallLog {
  record(call: KeyCall): void;
  /** Flushes never overlap. */
  flush(): Promise<number>;
  stop(): Promise<void>;
}

/** The counters as rows of one INSERT … ON CONFLICT: a minute's row gains the calls, and keeps the latest time. */
async function upsertPostgres(db: Db, counters: readonly Counter[]): Promise<void> {
  for (let start = 0; start < counters.length; start += ROWS_PER_STATEMENT) {
    const rows = counters.slice(start, start + ROWS_PER_STATEMENT).map(
      (counter) =>
        // Timestamps are written as UTC instants into the zone-less columns, as Prisma writes them.
        Prisma.sql`(${counter.apiKeyId}, (${counter.minute.toISOString()}::timestamptz AT TIME ZONE 'UTC'), ${counter.operation}, ${counter.door}, ${counter.status}, ${counter.calls}, (${new Date(counter.lastAtMs).toISOString()}::timestamptz AT TIME ZONE 'UTC'))`,
    );
    await db.$executeRaw`
      INSERT INTO api_key_calls (api_key_id, minute, operation, door, status, calls, last_at)
      VALUES ${Prisma.join(rows)}
      ON CONFLICT (api_key_id, minute, operation, door, status)
      DO UPDATE SET calls = api_key_calls.calls + EXCLUDED.calls, last_at = GREATEST(api_key_calls.last_at, EXCLUDED.last_at)`;
  }
}

/** A full buffer on a loaded machine exceeds Prisma's default transaction timeout. */
const SQLITE_FLUSH_TIMEOUT_MS = 60_000;

/** One upsert at a time, never one batch: Prisma compiles and keeps a plan per distinct batch, which grew memory per flush size. */
async function upsertSqlite(db: Db, counters: readonly Counter[]): Promise<void> {
  await db.$transaction(
    async (tx) => {
      for (const { apiKeyId: api_key_id, minute, operation, door, status, calls, lastAtMs } of counters) {
        const id = { api_key_id, minute, operation, door, status };
        const last_at = new Date(lastAtMs);
        await tx.apiKeyCall.upsert({
          where: { api_key_id_minute_operation_door_status: id },
          create: { ...id, calls, last_at },
          update: { calls: { increment: calls }, last_at },
          select: { api_key_id: true },
        });
      }
    },
    { maxWait: SQLITE_FLUSH_TIMEOUT_MS, timeout: SQLITE_FLUSH_TIMEOUT_MS },
  );
}

export function createKeyCallLog(options: KeyCallDeps & { flushIntervalMs: number | null }): KeyCallLog {
  const { db, engine, now, logger } = options;
  let pending = new Map<string, Counter>();
  let dropped = 0;
  let flushing: Promise<number> = Promise.resolve(0);

  /** A counter object is made only for a combination not kept yet: nearly every call adds to one that is. */
  function keep(name: string, calls: number, lastAtMs: number, counter: () => Counter): void {
    const current = pending.get(name);
    if (current) {
      current.calls += calls;
      current.lastAtMs = Math.max(current.lastAtMs, lastAtMs);
    } else if (pending.size < MAX_BUFFERED_COUNTERS) {
      pending.set(name, counter());
    } else {
      dropped += calls;
    }
  }

  async function writeOut(): Promise<number> {
    if (dropped > 0) {
      logger.warn({ calls: dropped }, 'API key calls were not recorded: the call log was full while the database did not answer');
      dropped = 0;
    }
    if (pending.size === 0) return 0;
    const batch = pending;
    pending = new Map();
    const counters = [...batch.values()];
    try {
      await (engine === 'postgresql' ? upsertPostgres(db, counters) : upsertSqlite(db, counters));
      return counters.length;
    } catch (error) {
      for (const [name, counter] of batch) keep(name, counter.calls, counter.lastAtMs, () => counter);
      logger.warn({ err: error, counters: counters.length }, 'writing the API key call log failed; keeping the counts for the next flush');
      return 0;
    }
  }

  const flush = (): Promise<number> => {
    flushing = flushing.then(writeOut, writeOut);
    return flushing;
  };

  let timer: NodeJS.Timeout | undefined;
  if (options.flushIntervalMs !== null) {
    timer = setInterval(() => void flush(), options.flushIntervalMs);
    timer.unref();
  }

  return {
    record(call) {
      const atMs = now().getTime();
      const minuteMs = atMs - (atMs % MINUTE_MS);
      const name = `${minuteMs}\u0000${call.apiKeyId}\u0000${call.door}\u0000${call.status}\u0000${call.operation}`;
      keep(name, 1, atMs, () => ({ ...call, minute: new Date(minuteMs), calls: 1, lastAtMs: atMs }));
    },
    flush,
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}

/** One instance purges at a time; the others skip the round. */
const PURGE_LOCK_KEY = 0x4b_ca11;
const KEY_CALL_PURGE_INTERVAL_MS = 60 * 60_000;

export function purgeOldKeyCalls(db: Db, engine: Engine, now: Clock, retentionMs: number): Promise<number> {
  const cutoff = new Date(now().getTime() - retentionMs);
  return purgeInBatches(db, engine, PURGE_LOCK_KEY, (client) =>
    engine === 'postgresql'
      ? client.$executeRaw`
          DELETE FROM api_key_calls WHERE ctid IN (
            SELECT ctid FROM api_key_calls WHERE minute < (${cutoff.toISOString()}::timestamptz AT TIME ZONE 'UTC') LIMIT ${PURGE_BATCH})`
      : // One process writes a SQLite file: nothing else waits on this statement's lock.
        client.apiKeyCall.deleteMany({ where: { minute: { lt: cutoff } } }).then((result) => result.count),
  );
}

export function startKeyCallPurge(
  { db, engine, now, retentionMs, logger }: KeyCallDeps & { retentionMs: number },
  intervalMs = KEY_CALL_PURGE_INTERVAL_MS,
): BackgroundTask {
  return startPurgeTask(() => purgeOldKeyCalls(db, engine, now, retentionMs), intervalMs, logger, {
    purged: 'purged old API key call counts',
    failed: 'purging old API key call counts failed; retrying at the next round',
    detail: { retention_days: retentionMs / 86_400_000 },
  });
}

export interface KeyCallSummaryRow {
  operation: string;
  status: number;
  calls: number;
  rest: number;
  graphql: number;
  last_seen_at: string;
}

/** Counts still in an instance's memory are not in it yet. */
export async function summariseKeyCalls(db: Db, apiKeyId: number, since: Date): Promise<KeyCallSummaryRow[]> {
  // The minute a call falls in starts before the call: the minute holding `since` is counted whole.
  const fromMinute = new Date(since.getTime() - (since.getTime() % MINUTE_MS));
  const groups = await db.apiKeyCall.groupBy({
    by: ['operation', 'status', 'door'],
    where: { api_key_id: apiKeyId, minute: { gte: fromMinute } },
    _sum: { calls: true },
    _max: { last_at: true },
  });
  const rows = new Map<string, KeyCallSummaryRow>();
  for (const group of groups) {
    const name = `${group.operation}\u0000${group.status}`;
    const row = rows.get(name) ?? { operation: group.operation, status: group.status, calls: 0, rest: 0, graphql: 0, last_seen_at: '' };
    const calls = group._sum.calls ?? 0;
    row.calls += calls;
    if (group.door === 'rest') row.rest += calls;
    else row.graphql += calls;
    const lastSeen = group._max.last_at?.toISOString() ?? '';
    if (lastSeen > row.last_seen_at) row.last_seen_at = lastSeen;
    rows.set(name, row);
  }
  return [...rows.values()].sort((a, b) => (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : a.status - b.status));
}
