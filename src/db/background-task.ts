// stop() waits for a round in progress, so the database is not closed under it.
import type { Logger } from 'pino';
import type { Engine } from '../config/index.ts';
import type { Db, Prisma } from './client.ts';

export interface BackgroundTask {
  stop(): Promise<void>;
}

export function startPeriodicTask(round: () => Promise<void>, intervalMs: number): BackgroundTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const run = async (): Promise<void> => {
    try {
      await round();
    } finally {
      if (!stopped) {
        timer = setTimeout(() => (current = run()), intervalMs);
        timer.unref();
      }
    }
  };
  current = run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current.catch(() => undefined);
    },
  };
}

/** Rows one purge statement deletes at most: short statements, so a purge never holds locks long. */
export const PURGE_BATCH = 1_000;

/** Deletes in batches until one comes back short; on PostgreSQL under an advisory lock, so one instance purges at a time. */
export async function purgeInBatches(
  db: Db,
  engine: Engine,
  lockKey: number,
  batch: (client: Prisma.TransactionClient) => Promise<number>,
): Promise<number> {
  let purged = 0;
  for (;;) {
    const deleted =
      engine === 'postgresql'
        ? await db.$transaction(async (tx) => {
            const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${lockKey}) AS locked`;
            return lock?.locked ? batch(tx) : 0;
          })
        : await batch(db);
    purged += deleted;
    if (deleted < PURGE_BATCH) return purged;
  }
}

/** Rounds told to claim nothing once stopping, so a shutdown leaves nothing leased for another instance to wait out. */
export function startDeliveryTask<Report extends { [K in keyof Report]: number }>(
  name: string,
  round: (mayClaim: () => boolean) => Promise<Report>,
  intervalMs: number,
  logger: Logger,
): BackgroundTask {
  let stopped = false;
  const task = startPeriodicTask(async () => {
    try {
      const report: Record<string, number> = { ...(await round(() => !stopped)) };
      if (Object.values(report).some((count) => count > 0)) logger.info(report, `${name} delivery`);
    } catch (error) {
      logger.error({ err: error }, `${name} delivery round failed`);
    }
  }, intervalMs);
  return {
    stop() {
      stopped = true;
      return task.stop();
    },
  };
}

export function startPurgeTask(
  purge: () => Promise<number>,
  intervalMs: number,
  logger: Logger,
  report: { purged: string; failed: string; detail: Record<string, unknown> },
): BackgroundTask {
  return startPeriodicTask(async () => {
    try {
      const purged = await purge();
      if (purged > 0) logger.info({ purged, ...report.detail }, report.purged);
    } catch (error) {
      logger.warn({ err: error }, report.failed);
    }
  }, intervalMs);
}
