// The client's own description of a file is never used: the type is sniffed from the bytes, and only
// documents and images are accepted, since dealership staff open these files.
import { hash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { invalidInput } from '../../errors.ts';
import type { FileStorage } from '../../storage/file-storage.ts';
import type { Db } from '../../db/client.ts';
import { MAX_LEAD_FILES, type LeadFileType } from './values.ts';
import { insertRows } from '../../db/insert-rows.ts';

export type DecodedLeadFile = ReturnType<typeof decodeLeadFiles>[number];
export type StoredLeadFile = Omit<DecodedLeadFile, 'bytes'> & { storage_key: string };

/** Its declared type is ignored. */
const DATA_URL_PREFIX = /^data:[^,;]*(;[^,;]*)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const startsWith = (bytes: Buffer, signature: readonly number[], offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, index) => bytes[offset + index] === byte);
const ascii = (text: string): number[] => [...text].map((char) => char.charCodeAt(0));

const LEADING_BYTES: readonly { type: string; bytes: readonly number[] }[] = [
  { type: 'application/pdf', bytes: ascii('%PDF-') },
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', bytes: ascii('GIF87a') },
  { type: 'image/gif', bytes: ascii('GIF89a') },
  { type: 'application/rtf', bytes: ascii('{\\rtf') },
  { type: 'application/msword', bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1] },
];

export function sniffContentType(bytes: Buffer): string | null {
  const known = LEADING_BYTES.find((kind) => startsWith(bytes, kind.bytes));
  if (known) return known.type;
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  // A .docx is a zip whose parts live under word/; any other zip is refused.
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) && bytes.includes('word/')) {
    return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  }
  return isPlainText(bytes) ? 'text/plain' : null;
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function base64Group(known: readonly number[]): string {
  const places = [new Set<string>(), new Set<string>(), new Set<string>(), new Set<string>()];
  const unknownBits = 8 * (3 - known.length);
  for (let rest = 0; rest < 2 ** unknownBits; rest += 1) {
    const group = known.reduce((value, byte) => (value << 8) | byte, 0) * 2 ** unknownBits + rest;
    for (const [index, place] of places.entries()) place.add(BASE64_ALPHABET[(group >> (18 - 6 * index)) & 63] ?? '');
  }
  const escapeForPattern = (char: string) => (/[A-Za-z0-9]/.test(char) ? char : `\\${char}`);
  return places
    .map((chars) =>
      chars.size === 1
        ? escapeForPattern([...chars][0] ?? '')
        : chars.size === 64
          ? '[A-Za-z0-9+/]'
          : `[${[...chars].map(escapeForPattern).join('')}]`,
    )
    .join('');
}

/** The kinds the bytes identify, for the OpenAPI document's generated examples; the others are named in the description. */
export function leadFilePattern(): string {
  const prefixes = LEADING_BYTES.map(({ bytes }) =>
    Array.from({ length: Math.ceil(bytes.length / 3) }, (_, index) => base64Group(bytes.slice(index * 3, index * 3 + 3))).join(''),
  );
  return `^(?:data:[^,;]*(?:;[^,;]*)*;base64,)?(?:${prefixes.join('|')})(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`;
}

function isPlainText(bytes: Buffer): boolean {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    // Control characters other than tab, newline, carriage return and form feed mean binary data.
    return !/[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text);
  } catch {
    return false;
  }
}

/** Stated here rather than imported, since the input record reads this module's leadFilePattern. */
type LeadFileEntry = { file_type?: LeadFileType | null; file?: string | null };

export function decodeLeadFiles(files: readonly LeadFileEntry[], options: { maxBytes: number; existingCount: number }) {
  const base = 'lead.lead_files_attributes';
  const allowed = MAX_LEAD_FILES - options.existingCount;
  if (files.length > allowed) {
    throw invalidInput(
      base,
      options.existingCount
        ? `a lead has at most ${MAX_LEAD_FILES} files; this one has ${options.existingCount}, so at most ${Math.max(allowed, 0)} more`
        : `at most ${MAX_LEAD_FILES} files per lead, got ${files.length}`,
    );
  }
  return files.map((entry, index) => {
    const at = `${base}[${index}]`;
    const fileType = entry.file_type;
    if (!fileType) throw new Error('leadFileInputSchema lets no file through without its file_type');
    const bytes = decodeBase64(entry.file, `${at}.file`, options.maxBytes);
    const contentType = sniffContentType(bytes);
    if (!contentType) {
      throw invalidInput(`${at}.file`, 'must be a PDF, Word (.doc, .docx), RTF, plain text or image (PNG, JPEG, GIF, WebP) file');
    }
    return { file_type: fileType, bytes, byte_size: bytes.length, sha256: hash('sha256', bytes, 'hex'), content_type: contentType };
  });
}

function decodeBase64(raw: string | null | undefined, field: string, maxBytes: number): Buffer {
  if (raw === null || raw === undefined || raw.trim() === '') throw invalidInput(field, 'is required: the file content, base64-encoded');
  const text = raw.trim().replace(DATA_URL_PREFIX, '').replace(/\s+/g, '');
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw invalidInput(field, 'must be base64-encoded file content');
  // Measured before decoding, so an oversized file costs no memory beyond the body already read.
  const size = (text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
  if (size === 0) throw invalidInput(field, 'is empty');
  if (size > maxBytes) throw invalidInput(field, `is ${size} bytes; a file may be at most ${maxBytes} bytes`);
  return Buffer.from(text, 'base64');
}

/** Each key is recorded as pending before its bytes are stored, so bytes orphaned by a killed process are found by the sweep. */
export async function storeLeadFiles(
  db: Db,
  storage: FileStorage,
  files: readonly DecodedLeadFile[],
  now: Date,
): Promise<StoredLeadFile[]> {
  if (files.length === 0) return [];
  const folder = `leads/${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
  const keyed = files.map(({ bytes, ...file }) => ({ bytes, file: { ...file, storage_key: `${folder}/${randomUUID()}` } }));
  const stored = keyed.map(({ file }) => file);
  await insertRows(
    db,
    'pending_lead_files',
    stored.map(({ storage_key }) => ({ storage_key, created_at: now })),
  );
  try {
    for (const { bytes, file } of keyed) await storage.put(file.storage_key, bytes);
  } catch (error) {
    await removeLeadFiles(db, storage, stored);
    throw error;
  }
  return stored;
}

/** Best effort: a row left behind only costs the sweep a look. */
export async function settleLeadFiles(db: Db, files: readonly { storage_key: string }[], logger?: Logger): Promise<void> {
  if (files.length === 0) return;
  await db.pendingLeadFile.deleteMany({ where: { storage_key: { in: files.map((file) => file.storage_key) } } }).catch((error: unknown) => {
    logger?.warn({ err: error }, 'could not clear the pending record of committed lead files; the file sweep will');
  });
}

/** Best effort: the original error is what the caller sees; the pending record stays for the sweep. */
export async function removeLeadFiles(
  db: Db,
  storage: FileStorage,
  files: readonly { storage_key: string }[],
  logger?: Logger,
): Promise<void> {
  const removed: { storage_key: string }[] = [];
  for (const file of files) {
    try {
      await storage.delete(file.storage_key);
      removed.push(file);
    } catch (error) {
      logger?.error({ err: error, storage_key: file.storage_key }, 'could not remove an uncommitted lead file');
    }
  }
  await settleLeadFiles(db, removed, logger);
}
