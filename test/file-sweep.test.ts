// The sweep of orphaned attachment bytes (src/domain/leads/file-sweep.ts), on every store: bytes
// stored without a committed lead (as a kill -9 between storing a lead's files and committing the
// lead leaves them) are removed once older than the grace period; bytes a lead references, recent
// bytes, and bytes this database never stored are kept; a lead written in full leaves nothing
// pending; two instances sweeping at the same moment do not both sweep.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { storeLeadFiles } from '../src/domain/leads/files.ts';
import { sweepOrphanedFiles, type FileSweepDeps } from '../src/domain/leads/file-sweep.ts';
import { DatabaseStorage, LocalDirectoryStorage, S3Storage, type FileStorage } from '../src/storage/file-storage.ts';
import { createTestApp, testSettings, type TestApp } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { makeStoredLead, PDF_BYTES, samplePayload, tempStorageDir } from './support/fixtures-leads.ts';
import { startS3Server, useS3Credentials, type TestS3Server } from './support/s3-server.ts';

const GRACE_MS = 60 * 60_000;
const HOUR_MS = 60 * 60_000;
const silent = pino({ level: 'silent' });

let app: TestApp;
let dealershipId: number;
let s3: TestS3Server;
let restoreEnvironment: () => void = () => undefined;
const BUCKET = 'swept-files';

beforeAll(async () => {
  app = await createTestApp();
  dealershipId = (await makeDealership(app.db)).id;
  s3 = await startS3Server([BUCKET]);
  onFileEnd(() => s3.close());
  restoreEnvironment = useS3Credentials(s3);
});

afterAll(() => restoreEnvironment());

/** Every kind of store, as createFileStorage makes it. */
const STORES: Record<FileStorage['kind'], () => FileStorage> = {
  local() {
    const dir = tempStorageDir();
    onFileEnd(() => dir.remove());
    return new LocalDirectoryStorage(dir.dir);
  },
  database: () => new DatabaseStorage(app.db),
  s3() {
    const config = loadConfig({
      ...testSettings,
      DATABASE_URL: app.config.databaseUrl,
      FILE_STORAGE: 's3',
      S3_BUCKET: BUCKET,
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_KEY_PREFIX: 'gateway',
    });
    return new S3Storage(config.s3!);
  },
};

/** Makes the file look stored `ms` ago (its pending record's time, by the database's clock). */
const age = (key: string, ms: number) =>
  app.db.pendingLeadFile.update({ where: { storage_key: key }, data: { created_at: new Date(Date.now() - ms) } });

/** Stores one file as createLead does (before its transaction), and answers its key. */
async function stored(files: FileStorage): Promise<string> {
  const [file] = await storeLeadFiles(
    app.db,
    files,
    [{ file_type: 'other', content_type: 'application/pdf', byte_size: PDF_BYTES.length, sha256: 'x', bytes: PDF_BYTES }],
    new Date(),
  );
  return file!.storage_key;
}

function sweeperDeps(files: FileStorage, holder: string): FileSweepDeps {
  return { db: app.db, files, now: () => new Date(), logger: silent, graceMs: GRACE_MS, holder };
}

/** Every sweep below is due: the lease's record of the last sweep is cleared first. */
const clearLease = () => app.db.sharedSetting.deleteMany({ where: { name: 'file_sweep_lease' } });

