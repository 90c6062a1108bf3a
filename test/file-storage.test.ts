// Lead attachments where every instance reads them: a lead created with a file on one instance is
// read and updated on another, through the database store (the PostgreSQL default) and through an
// S3-compatible store (a real HTTP server, test/support/s3-server.ts, spoken to by the AWS SDK).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.ts';
import { createDb, type Db } from '../src/db/client.ts';
import {
  createFileStorage,
  DatabaseStorage,
  LocalDirectoryStorage,
  S3Storage,
  StorageKeyTakenError,
  type FileStorage,
} from '../src/storage/file-storage.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, testSettings, withRequestIdChecked, type TestApp } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { testEngine } from './support/database.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { PDF_BYTES, PNG_BYTES, samplePayload, tempStorageDir } from './support/fixtures-leads.ts';
import { startS3Server, useS3Credentials, type TestS3Server } from './support/s3-server.ts';

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

interface Instance {
  yoga: Yoga;
  db: Db;
  files: FileStorage;
}

/** Another instance of the service over the same database: its own connections, its own file store made from its settings. */
function otherInstance(app: TestApp, config: Config): Instance {
  const db = createDb(config.databaseUrl);
  onFileEnd(() => db.$disconnect());
  const deps = instanceDeps({ config, db, now: app.clock.now });
  return { yoga: createApp(deps), db, files: deps.files };
}

