// Lead attachments' bytes; lead_files rows keep only key, size, hash and type. `database` lets every
// instance sharing the database read what any stored; `local` suits one SQLite process.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Config, S3Settings } from '../config/index.ts';
import { isUniqueViolation, type Db } from '../db/client.ts';

export interface FileStorage {
  readonly kind: Config['fileStorage'];
  put(key: string, bytes: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array | null>;
  delete(key: string): Promise<void>;
}

const KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/;
const MAX_KEY_LENGTH = 255;

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

/** Written outside the lead's transaction like the other stores, so lead code treats every store alike. */
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

const s3Status = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } } | null | undefined)?.$metadata?.httpStatusCode;

export class S3Storage implements FileStorage {
  readonly kind = 's3';
  private client: S3Client | undefined;
  constructor(private readonly settings: S3Settings) {}

  /** Credentials are not settings of this service: the SDK's standard chain finds them. */
  private async connection() {
    // Loaded on first use: the SDK is large, and instances without S3 should not load it at start.
    const sdk = await import('@aws-sdk/client-s3');
    this.client ??= new sdk.S3Client({
      region: this.settings.region,
      ...(this.settings.endpoint ? { endpoint: this.settings.endpoint } : {}),
      forcePathStyle: this.settings.forcePathStyle,
      // Checksums only where required: several S3-compatible stores refuse the SDK's newer default.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A store that does not answer must not hold a lead request for minutes.
      maxAttempts: 3,
    });
    return { client: this.client, sdk };
  }

  private object(key: string) {
    return { Bucket: this.settings.bucket, Key: `${this.settings.keyPrefix}${checkedKey(key)}` };
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const { client, sdk } = await this.connection();
    try {
      await client.send(
        new sdk.PutObjectCommand({
          ...this.object(key),
          Body: bytes,
          ContentLength: bytes.byteLength,
          ContentType: 'application/octet-stream',
          // Refuses to replace an existing object, so a key collision can never replace someone's file.
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
      const answer = await client.send(new sdk.GetObjectCommand(this.object(key)));
      return answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (s3Status(error) === 404) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    // S3 answers a delete of a missing object with success: already gone is not an error.
    const { client, sdk } = await this.connection();
    await client.send(new sdk.DeleteObjectCommand(this.object(key)));
  }
}

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