describe.each(Object.keys(STORES) as FileStorage['kind'][])('the %s store', (kind) => {
  it('removes bytes no committed lead references once older than the grace period, and keeps referenced, recent and foreign ones', async () => {
    const files = STORES[kind]();
    const orphan = await stored(files);
    const recentOrphan = await stored(files);
    // Committed, and its writer killed before it cleared the pending record.
    const referenced = await stored(files);
    const lead = await makeStoredLead(app.db, dealershipId);
    await app.db.leadFile.create({
      data: { lead_id: lead.id, file_type: 'other', storage_key: referenced, byte_size: PDF_BYTES.length, sha256: 'x' },
    });
    // Stored by another deployment (or a developer's other database) in the same place: never this sweep's.
    const foreign = `leads/2020/01/${kind}-stored-elsewhere`;
    await files.put(foreign, PDF_BYTES);
    await age(orphan, GRACE_MS + HOUR_MS);
    await age(referenced, GRACE_MS + HOUR_MS);
    await age(recentOrphan, GRACE_MS - 5 * 60_000);

    await clearLease();
    expect(await sweepOrphanedFiles(sweeperDeps(files, 'instance-a'))).toEqual({ swept: true, removed: 1 });
    expect(await files.get(orphan)).toBeNull();
    for (const kept of [recentOrphan, referenced, foreign]) expect(await files.get(kept)).toEqual(new Uint8Array(PDF_BYTES));
    // What was looked at is no longer pending; the recent one still is.
    expect(
      (await app.db.pendingLeadFile.findMany({ where: { storage_key: { in: [orphan, referenced, recentOrphan] } } })).map(
        (row) => row.storage_key,
      ),
    ).toEqual([recentOrphan]);
    // The next sweep is not due before the interval: another instance starting now does not sweep again.
    expect(await sweepOrphanedFiles(sweeperDeps(files, 'instance-b'))).toEqual({ swept: false, reason: 'not_due' });
  });
});

describe('lead writes', () => {
  it('leave nothing pending once the lead is committed, nor when it fails', async () => {
    const { key } = await makeKey(app.db, { permissions: ['create:lead'] });
    const file = { file_type: 'other', file: PDF_BYTES.toString('base64') };
    const pendingBefore = await app.db.pendingLeadFile.count();
    const created = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: { lead: samplePayload(dealershipId, { email: 'swept@example.com', lead_files_attributes: [file] }) },
    });
    expect(created.status).toBe(201);
    // A dealership that does not exist fails inside the transaction, after the bytes were stored.
    const failed = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: { lead: samplePayload(999_999, { lead_files_attributes: [file] }) },
    });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(await app.db.pendingLeadFile.count()).toBe(pendingBefore);
    expect(await app.db.leadFile.count({ where: { lead: { email: 'swept@example.com' } } })).toBe(1);
  });
});

describe('two instances', () => {
  it('do not both sweep at once: the one that took the lease sweeps, the other finds it held', async () => {
    const files = STORES.database();
    const orphans = [await stored(files), await stored(files)];
    for (const key of orphans) await age(key, GRACE_MS + HOUR_MS);
    // A store whose deletes take a while, so that both rounds overlap; it counts them.
    let deletes = 0;
    const slow: FileStorage = {
      kind: files.kind,
      put: (key, bytes) => files.put(key, bytes),
      get: (key) => files.get(key),
      async delete(key) {
        deletes += 1;
        await new Promise((resolve) => setTimeout(resolve, 200));
        await files.delete(key);
      },
    };
    await clearLease();
    const outcomes = await Promise.all([
      sweepOrphanedFiles(sweeperDeps(slow, 'instance-a')),
      sweepOrphanedFiles(sweeperDeps(slow, 'instance-b')),
    ]);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        { swept: true, removed: 2 },
        { swept: false, reason: 'held' },
      ]),
    );
    expect(deletes).toBe(2);
    for (const key of orphans) expect(await files.get(key)).toBeNull();
  });

  it('a lease left by an instance that died is taken over once it has run out', async () => {
    const files = STORES.database();
    const orphan = await stored(files);
    await age(orphan, GRACE_MS + HOUR_MS);
    // As an instance killed mid-sweep leaves it: held, until a moment ago.
    await clearLease();
    await app.db.sharedSetting.create({
      data: { name: 'file_sweep_lease', value: JSON.stringify({ holder: 'dead', until: Date.now() - 1_000, sweptAt: 0 }) },
    });
    expect(await sweepOrphanedFiles(sweeperDeps(files, 'instance-a'))).toEqual({ swept: true, removed: 1 });
    expect(await files.get(orphan)).toBeNull();
  });
});