function call(instance: Pick<Instance, 'yoga'>, method: string, path: string, key: string, body?: unknown): Promise<Response> {
  return Promise.resolve(
    instance.yoga.fetch(`http://gateway.test${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }),
  ).then(withRequestIdChecked);
}

const fileOf = (bytes: Buffer, file_type = 'resume') => ({ file_type, file: bytes.toString('base64') });

/**
 * Creates a lead with a PDF on `first`, reads its bytes and adds a PNG on `second`, and reads the
 * PNG back through `first`: what a load balancer spreading one client's requests does.
 */
async function createOnOneUpdateOnAnother(first: Instance, second: Instance, key: string, dealershipId: number) {
  const created = await call(first, 'POST', '/api/v1/leads', key, {
    lead: samplePayload(dealershipId, { lead_files_attributes: [fileOf(PDF_BYTES)] }),
  });
  expect(created.status).toBe(201);
  const { lead } = (await created.json()) as { lead: { id: number; files: { sha256: string }[] } };
  expect(lead.files.map((file) => file.sha256)).toEqual([sha(PDF_BYTES)]);

  const [pdfRow] = await second.db.leadFile.findMany({ where: { lead_id: lead.id } });
  expect(await second.files.get(pdfRow!.storage_key)).toEqual(new Uint8Array(PDF_BYTES));

  const updated = await call(second, 'PUT', `/api/v1/leads/${lead.id}`, key, {
    lead: { lead_files_attributes: [fileOf(PNG_BYTES, 'other')] },
  });
  expect(updated.status).toBe(200);
  const { lead: after } = (await updated.json()) as { lead: { files: { sha256: string; content_type: string }[] } };
  expect(after.files.map((file) => [file.content_type, file.sha256])).toEqual([
    ['application/pdf', sha(PDF_BYTES)],
    ['image/png', sha(PNG_BYTES)],
  ]);
  const rows = await first.db.leadFile.findMany({ where: { lead_id: lead.id }, orderBy: { id: 'asc' } });
  expect(rows).toHaveLength(2);
  for (const row of rows) {
    const bytes = await first.files.get(row.storage_key);
    expect(bytes && sha(bytes)).toBe(row.sha256);
  }
  return { leadId: lead.id, keys: rows.map((row) => row.storage_key) };
}

let app: TestApp;
let dealershipId: number;
let writer: string;

beforeAll(async () => {
  // FILE_STORAGE left unset: the engine's default.
  app = await createTestApp();
  dealershipId = (await makeDealership(app.db)).id;
  writer = (await makeKey(app.db, { permissions: ['create:lead', 'update:lead'], dealershipIds: [dealershipId] })).key;
});

describe('which store', () => {
  it('is the database on PostgreSQL and the local directory on SQLite unless FILE_STORAGE says otherwise', () => {
    expect(app.config.fileStorage).toBe(testEngine === 'postgresql' ? 'database' : 'local');
    const settings = { ...testSettings, DATABASE_URL: app.config.databaseUrl };
    expect(createFileStorage(loadConfig(settings), app.db)).toBeInstanceOf(
      testEngine === 'postgresql' ? DatabaseStorage : LocalDirectoryStorage,
    );
    expect(createFileStorage(loadConfig({ ...settings, FILE_STORAGE: 'database' }), app.db)).toBeInstanceOf(DatabaseStorage);
    expect(createFileStorage(loadConfig({ ...settings, FILE_STORAGE: 'local' }), app.db)).toBeInstanceOf(LocalDirectoryStorage);
    expect(createFileStorage(loadConfig({ ...settings, FILE_STORAGE: 's3', S3_BUCKET: 'lead-files' }), app.db)).toBeInstanceOf(S3Storage);
  });

  it('refuses FILE_STORAGE=s3 without a bucket, and bad S3 settings, naming each', () => {
    const settings = { ...testSettings, DATABASE_URL: app.config.databaseUrl };
    expect(() => loadConfig({ ...settings, FILE_STORAGE: 's3' })).toThrow(/S3_BUCKET is required with FILE_STORAGE=s3/);
    expect(() => loadConfig({ ...settings, FILE_STORAGE: 'disk' })).toThrow(/FILE_STORAGE must be one of local, database, s3/);
    expect(() => loadConfig({ ...settings, FILE_STORAGE: 's3', S3_BUCKET: 'Bad_Bucket' })).toThrow(/S3_BUCKET must be a bucket name/);
    expect(() => loadConfig({ ...settings, FILE_STORAGE: 's3', S3_BUCKET: 'b-1', S3_ENDPOINT: 'ftp://x' })).toThrow(
      /S3_ENDPOINT must be an http/,
    );
    expect(
      loadConfig({
        ...settings,
        FILE_STORAGE: 's3',
        S3_BUCKET: 'b-1',
        S3_KEY_PREFIX: 'gateway',
        S3_FORCE_PATH_STYLE: 'true',
        S3_REGION: 'eu-west-1',
      }).s3,
    ).toEqual({
      bucket: 'b-1',
      keyPrefix: 'gateway/',
      region: 'eu-west-1',
      endpoint: null,
      forcePathStyle: true,
    });
  });
});

describe('the database store: two instances over one database', () => {
  it('a lead created with a file on one instance is read and updated on the other', async () => {
    const config: Config = { ...app.config, fileStorage: 'database' };
    const first: Instance = {
      yoga: createApp(instanceDeps({ config, db: app.db, now: app.clock.now })),
      db: app.db,
      files: new DatabaseStorage(app.db),
    };
    const second = otherInstance(app, config);
    const { keys } = await createOnOneUpdateOnAnother(first, second, writer, dealershipId);
    // The bytes are rows of stored_files, one per attachment, with their sizes.
    const stored = await app.db.storedFile.findMany({ where: { key: { in: keys } }, select: { key: true, byte_size: true } });
    expect(stored.map((row) => row.byte_size).sort()).toEqual([PDF_BYTES.length, PNG_BYTES.length].sort());
  });

  it('never overwrites a key, answers null for a missing one, and deletes idempotently', async () => {
    const files = new DatabaseStorage(app.db);
    const key = `leads/test/${Date.now()}`;
    await files.put(key, PDF_BYTES);
    await expect(files.put(key, PNG_BYTES)).rejects.toBeInstanceOf(StorageKeyTakenError);
    expect(await files.get(key)).toEqual(new Uint8Array(PDF_BYTES));
    await files.delete(key);
    await files.delete(key);
    expect(await files.get(key)).toBeNull();
    await expect(files.put('../escape', PDF_BYTES)).rejects.toThrow(/invalid storage key/);
  });
});

describe('the local directory store', () => {
  it('reads what it stored, never overwrites, and keeps to its directory', async () => {
    const directory = tempStorageDir();
    onFileEnd(() => directory.remove());
    const files = new LocalDirectoryStorage(directory.dir);
    await files.put('leads/a/b', PDF_BYTES);
    await expect(files.put('leads/a/b', PNG_BYTES)).rejects.toBeInstanceOf(StorageKeyTakenError);
    expect(await files.get('leads/a/b')).toEqual(new Uint8Array(PDF_BYTES));
    expect(await files.get('leads/a/missing')).toBeNull();
    await expect(files.get('../../etc/passwd')).rejects.toThrow(/invalid storage key/);
    await files.delete('leads/a/b');
    expect(directory.files()).toEqual([]);
  });
});

describe('an S3-compatible store', () => {
  let s3: TestS3Server;
  let restoreEnvironment: () => void = () => undefined;
  const bucket = 'lead-files';

  beforeAll(async () => {
    s3 = await startS3Server([bucket]);
    onFileEnd(() => s3.close());
    restoreEnvironment = useS3Credentials(s3);
  });
  afterAll(() => restoreEnvironment());

  const s3Config = (): Config =>
    loadConfig({
      ...testSettings,
      DATABASE_URL: app.config.databaseUrl,
      FILE_STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_KEY_PREFIX: 'gateway',
      S3_REGION: 'eu-west-1',
    });

  it('a lead created with a file on one instance is read and updated on the other, the bytes in the bucket', async () => {
    const config = { ...s3Config(), leadFileMaxBytes: app.config.leadFileMaxBytes };
    const firstDeps = instanceDeps({ config, db: app.db, now: app.clock.now });
    const first: Instance = { yoga: createApp(firstDeps), db: app.db, files: firstDeps.files };
    const second = otherInstance(app, config);
    expect(first.files).toBeInstanceOf(S3Storage);
    const before = app.db.storedFile.count();
    const { keys } = await createOnOneUpdateOnAnother(first, second, writer, dealershipId);
    expect([...s3.objects.keys()].filter((id) => keys.some((key) => id === `${bucket}/gateway/${key}`))).toHaveLength(2);
    expect(s3.objects.get(`${bucket}/gateway/${keys[0]}`)).toEqual(PDF_BYTES);
    // Nothing of it went to the database store.
    expect(await app.db.storedFile.count()).toBe(await before);
  });

  it('never overwrites an object, answers null for a missing one, and deletes idempotently', async () => {
    const files = createFileStorage(s3Config(), app.db);
    await files.put('leads/s3/one', PDF_BYTES);
    await expect(files.put('leads/s3/one', PNG_BYTES)).rejects.toBeInstanceOf(StorageKeyTakenError);
    expect(s3.objects.get(`${bucket}/gateway/leads/s3/one`)).toEqual(PDF_BYTES);
    expect(await files.get('leads/s3/missing')).toBeNull();
    await files.delete('leads/s3/one');
    await files.delete('leads/s3/one');
    expect(await files.get('leads/s3/one')).toBeNull();
  });

  it('a store that refuses the upload fails the lead with nothing stored', async () => {
    const config = { ...s3Config(), s3: { ...s3Config().s3!, bucket: 'no-such-bucket' } };
    const instance = otherInstance(app, config);
    const leadsBefore = await app.db.lead.count();
    const response = await call(instance, 'POST', '/api/v1/leads', writer, {
      lead: samplePayload(dealershipId, { lead_files_attributes: [fileOf(PDF_BYTES)] }),
    });
    expect(response.status).toBe(500);
    const body = await response.json();
    expect(body).toEqual({ error: 'internal_error', message: expect.any(String) });
    expect(JSON.stringify(body)).not.toMatch(/bucket|NoSuchBucket|127\.0\.0\.1/i);
    expect(await app.db.lead.count()).toBe(leadsBefore);
  });
});
