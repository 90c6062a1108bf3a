// Removes bytes a killed process left between storing a lead's files and committing it: only pending
// records past the grace period and referenced by no lead, so it never walks a store another
// deployment shares. A lease in shared_settings lets one instance sweep at a time and records the last sweep.
import type { Logger } from 'pino';
import { startPeriodicTask, type BackgroundTask } from '../../db/background-task.ts';
import { isUniqueViolation, type Db } from '../../db/client.ts';
import type { FileStorage } from '../../storage/file-storage.ts';
import { jsonObject } from '../json-columns.ts';
import { parsedJson } from '../../lib/json.ts';

const LEASE_SETTING = 'file_sweep_lease';
const FILE_SWEEP_INTERVAL_MS = 60 * 60_000;
/** The holder renews it after every batch. */
const LEASE_MS = 10 * 60_000;
const BATCH = 500;

export type FileSweepDeps = { db: Db; files: FileStorage; now: () => Date; logger: Logger; graceMs: number; holder: string };

type Lease = { holder: string | null; until: number; sweptAt: number };

function readLease(value: string | undefined): Lease {
  const lease: Partial<Record<keyof Lease, unknown>> = jsonObject(parsedJson(value));
  return {
    holder: typeof lease.holder === 'string' ? lease.holder : null,
    until: Number(lease.until) || 0,
    sweptAt: Number(lease.sweptAt) || 0,
  };
}

async function swapLease(db: Db, seen: string | undefined, next: Lease): Promise<boolean> {
  const value = JSON.stringify(next);
  if (seen === undefined) {
    try {
      await db.sharedSetting.create({ data: { name: LEASE_SETTING, value } });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }
  const { count } = await db.sharedSetting.updateMany({ where: { name: LEASE_SETTING, value: seen }, data: { value } });
  return count === 1;
}

type SweepOutcome = { swept: true; removed: number } | { swept: false; reason: 'held' | 'not_due' | 'lost_lease' };

export async function sweepOrphanedFiles(deps: FileSweepDeps, intervalMs = FILE_SWEEP_INTERVAL_MS): Promise<SweepOutcome> {
  const { db, files, now, graceMs, holder } = deps;
  const row = await db.sharedSetting.findUnique({ where: { name: LEASE_SETTING }, select: { value: true } });
  const lease = readLease(row?.value);
  const startedAt = now().getTime();
  if (lease.holder !== null && lease.until > startedAt) return { swept: false, reason: 'held' };
  if (startedAt - lease.sweptAt < intervalMs) return { swept: false, reason: 'not_due' };
  let held: Lease = { holder, until: startedAt + LEASE_MS, sweptAt: lease.sweptAt };
  if (!(await swapLease(db, row?.value, held))) return { swept: false, reason: 'held' };

  /** False when another instance took it over (this one was too slow). */
  const renew = async (): Promise<boolean> => {
    const next = { ...held, until: now().getTime() + LEASE_MS };
    if (!(await swapLease(db, JSON.stringify(held), next))) return false;
    held = next;
    return true;
  };

  const cutoff = new Date(startedAt - graceMs);
  let removed = 0;
  for (;;) {
    const due = await db.pendingLeadFile.findMany({
      where: { created_at: { lt: cutoff } },
      select: { storage_key: true },
      orderBy: { created_at: 'asc' },
      take: BATCH,
    });
    if (due.length === 0) break;
    const keys = due.map(({ storage_key }) => storage_key);
    // A lead that committed and whose writer died before clearing the record keeps its files.
    const referenced = new Set(
      (await db.leadFile.findMany({ where: { storage_key: { in: keys } }, select: { storage_key: true } })).map(
        ({ storage_key }) => storage_key,
      ),
    );
    for (const key of keys) {
      if (referenced.has(key)) continue;
      await files.delete(key);
      removed += 1;
    }
    await db.pendingLeadFile.deleteMany({ where: { storage_key: { in: keys } } });
    if (!(await renew())) return { swept: false, reason: 'lost_lease' };
    if (due.length < BATCH) break;
  }
  await swapLease(db, JSON.stringify(held), { holder: null, until: 0, sweptAt: now().getTime() });
  return { swept: true, removed };
}

export function startFileSweep(deps: FileSweepDeps, intervalMs = FILE_SWEEP_INTERVAL_MS): BackgroundTask {
  // Asked far more often than a sweep is due: the lease decides, so a missed sweep is done by another instance soon.
  const askEveryMs = Math.min(intervalMs, 5 * 60_000);
  return startPeriodicTask(async () => {
    try {
      const outcome = await sweepOrphanedFiles(deps, intervalMs);
      if (outcome.swept && outcome.removed > 0)
        deps.logger.info({ removed: outcome.removed, storage: deps.files.kind }, 'removed lead files no lead references');
      if (!outcome.swept && outcome.reason === 'lost_lease')
        deps.logger.warn('the file sweep took longer than its lease: another instance goes on with it');
    } catch (error) {
      deps.logger.warn({ err: error }, 'sweeping orphaned lead files failed; the next round retries');
    }
  }, askEveryMs);
}
