// Administration of API keys for the CLI (scripts/keys.ts): the lifecycle around issue/rotate/revoke.
import type { Db, Prisma } from '../db/client.ts';
import { notFound, invalidInput } from '../errors.ts';
import { isPermission, type Permission } from './permissions.ts';
import { KEY_PREFIX, parseKey } from './api-keys.ts';

const LOOKUP_PREFIX = new RegExp(`^(?:${KEY_PREFIX})?([0-9A-Za-z]{12})(?:_|$)`);

export type KeySummary = ReturnType<typeof summarise>;

const summaryInclude = {
  permissions: { select: { permission: true }, orderBy: { permission: 'asc' } },
  dealerships: { select: { dealership_id: true }, orderBy: { dealership_id: 'asc' } },
  document_apps: { select: { app: true }, orderBy: { app: 'asc' } },
  secrets: { select: { lookup_id: true, created_at: true, retires_at: true }, orderBy: { id: 'asc' } },
} as const satisfies Prisma.ApiKeyInclude;

type KeyRow = Prisma.ApiKeyGetPayload<{ include: typeof summaryInclude }>;

function summarise(row: KeyRow, now: Date) {
  const status: 'active' | 'expired' | 'revoked' =
    row.revoked_at && row.revoked_at <= now ? 'revoked' : row.expires_at && row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    permissions: row.permissions.map((p) => p.permission),
    /** Empty: every dealership. */
    dealership_ids: row.dealerships.map((d) => d.dealership_id),
    /** Empty: any document; else only the trusted documents of these applications. */
    document_apps: row.document_apps.map((a) => a.app),
    status,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    secrets: row.secrets.map((s) => ({
      lookup_id: s.lookup_id,
      created_at: s.created_at.toISOString(),
      retires_at: s.retires_at?.toISOString() ?? null,
    })),
  };
}

export async function showKey(db: Db, id: number, now: Date): Promise<KeySummary> {
  const row = await db.apiKey.findUnique({ where: { id }, include: summaryInclude });
  if (!row) throw notFound('api_key');
  return summarise(row, now);
}

/** The key an operator names: its id (`3`), a secret's start as `keys show` prints it (`dlr_<lookup id>`…), or the lookup id alone. */
export async function findKeyId(db: Db, reference: string): Promise<number> {
  const text = reference.trim();
  if (/^\d+$/.test(text)) {
    const key = await db.apiKey.findUnique({ where: { id: Number(text) }, select: { id: true } });
    if (key) return key.id;
  } else {
    // A whole key is parsed (its checksum checked) and only its lookup id is used; a prefix is cut at its lookup id.
    const lookupId = parseKey(text) ?? LOOKUP_PREFIX.exec(text)?.[1];
    if (lookupId) {
      const secret = await db.apiKeySecret.findUnique({ where: { lookup_id: lookupId }, select: { api_key_id: true } });
      if (secret) return secret.api_key_id;
    }
  }
  throw notFound('api_key', 'No API key has that id or prefix (see `keys list`).');
}

export async function listKeys(db: Db, now: Date): Promise<KeySummary[]> {
  const rows = await db.apiKey.findMany({ include: summaryInclude, orderBy: { id: 'asc' } });
  return rows.map((row) => summarise(row, now));
}

export function parsePermissions(values: readonly string[]): Permission[] {
  return values.map((value) => {
    if (!isPermission(value)) throw invalidInput('permission', `"${value}" is not a permission (see docs/permissions.md, "Permissions")`);
    return value;
  });
}

export async function assertDealershipsExist(db: Db, ids: readonly number[]): Promise<void> {
  const found = await db.dealership.findMany({ where: { id: { in: [...ids] } }, select: { id: true } });
  const missing = ids.filter((id) => !found.some((row) => row.id === id));
  if (missing.length > 0) throw invalidInput('dealership', `no dealership with id ${missing.join(', ')}`);
}

async function assertKeyExists(db: Db, id: number): Promise<void> {
  if (!(await db.apiKey.findUnique({ where: { id }, select: { id: true } }))) throw notFound('api_key');
}

export async function grantPermissions(db: Db, id: number, permissions: readonly Permission[]): Promise<void> {
  await assertKeyExists(db, id);
  const rows = permissions.map((permission) => ({ api_key_id: id, permission }));
  await db.$transaction(rows.map((row) => db.apiKeyPermission.upsert({ where: { api_key_id_permission: row }, create: row, update: {} })));
}

export async function removePermissions(db: Db, id: number, permissions: readonly Permission[]): Promise<void> {
  await assertKeyExists(db, id);
  await db.apiKeyPermission.deleteMany({ where: { api_key_id: id, permission: { in: [...permissions] } } });
}

export async function addDealerships(db: Db, id: number, dealershipIds: readonly number[]): Promise<void> {
  await assertKeyExists(db, id);
  await assertDealershipsExist(db, dealershipIds);
  const rows = dealershipIds.map((dealership_id) => ({ api_key_id: id, dealership_id }));
  await db.$transaction(
    rows.map((row) => db.apiKeyDealership.upsert({ where: { api_key_id_dealership_id: row }, create: row, update: {} })),
  );
}

/**
 * Removing the last dealership would widen the key to every dealership, so that is refused. The key's
 * row is written first: it locks the key, so two removals at once are counted one after the other.
 */
export async function removeDealerships(db: Db, id: number, dealershipIds: readonly number[]): Promise<void> {
  await assertKeyExists(db, id);
  await db.$transaction(async (tx) => {
    await tx.apiKey.update({ where: { id }, data: { updated_at: new Date() }, select: { id: true } });
    await tx.apiKeyDealership.deleteMany({ where: { api_key_id: id, dealership_id: { in: [...dealershipIds] } } });
    if ((await tx.apiKeyDealership.count({ where: { api_key_id: id } })) === 0) {
      throw invalidInput('dealership', 'a key cannot lose its last dealership (that would open every dealership); revoke it instead');
    }
  });
}

/** The key runs only the trusted documents of these applications (and of those it was locked to already). */
export async function lockToDocumentApps(db: Db, id: number, apps: readonly string[]): Promise<void> {
  await assertKeyExists(db, id);
  const rows = apps.map((app) => ({ api_key_id: id, app }));
  await db.$transaction(rows.map((row) => db.apiKeyDocumentApp.upsert({ where: { api_key_id_app: row }, create: row, update: {} })));
}

/** Taking the last application off opens the key to any document again, as `unlock` without --app says. */
export async function unlockDocumentApps(db: Db, id: number, apps: readonly string[] | null): Promise<void> {
  await assertKeyExists(db, id);
  await db.apiKeyDocumentApp.deleteMany({ where: { api_key_id: id, ...(apps ? { app: { in: [...apps] } } : {}) } });
}
