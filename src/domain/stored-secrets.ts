// Secrets the service must read back (so cannot hash), each column listed once here for sealing,
// opening, the start-up check and re-encryption.
import type { Logger } from 'pino';
import { ConfigError } from '../config/index.ts';
import type { Db } from '../db/client.ts';
import { envelopeKeyId, open, seal, type Keyring } from '../config/secrets.ts';

interface EncryptedColumn {
  /** Also the additional data authenticated with every value of the column. */
  name: string;
  read(db: Db): Promise<{ id: number; value: string }[]>;
  /** Only if the row still holds `from`: another instance may be at it too. */
  replace(db: Db, id: number, from: string, to: string): Promise<boolean>;
}

export const PAYMENT_PROCESSOR_KEY = 'PaymentProcessor.authorization_key';
const WEBHOOK_SECRET = 'WebhookSubscription.secret';
const WEBHOOK_PREVIOUS_SECRET = 'WebhookSubscription.previous_secret';
const IDEMPOTENT_ANSWER = 'IdempotencyRecord.response_body';
const ENVELOPE_PREFIX = 'v1.';

const encryptedColumns: readonly EncryptedColumn[] = [
  {
    name: PAYMENT_PROCESSOR_KEY,
    read: async (db) =>
      (await db.paymentProcessor.findMany({ select: { id: true, authorization_key: true }, orderBy: { id: 'asc' } })).map((row) => ({
        id: row.id,
        value: row.authorization_key,
      })),
    replace: async (db, id, from, to) =>
      (await db.paymentProcessor.updateMany({ where: { id, authorization_key: from }, data: { authorization_key: to } })).count === 1,
  },
  {
    name: WEBHOOK_SECRET,
    read: async (db) =>
      (await db.webhookSubscription.findMany({ select: { id: true, secret: true }, orderBy: { id: 'asc' } })).map((row) => ({
        id: row.id,
        value: row.secret,
      })),
    replace: async (db, id, from, to) =>
      (await db.webhookSubscription.updateMany({ where: { id, secret: from }, data: { secret: to } })).count === 1,
  },
  {
    name: WEBHOOK_PREVIOUS_SECRET,
    read: async (db) =>
      (
        await db.webhookSubscription.findMany({
          where: { previous_secret: { not: null } },
          select: { id: true, previous_secret: true },
          orderBy: { id: 'asc' },
        })
      ).flatMap((row) => (row.previous_secret === null ? [] : [{ id: row.id, value: row.previous_secret }])),
    replace: async (db, id, from, to) =>
      (await db.webhookSubscription.updateMany({ where: { id, previous_secret: from }, data: { previous_secret: to } })).count === 1,
  },
  {
    // Only the sealed answers: a lead's answer is stored as JSON by design (it holds no secret).
    name: IDEMPOTENT_ANSWER,
    read: async (db) =>
      (
        await db.idempotencyRecord.findMany({
          where: { response_body: { startsWith: ENVELOPE_PREFIX } },
          select: { id: true, response_body: true },
          orderBy: { id: 'asc' },
        })
      ).map((row) => ({ id: row.id, value: row.response_body })),
    replace: async (db, id, from, to) =>
      (await db.idempotencyRecord.updateMany({ where: { id, response_body: from }, data: { response_body: to } })).count === 1,
  },
];

export const sealProcessorKey = (keyring: Keyring, plaintext: string): string => seal(keyring, PAYMENT_PROCESSOR_KEY, plaintext);
export const openProcessorKey = (keyring: Keyring, stored: string): string => open(keyring, PAYMENT_PROCESSOR_KEY, stored);

export const sealWebhookSecret = (keyring: Keyring, plaintext: string): string => seal(keyring, WEBHOOK_SECRET, plaintext);
export const openWebhookSecret = (keyring: Keyring, stored: string): string => open(keyring, WEBHOOK_SECRET, stored);
export const sealPreviousWebhookSecret = (keyring: Keyring, plaintext: string): string => seal(keyring, WEBHOOK_PREVIOUS_SECRET, plaintext);
export const openPreviousWebhookSecret = (keyring: Keyring, stored: string): string => open(keyring, WEBHOOK_PREVIOUS_SECRET, stored);

export const sealIdempotentAnswer = (keyring: Keyring, plaintext: string): string => seal(keyring, IDEMPOTENT_ANSWER, plaintext);
export const openIdempotentAnswer = (keyring: Keyring, stored: string): string => open(keyring, IDEMPOTENT_ANSWER, stored);

export async function storedSecretsCensus(db: Db): Promise<Record<string, Record<string, number>>> {
  const census: Record<string, Record<string, number>> = {};
  for (const column of encryptedColumns) {
    const counts: Record<string, number> = {};
    for (const { value } of await column.read(db)) {
      const keyId = envelopeKeyId(value) ?? 'plaintext';
      counts[keyId] = (counts[keyId] ?? 0) + 1;
    }
    census[column.name] = counts;
  }
  return census;
}

type ReencryptionResult = { column: string; reencrypted: number; encryptedPlaintext: number; unchanged: number };

/** A value under a key the keyring lacks stops the run before it changes; safe to rerun beside running instances. */
export async function reencryptStoredSecrets(
  db: Db,
  keyring: Keyring,
  options: { plaintextOnly?: boolean } = {},
): Promise<ReencryptionResult[]> {
  const results: ReencryptionResult[] = [];
  for (const column of encryptedColumns) {
    const result: ReencryptionResult = { column: column.name, reencrypted: 0, encryptedPlaintext: 0, unchanged: 0 };
    for (const { id, value } of await column.read(db)) {
      const keyId = envelopeKeyId(value);
      if (keyId === keyring.current.id || (keyId !== null && options.plaintextOnly)) {
        result.unchanged += 1;
        continue;
      }
      const plaintext = keyId === null ? value : open(keyring, column.name, value);
      if (await column.replace(db, id, value, seal(keyring, column.name, plaintext))) {
        if (keyId === null) result.encryptedPlaintext += 1;
        else result.reencrypted += 1;
      }
    }
    results.push(result);
  }
  return results;
}

/** Refuses to run over unreadable secrets, and encrypts plaintext ones, so a running service never leaves a secret readable. */
export async function secureStoredSecrets(db: Db, keyring: Keyring, logger: Logger): Promise<void> {
  const census = await storedSecretsCensus(db);
  const missing = new Set<string>();
  const older = new Set<string>();
  for (const counts of Object.values(census)) {
    for (const keyId of Object.keys(counts)) {
      if (keyId === 'plaintext' || keyId === keyring.current.id) continue;
      (keyring.all.has(keyId) ? older : missing).add(keyId);
    }
  }
  if (missing.size > 0) {
    const ids = [...missing].map((id) => `"${id}"`).join(', ');
    throw new ConfigError([
      {
        setting: 'SECRETS_ENCRYPTION_KEYS',
        message: `does not hold key ${ids}, under which stored secrets are encrypted: add it back (after the current key), run npm run secrets -- reencrypt, and only then remove it`,
      },
    ]);
  }
  const results = await reencryptStoredSecrets(db, keyring, { plaintextOnly: true });
  const encrypted = results.reduce((sum, result) => sum + result.encryptedPlaintext, 0);
  if (encrypted > 0) logger.warn({ encrypted }, `encrypted ${encrypted} stored secret(s) that were in plaintext`);
  if (older.size > 0) {
    logger.info(
      { key_ids: [...older] },
      'some stored secrets use an older encryption key: run npm run secrets -- reencrypt to move them to the current key',
    );
  }
}
