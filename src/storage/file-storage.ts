// Where lead attachments' bytes live: never in the database, which keeps only the key, size, hash
// and sniffed type. The interface is small so an object store can replace the local directory
// without touching the lead code.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface FileStorage {
  /** Stores new bytes under a key; an existing key is an error, never overwritten. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Removes the bytes; a key that is already gone is not an error. */
  delete(key: string): Promise<void>;
}

/** Keys are made by the service (never from client file names): lower-case segments joined by "/". */
const KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/;

export class LocalDirectoryStorage implements FileStorage {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new Error(`invalid storage key "${key}"`);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // 'wx' fails when the file exists, so a key collision can never replace someone's file.
    await writeFile(file, bytes, { flag: 'wx', mode: 0o640 });
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}

const byDirectory = new Map<string, FileStorage>();

/** The storage for the configured directory (config.fileStorageDir), one instance per directory. */
export function fileStorageFor(config: { fileStorageDir: string }): FileStorage {
  let storage = byDirectory.get(config.fileStorageDir);
  if (!storage) {
    storage = new LocalDirectoryStorage(config.fileStorageDir);
    byDirectory.set(config.fileStorageDir, storage);
  }
  return storage;
}
