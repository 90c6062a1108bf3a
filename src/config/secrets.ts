// AES-256-GCM envelopes `v1.<key id>.<iv>.<tag>.<ciphertext>` in the same column, so no schema change and each value names its key.
// The first key encrypts, all decrypt, so keys rotate by adding one, re-encrypting, then removing the old.
// The column's name is authenticated with the value, so an envelope copied into another column does not decrypt.
import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';
import { listEntries } from './declare.ts';

export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export interface Keyring {
  current: EncryptionKey;
  all: ReadonlyMap<string, EncryptionKey>;
}

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const ENVELOPE_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ENVELOPE_PATTERN = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]*)$/;

/** Derived from a public phrase: what it encrypts is as good as plaintext, so it is for development mode only. */
export const DEVELOPMENT_KEY: EncryptionKey = {
  id: 'dev',
  key: hash('sha256', 'dealership-gateway development key: not a secret', 'buffer'),
};

export function keyringOf(keys: readonly EncryptionKey[]): Keyring {
  const [current] = keys;
  if (!current) throw new Error('a keyring needs at least one key');
  return { current, all: new Map(keys.map((key) => [key.id, key])) };
}

/** The reasons never echo key material. */
export function parseEncryptionKeys(text: string): { keys: EncryptionKey[] } | { problems: string[] } {
  const keys: EncryptionKey[] = [];
  const problems: string[] = [];
  const entries = listEntries(text);
  if (entries.length === 0) problems.push('lists no key');
  entries.forEach((entry, index) => {
    const separator = entry.indexOf(':');
    const id = separator < 0 ? '' : entry.slice(0, separator);
    const material = separator < 0 ? '' : entry.slice(separator + 1);
    const position = `entry ${index + 1}`;
    if (!KEY_ID_PATTERN.test(id)) {
      problems.push(`${position} must be <key id>:<base64 key>, the id made of letters, digits, _ or - (at most 32)`);
      return;
    }
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(material) ? Buffer.from(material, 'base64') : Buffer.alloc(0);
    if (key.length !== KEY_BYTES) {
      problems.push(`key "${id}" must be ${KEY_BYTES} bytes in base64 (make one with: npm run --silent secrets -- new-key)`);
      return;
    }
    if (keys.some((other) => other.id === id)) {
      problems.push(`key id "${id}" is listed twice`);
      return;
    }
    keys.push({ id, key });
  });
  return problems.length > 0 ? { problems } : { keys };
}

export function newEncryptionKeyText(id: string): string {
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

export function seal(keyring: Keyring, column: string, plaintext: string): string {
  const { id, key } = keyring.current;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(column));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [ENVELOPE_VERSION, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(
    '.',
  );
}

export function envelopeKeyId(value: string): string | null {
  return ENVELOPE_PATTERN.exec(value)?.[1] ?? null;
}

/** The message names the key id, never the value. */
export class SecretUnreadableError extends Error {
  override name = 'SecretUnreadableError';
}

export function open(keyring: Keyring, column: string, envelope: string): string {
  const match = ENVELOPE_PATTERN.exec(envelope);
  if (!match) throw new SecretUnreadableError(`${column} holds a value that is not encrypted`);
  const [, id, iv, tag, ciphertext] = match as unknown as [string, string, string, string, string];
  const key = keyring.all.get(id);
  if (!key) throw new SecretUnreadableError(`${column} is encrypted with key "${id}", which SECRETS_ENCRYPTION_KEYS does not hold`);
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(column));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnreadableError(`${column} does not decrypt with key "${id}" (altered, or encrypted for another column)`);
  }
}
