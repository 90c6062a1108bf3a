// API keys: `dlr_<lookup id>_<secret><checksum>`. The prefix lets secret scanners find leaked keys, the
// checksum rejects mistyped keys without the database, and only a SHA-256 is stored: the secret is
// random enough that a slow password hash would add latency and no safety.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { Db, Prisma } from '../db/client.ts';
import { isPermission, type Permission } from './permissions.ts';

export const KEY_PREFIX = 'dlr_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LOOKUP_LENGTH = 12;
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** The form of every key (the OpenAPI document states it for `?token=`). */
export const KEY_PATTERN = new RegExp(
  `^${KEY_PREFIX}([0-9A-Za-z]{${LOOKUP_LENGTH}})_([0-9A-Za-z]{${SECRET_LENGTH}})([0-9A-Za-z]{${CHECKSUM_LENGTH}})$`,
);
/** last_used_at is written at most this often per key, so reads do not all become writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface Actor {
  apiKeyId: number;
  permissions: ReadonlySet<Permission>;
  /** null: the key is not restricted and reaches every dealership. */
  dealershipIds: readonly number[] | null;
  /** null: any document; else only the trusted documents of these client applications (sorted). */
  documentApps: readonly string[] | null;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly distributed.
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function base62Checksum(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i += 1) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function generateKey() {
  const lookupId = randomBase62(LOOKUP_LENGTH);
  const body = `${KEY_PREFIX}${lookupId}_${randomBase62(SECRET_LENGTH)}`;
  const key = body + base62Checksum(body);
  return { key, lookupId, hash: hashKey(key) };
}

export function parseKey(key: string): string | null {
  const match = KEY_PATTERN.exec(key);
  if (!match) return null;
  const body = key.slice(0, -CHECKSUM_LENGTH);
  if (base62Checksum(body) !== key.slice(-CHECKSUM_LENGTH)) return null;
  return match[1] ?? null;
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export const ACTOR_COLUMNS = {
  id: true,
  revoked_at: true,
  expires_at: true,
  permissions: { select: { permission: true } },
  dealerships: { select: { dealership_id: true } },
  document_apps: { select: { app: true } },
} as const satisfies Prisma.ApiKeySelect;

type ActorRow = Prisma.ApiKeyGetPayload<{ select: typeof ACTOR_COLUMNS }>;

/** null: the key is revoked or expired at `now`. */
export function actorOfKey(key: ActorRow, now: Date): Actor | null {
  if ((key.revoked_at && key.revoked_at <= now) || (key.expires_at && key.expires_at <= now)) return null;
  const dealershipIds = key.dealerships.map((row) => row.dealership_id).sort((a, b) => a - b);
  const documentApps = key.document_apps.map((row) => row.app).sort();
  return {
    apiKeyId: key.id,
    permissions: new Set(key.permissions.map((row) => row.permission).filter(isPermission)),
    dealershipIds: dealershipIds.length > 0 ? dealershipIds : null,
    documentApps: documentApps.length > 0 ? documentApps : null,
  };
}

export async function lookUpKey(db: Db, key: string, now: Date) {
  const lookupId = parseKey(key);
  if (!lookupId) return null;
  const secret = await db.apiKeySecret.findUnique({
    where: { lookup_id: lookupId },
    select: { secret_hash: true, retires_at: true, api_key: { select: { ...ACTOR_COLUMNS, last_used_at: true } } },
  });
  if (!secret || !sameHash(secret.secret_hash, hashKey(key))) return null;
  const apiKey = secret.api_key;
  const actor = actorOfKey(apiKey, now);
  if (!actor || (secret.retires_at && secret.retires_at <= now)) return null;
  const deadlines = [apiKey.expires_at, secret.retires_at, apiKey.revoked_at].filter((date): date is Date => date !== null);
  return {
    actor,
    // The earliest of the key's expiry and its secret's retirement; null: neither is set.
    validUntil: deadlines.length > 0 ? new Date(Math.min(...deadlines.map((date) => date.getTime()))) : null,
    lastUsedAt: apiKey.last_used_at,
  };
}

/** The condition bounds the writes per key across every instance, whatever each one remembers. */
export async function recordKeyUse(db: Db, apiKeyId: number, now: Date): Promise<void> {
  await db.apiKey.updateMany({
    where: { id: apiKeyId, OR: [{ last_used_at: null }, { last_used_at: { lte: new Date(now.getTime() - LAST_USED_RESOLUTION_MS) } }] },
    data: { last_used_at: now },
  });
}

export function lastUseIsStale(lastUsedAt: Date | null, now: Date): boolean {
  return !lastUsedAt || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

interface IssueKeyInput {
  name: string;
  permissions: readonly Permission[];
  dealershipIds?: readonly number[];
  documentApps?: readonly string[];
  expiresAt?: Date | null;
}

export async function issueKey(db: Db, input: IssueKeyInput): Promise<{ id: number; key: string }> {
  const secret = generateKey();
  const apiKey = await db.apiKey.create({
    data: {
      name: input.name,
      expires_at: input.expiresAt ?? null,
      secrets: { create: { lookup_id: secret.lookupId, secret_hash: secret.hash } },
      permissions: { create: [...new Set(input.permissions)].map((permission) => ({ permission })) },
      dealerships: { create: [...new Set(input.dealershipIds ?? [])].map((dealership_id) => ({ dealership_id })) },
      document_apps: { create: [...new Set(input.documentApps ?? [])].map((app) => ({ app })) },
    },
  });
  return { id: apiKey.id, key: secret.key };
}

/** Older secrets keep working until `now + overlapMs`, so the integrator deploys the new one without an outage. */
export async function rotateKey(db: Db, apiKeyId: number, overlapMs: number, now: Date): Promise<string> {
  const secret = generateKey();
  const retiresAt = new Date(now.getTime() + overlapMs);
  await db.$transaction([
    db.apiKeySecret.updateMany({ where: { api_key_id: apiKeyId, retires_at: null }, data: { retires_at: retiresAt } }),
    db.apiKeySecret.updateMany({ where: { api_key_id: apiKeyId, retires_at: { gt: retiresAt } }, data: { retires_at: retiresAt } }),
    db.apiKeySecret.create({ data: { api_key_id: apiKeyId, lookup_id: secret.lookupId, secret_hash: secret.hash } }),
  ]);
  return secret.key;
}

export async function revokeKey(db: Db, apiKeyId: number, now: Date): Promise<void> {
  await db.apiKey.update({ where: { id: apiKeyId }, data: { revoked_at: now } });
}
