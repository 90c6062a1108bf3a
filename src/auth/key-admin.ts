// Administration of API keys for the CLI (scripts/keys.ts): the lifecycle around issue/rotate/revoke.
import type { Db, Prisma } from '../db/client.ts';
import { notFound, invalidInput } from '../errors.ts';
import { isPermission, type Permission } from './permissions.ts';
import { KEY_PREFIX, parseKey } from './api-keys.ts';

/** `dlr_<lookup id>`, `dlr_<lookup id>_…` or the lookup id alone. */
const LOOKUP_PREFIX = new RegExp(`^(?:${KEY_PREFIX})?([0-9A-Za-z]{12})(?:_|$)`);

export interface KeySummary {
  id: number;
  name: string;
  permissions: string[];
  /** Empty: every dealership. */
  dealership_ids: number[];
  /** Empty: any document; else only the trusted documents of these applications. */
  document_apps: string[];
  status: 'active' | 'expired' | 'revoked';
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  secrets: { lookup_id: string; created_at: string; retires_at: string | null }[];
}

const summaryInclude = {
  permissions: { select: { permission: true }, orderBy: { permission: 'asc' } },
  dealerships: { select: { dealership_id: true }, orderBy: { dealership_id: 'asc' } },
  document_apps: { select: { app: true }, orderBy: { app: 'asc' } },
  secrets: { select: { lookup_id: true, created_at: true, retires_at: true }, orderBy: { id: 'asc' } },
} as const satisfies Prisma.ApiKeyInclude;

type KeyRow = Prisma.ApiKeyGetPayload<{ include: typeof summaryInclude }>;

function summarise(row: KeyRow, now: Date): KeySummary {
  const status = row.revoked_at && row.revoked_at <= now ? 'revoked' : row.expires_at && row.expires_at <= now ? 'expired' : 'active';
  return {
    id: row.id,
    name: row.name,
    permissions: row.permissions.map((p) => p.permission),
    dealership_ids: row.dealerships.map((d) => d.dealership_id),
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

/**
 * The id of the key an operator names: its id (`3`), or the public start of one of its secrets as
 * `keys show` prints it (`dlr_<lookup id>`, with or without what follows), or the lookup id alone.
 */
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
  await db.$transaction(
    permissions.map((permission) =>
      db.apiKeyPermission.upsert({
        where: { api_key_id_permission: { api_key_id: id, permission } },
        create: { api_key_id: id, permission },
        update: {},
      }),
    ),
  );
}

export async function removePermissions(db: Db, id: number, permissions: readonly Permission[]): Promise<void> {
  await assertKeyExists(db, id);
  await db.apiKeyPermission.deleteMany({ where: { api_key_id: id, permission: { in: [...permissions] } } });
}

export async function addDealerships(db: Db, id: number, dealershipIds: readonly number[]): Promise<void> {
  await assertKeyExists(db, id);
  await assertDealershipsExist(db, dealershipIds);
  await db.$transaction(
    dealershipIds.map((dealership_id) =>
      db.apiKeyDealership.upsert({
        where: { api_key_id_dealership_id: { api_key_id: id, dealership_id } },
        create: { api_key_id: id, dealership_id },
        update: {},
      }),
    ),
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
  await db.$transaction(
    apps.map((app) =>
      db.apiKeyDocumentApp.upsert({
        where: { api_key_id_app: { api_key_id: id, app } },
        create: { api_key_id: id, app },
        update: {},
      }),
    ),
  );
}

/** Taking the last application off opens the key to any document again, as `unlock` without --app says. */
export async function unlockDocumentApps(db: Db, id: number, apps: readonly string[] | null): Promise<void> {
  await assertKeyExists(db, id);
  await db.apiKeyDocumentApp.deleteMany({ where: { api_key_id: id, ...(apps ? { app: { in: [...apps] } } : {}) } });
}
