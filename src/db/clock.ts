// One clock for every rule that compares times across requests and instances: token expiry, the
// phone-call de-duplication window, the 3-day lead rule, outbox leases, idempotency expiry. Each
// instance runs on its own machine, whose clock may be off by minutes; the database is the one
// clock they all share. So the service's `now()` is the database's time:
//
// - at start, and every CLOCK_SYNC_INTERVAL_MS after, the instance reads the database's clock and
//   learns the offset between it and its own (the sample with the shortest round trip, its
//   midpoint), so `now()` stays synchronous and costs no statement per request: one small
//   statement a minute per instance;
// - where one statement decides on PostgreSQL (the outbox claim, the idempotency purge), the SQL
//   uses the database's own `now()` (sqlNow below), with no offset at all.
//
// On SQLite the database runs in this process, so the offset is that of SQLite's clock (the
// operating system's) to JavaScript's Date, which is 0 unless something shifts Date.
import type { Logger } from 'pino';
import type { Engine } from '../config/index.ts';
import { Prisma } from '../generated/prisma/sqlite/client.ts';
import type { Db } from './client.ts';

/** The time as the rules see it. */
export type Clock = () => Date;

/** How often an instance re-learns the offset (clocks drift, and get stepped by NTP). */
const CLOCK_SYNC_INTERVAL_MS = 60_000;
/** Samples per sync; the one with the shortest round trip is kept (the least queueing in it). */
const SAMPLES_PER_SYNC = 3;

interface DatabaseClock {
  /** The database's time: this process's clock corrected by the last offset learned. */
  now: Clock;
  /** Database time minus process time, in milliseconds, as last learned. */
  offsetMs(): number;
  /** Reads the database's clock and learns the offset again. */
  sync(): Promise<void>;
  /** Re-syncs every CLOCK_SYNC_INTERVAL_MS until stopped (a failed sync keeps the last offset, logged). */
  start(logger: Logger, intervalMs?: number): void;
  stop(): void;
}

/** Clocks that are the database's: SQL may use the database's own now() in their place. */
const databaseClocks = new WeakSet<Clock>();

/** Milliseconds since the epoch on the database's own clock, read in one statement. */
async function readDatabaseMs(db: Db, engine: Engine): Promise<number> {
  // clock_timestamp(), not now(): now() is the start of the transaction, not the moment of reading.
  const rows =
    engine === 'postgresql'
      ? await db.$queryRaw<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`
      : await db.$queryRaw<{ ms: number }[]>`SELECT (julianday('now') - 2440587.5) * 86400000.0 AS ms`;
  const ms = Number(rows[0]?.ms);
  if (!Number.isFinite(ms)) throw new Error('the database did not answer its time');
  return ms;
}

/**
 * The database's clock for one instance. `processNow` is this process's clock (tests give a skewed
 * one); call sync() once before serving.
 */
export function createDatabaseClock(db: Db, engine: Engine, processNow: () => number = Date.now): DatabaseClock {
  let offset = 0;
  let timer: NodeJS.Timeout | undefined;
  const now: Clock = () => new Date(processNow() + offset);
  databaseClocks.add(now);

  const sync = async (): Promise<void> => {
    let best: { roundTrip: number; offset: number } | null = null;
    for (let sample = 0; sample < SAMPLES_PER_SYNC; sample += 1) {
      const sent = processNow();
      const databaseMs = await readDatabaseMs(db, engine);
      const received = processNow();
      const roundTrip = received - sent;
      if (!best || roundTrip < best.roundTrip) best = { roundTrip, offset: databaseMs - (sent + received) / 2 };
    }
    if (best) offset = Math.round(best.offset);
  };

  return {
    now,
    offsetMs: () => offset,
    sync,
    start(logger, intervalMs = CLOCK_SYNC_INTERVAL_MS) {
      if (timer) return;
      timer = setInterval(() => {
        sync().catch((error: unknown) =>
          logger.warn({ err: error, offset_ms: offset }, 'reading the database clock failed; keeping the last offset'),
        );
      }, intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}

/**
 * "Now" inside a PostgreSQL statement, as the UTC timestamp the columns hold (TIMESTAMP(3) without a
 * zone): the database's own now() when `clock` is the database's, so the statement decides by the
 * database's time alone; otherwise the clock's value (tests drive time with their own clock).
 */
export function sqlNow(clock: Clock): Prisma.Sql {
  if (databaseClocks.has(clock)) return Prisma.sql`(now() AT TIME ZONE 'UTC')`;
  return Prisma.sql`(${clock().toISOString()}::timestamptz AT TIME ZONE 'UTC')`;
}

/** Reads the database's time once: for the command-line tools, which run for a moment. */
export async function databaseNow(db: Db, engine: Engine): Promise<Date> {
  const clock = createDatabaseClock(db, engine);
  await clock.sync();
  return clock.now();
}
