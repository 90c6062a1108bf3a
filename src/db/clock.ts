// Every instance's `now()` is the database's time, the one clock instances share: the offset to it is
// learned at start and re-learned periodically, so `now()` costs no statement per request.
import type { Logger } from 'pino';
import type { Engine } from '../config/index.ts';
import { Prisma } from '../generated/prisma/sqlite/client.ts';
import type { Db } from './client.ts';

export type Clock = () => Date;

const CLOCK_SYNC_INTERVAL_MS = 60_000;
// The sample with the shortest round trip has the least queueing in it.
const SAMPLES_PER_SYNC = 3;

const databaseClocks = new WeakSet<Clock>();

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

export function createDatabaseClock(db: Db, engine: Engine, processNow: () => number = Date.now) {
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
    start(logger: Logger, intervalMs = CLOCK_SYNC_INTERVAL_MS) {
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

/** "Now" inside a PostgreSQL statement: the database's own now() when `clock` is the database's (tests drive their own). */
export function sqlNow(clock: Clock): Prisma.Sql {
  if (databaseClocks.has(clock)) return Prisma.sql`(now() AT TIME ZONE 'UTC')`;
  return Prisma.sql`(${clock().toISOString()}::timestamptz AT TIME ZONE 'UTC')`;
}

export async function databaseNow(db: Db, engine: Engine): Promise<Date> {
  const clock = createDatabaseClock(db, engine);
  await clock.sync();
  return clock.now();
}
