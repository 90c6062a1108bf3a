// Where lead attachments' bytes are kept: the database, a local directory or an S3 bucket.
import path from 'node:path';
import { z } from 'zod';
import { httpOrigin, optional, setting, trueOrFalse, wholeNumber, type SettingDeclaration, type ValuesOf } from './declare.ts';
import type { Engine } from './database.ts';
import { projectRoot } from './root.ts';

/** Where lead attachments' bytes are kept (src/storage/file-storage.ts). */
export type FileStorageKind = 'local' | 'database' | 's3';
const FILE_STORAGE_KINDS = ['local', 'database', 's3'] as const satisfies readonly FileStorageKind[];

/** The bucket of FILE_STORAGE=s3; credentials come from the AWS SDK's standard chain, not from here. */
export interface S3Settings {
  bucket: string;
  /** Put before every key (`gateway/` → `gateway/leads/2026/11/<uuid>`); empty for none. */
  keyPrefix: string;
  region: string;
  /** null: AWS's own endpoint for the region. */
  endpoint: string | null;
  /** Address the bucket in the path (`https://host/bucket/key`), as most self-hosted stores need. */
  forcePathStyle: boolean;
}

const MIN_FILE_SWEEP_GRACE_MINUTES = 5;
const MAX_FILE_SWEEP_GRACE_MINUTES = 10_080;

export const STORAGE_SETTINGS = {
  LEAD_FILE_MAX_BYTES: setting({
    schema: wholeNumber(),
    default: String(5 * 1024 * 1024),
    meaning: 'largest lead attachment, in bytes (decoded)',
  }),
  FILE_STORAGE: setting({
    schema: optional(z.enum(FILE_STORAGE_KINDS, `must be one of ${FILE_STORAGE_KINDS.join(', ')}`)),
    defaultInWords: '`database` on PostgreSQL, `local` on SQLite',
    meaning:
      'where lead attachments\' bytes are kept: `database` (the `stored_files` table), `s3` (a bucket, see below) or `local` (`FILE_STORAGE_DIR`); see "Several instances"',
  }),
  FILE_STORAGE_DIR: setting({
    schema: optional(z.string().trim()),
    default: 'data/files',
    meaning: 'the directory of `FILE_STORAGE=local` (relative to the project)',
  }),
  // At least a few minutes: a lead's files are stored a moment before its transaction (at most 45 s) commits them.
  FILE_SWEEP_GRACE_MINUTES: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^\d+$/, `must be a whole number of minutes from ${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}`)
        .transform(Number)
        .refine(
          (value) => value >= MIN_FILE_SWEEP_GRACE_MINUTES && value <= MAX_FILE_SWEEP_GRACE_MINUTES,
          `must be a whole number of minutes from ${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}`,
        ),
    ),
    default: '60',
    meaning: `attachment bytes a process killed between storing them and committing their lead left behind are removed once stored longer ago than this (${MIN_FILE_SWEEP_GRACE_MINUTES} to ${MAX_FILE_SWEEP_GRACE_MINUTES}), by one instance at a time, hourly; see "Several instances"`,
  }),
  S3_BUCKET: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens'),
    ),
    defaultInWords: '**required** with `FILE_STORAGE=s3`',
    meaning: 'the bucket that keeps attachments',
  }),
  S3_REGION: setting({
    schema: optional(
      z
        .string()
        .trim()
        .regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as eu-west-1'),
    ),
    defaultInWords: '`AWS_REGION`, else `us-east-1`',
    meaning: "the bucket's region",
  }),
  AWS_REGION: setting({ schema: optional(z.string().trim()), meaning: "the AWS SDK's own region setting; `S3_REGION` falls back to it" }),
  S3_ENDPOINT: setting({
    schema: httpOrigin,
    defaultInWords: "AWS's endpoint for the region",
    meaning: "an S3-compatible store's URL, e.g. `https://minio.internal:9000`",
  }),
  S3_FORCE_PATH_STYLE: setting({
    schema: trueOrFalse,
    default: 'false',
    meaning: '`true`: the bucket in the path (`https://host/bucket/key`), as most self-hosted stores need',
  }),
  S3_KEY_PREFIX: setting({
    schema: optional(
      z
        .string()
        .trim()
        .max(200, 'must be at most 200 characters')
        .regex(/^[A-Za-z0-9._/-]+$/, 'may hold only letters, digits, ".", "_", "-" and "/"'),
    ),
    meaning: 'put before every object key (`gateway/` → `gateway/leads/2026/11/<uuid>`)',
  }),
} as const satisfies Record<string, SettingDeclaration>;

interface StorageConfig {
  fileStorage: FileStorageKind;
  fileStorageDir: string;
  fileSweepGraceMs: number;
  s3: S3Settings | null;
  leadFileMaxBytes: number;
}

/** Where attachments go, from their settings and the database's engine. */
export function storageOf(settings: ValuesOf<typeof STORAGE_SETTINGS>, engine: Engine): StorageConfig {
  // Several instances share a PostgreSQL database, so there the files go where all of them read;
  // a SQLite file belongs to one process, and so may its files' directory.
  const fileStorage: FileStorageKind = settings.FILE_STORAGE ?? (engine === 'postgresql' ? 'database' : 'local');
  let s3: S3Settings | null = null;
  if (fileStorage === 's3' && settings.S3_BUCKET !== undefined) {
    const keyPrefix = settings.S3_KEY_PREFIX ?? '';
    s3 = {
      bucket: settings.S3_BUCKET,
      keyPrefix: keyPrefix === '' || keyPrefix.endsWith('/') ? keyPrefix : `${keyPrefix}/`,
      region: settings.S3_REGION ?? settings.AWS_REGION ?? 'us-east-1',
      endpoint: settings.S3_ENDPOINT ?? null,
      forcePathStyle: settings.S3_FORCE_PATH_STYLE,
    };
  }
  return {
    fileStorage,
    fileStorageDir: path.resolve(projectRoot, settings.FILE_STORAGE_DIR),
    fileSweepGraceMs: settings.FILE_SWEEP_GRACE_MINUTES * 60_000,
    s3,
    leadFileMaxBytes: settings.LEAD_FILE_MAX_BYTES,
  };
}
