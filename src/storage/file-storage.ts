// Where lead attachments' bytes live. The lead_files rows keep only the key, size, hash and sniffed
// type; the bytes go to one of three stores, chosen in one place (createFileStorage) from
// FILE_STORAGE:
//  - `database`: the stored_files table, so every instance sharing the database reads what any of
//    them stored (the default on PostgreSQL, where several instances are the normal deployment);
//  - `s3`: an S3-compatible bucket (AWS S3, MinIO, R2 …), through the official AWS SDK;
//  - `local`: a directory of this machine (the default on SQLite, where one process owns the data).
// Keys are made by the service (src/domain/leads/files.ts), never from a client's file name.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config, FileStorageKind, S3Settings } from '../config/index.ts';
import { isUniqueViolation, type Db } from '../db/client.ts';

export interface FileStorage {
  /** Which store this is (for logs and the start-up line). */
  readonly kind: FileStorageKind;
  /** Stores new bytes under a key; an existing key is an error, never overwritten. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The bytes stored under the key, or null when there are none. */
  get(key: string): Promise<Uint8Array | null>;
  /** Removes the bytes; a key that is already gone is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are made by the service: lower-case segments joined by "/". */
const KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/;
const MAX_KEY_LENGTH = 255;

/** Every store refuses a key the service would never make, so no store can be walked out of its root. */
function checkedKey(key: string): string {
  if (key.length > MAX_KEY_LENGTH || !KEY_PATTERN.test(key)) throw new Error(`invalid storage key "${key.slice(0, 80)}"`);
  return key;
}

export class StorageKeyTakenError extends Error {
  override name = 'StorageKeyTakenError';
  constructor(key: string) {
    super(`storage key "${key}" is already taken`);
  }
}

// ─── a local directory ───

export class LocalDirectoryStorage implements FileStorage {
  readonly kind = 'local';
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    return path.join(this.root, ...checkedKey(key).split('/'));
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      // 'wx' fails when the file exists, so a key collision can never replace someone's file.
      await writeFile(file, bytes, { flag: 'wx', mode: 0o640 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new StorageKeyTakenError(key);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    try {
      const bytes = await readFile(this.pathOf(key));
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}

// ─── the database ───

/**
 * The stored_files table. Written outside the lead's transaction, like the other stores, so the
 * lead code treats every store alike (store the bytes, then commit the rows, and remove the bytes
 * if the commit fails). Uses the unscoped client: the table holds no dealership's rows of its own,
 * and only the service, never a key, names a storage key.
 */
export class DatabaseStorage implements FileStorage {
  readonly kind = 'database';
  constructor(private readonly db: Db) {}

  async put(key: string, bytes: Uint8Array): Promise<void> {
    try {
      // The primary key refuses a second row under the same key: nothing is ever overwritten.
      await this.db.storedFile.create({ data: { key: checkedKey(key), bytes: new Uint8Array(bytes), byte_size: bytes.byteLength } });
    } catch (error) {
      if (isUniqueViolation(error)) throw new StorageKeyTakenError(key);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    const row = await this.db.storedFile.findUnique({ where: { key: checkedKey(key) }, select: { bytes: true } });
    return row ? new Uint8Array(row.bytes) : null;
  }

  async delete(key: string): Promise<void> {
    await this.db.storedFile.deleteMany({ where: { key: checkedKey(key) } });
  }
}

// ─── an S3-compatible bucket ───

type S3Sdk = typeof import('@aws-sdk/client-s3');
/**
 * The SDK is large (hundreds of modules): loaded on first use, so instances without S3 never pay for
 * it at start. The module loader keeps it once loaded; nothing here holds it.
 */
const loadS3Sdk = (): Promise<S3Sdk> => import('@aws-sdk/client-s3');

/** Credentials are not settings of this service: the SDK's standard chain finds them (AWS_ACCESS_KEY_ID …, profiles, instance roles). */
async function createS3Client(settings: S3Settings): Promise<S3Client> {
  const { S3Client } = await loadS3Sdk();
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    // Checksums only where S3 requires them: the SDK's newer default (a CRC on every upload and
    // download) is refused by several S3-compatible stores, and every file already carries its
    // SHA-256 in lead_files.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A store that does not answer must not hold a lead request for minutes.
    maxAttempts: 3,
  });
}

/** The HTTP status of an S3 service error (the SDK's S3ServiceException carries it in $metadata). */
function s3Status(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

export class S3Storage implements FileStorage {
  readonly kind = 's3';
  private client: Promise<S3Client> | undefined;
  constructor(private readonly settings: S3Settings) {}

  private async connection(): Promise<{ client: S3Client; sdk: S3Sdk }> {
    this.client ??= createS3Client(this.settings);
    const [client, sdk] = await Promise.all([this.client, loadS3Sdk()]);
    return { client, sdk };
  }

  private objectKey(key: string): string {
    return `${this.settings.keyPrefix}${checkedKey(key)}`;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const { client, sdk } = await this.connection();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: this.objectKey(key),
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: 'application/octet-stream',
          // Refuses to replace an existing object (S3 and most compatible stores honour it), so a key
          // collision can never replace someone's file.
          IfNoneMatch: '*',
        }),
      );
    } catch (error) {
      if (s3Status(error) === 412) throw new StorageKeyTakenError(key);
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    const { client, sdk } = await this.connection();
    try {
      const answer = await client.send(new sdk.GetObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
      return answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (s3Status(error) === 404) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers a delete of a missing object with success: already gone is not an error.
    const { client, sdk } = await this.connection();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.settings.bucket, Key: this.objectKey(key) }));
  }
}

// ─── the one choice ───

/** The store FILE_STORAGE names (its default follows the engine: see src/config/load.ts). */
export function createFileStorage(config: Pick<Config, 'fileStorage' | 'fileStorageDir' | 's3'>, db: Db): FileStorage {
  switch (config.fileStorage) {
    case 'database':
      return new DatabaseStorage(db);
    case 's3':
      if (!config.s3) throw new Error('FILE_STORAGE=s3 needs the S3 settings (S3_BUCKET …)');
      return new S3Storage(config.s3);
    case 'local':
      return new LocalDirectoryStorage(config.fileStorageDir);
  }
}
