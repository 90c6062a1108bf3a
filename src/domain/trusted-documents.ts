// Trusted documents: the GraphQL documents client applications publish per version, found by their
// SHA-256, the keys locked to them, and their use (docs/trusted-documents.md).
import { hash } from 'node:crypto';
import { getOperationAST, parse, validate, type GraphQLError, type GraphQLSchema } from 'graphql';
import { isUniqueViolation, type Db } from '../db/client.ts';
import { conflict, invalidInput, notFound } from '../errors.ts';
import { isPlainObject } from '../lib/json.ts';

type ManifestDocument = { hash: string; body: string };

const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/;
const HASH = /^[0-9a-f]{64}$/;
const MAX_DOCUMENTS = 5_000;
const MAX_DOCUMENT_CHARACTERS = 100_000;

export const documentHash = (text: string): string => hash('sha256', text, 'hex');

export const isDocumentHash = (value: string): boolean => HASH.test(value);

export function checkAppName(app: string | undefined, field = 'app'): string {
  if (!app || !APP_NAME.test(app))
    throw invalidInput(field, 'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  return app;
}

function checkVersion(version: string | undefined): string {
  if (!version || !VERSION.test(version)) throw invalidInput('version', 'must be 1 to 64 letters, digits, ".", "+", "_" or "-"');
  return version;
}

/** Relay's and graphql-codegen's `{ "<id>": "<text>" }`, or Apollo's persisted-query manifest. */
export function readManifest(text: string): ManifestDocument[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidInput('manifest', 'is not JSON');
  }
  if (!isPlainObject(json)) throw invalidInput('manifest', 'must be a JSON object');
  if (json.format === 'apollo-persisted-query-manifest') {
    if (json.version !== 1) throw invalidInput('manifest.version', 'must be 1 (the only Apollo manifest version)');
    if (!Array.isArray(json.operations)) throw invalidInput('manifest.operations', 'must be a list');
    return json.operations.map((operation: unknown, index) => {
      if (!isPlainObject(operation) || typeof operation.id !== 'string' || typeof operation.body !== 'string')
        throw invalidInput(`manifest.operations[${index}]`, 'must have a string id and body');
      return { hash: operation.id, body: operation.body };
    });
  }
  return Object.entries(json).map(([hash, body]) => {
    if (typeof body !== 'string') throw invalidInput(`manifest.${hash}`, 'must be the document text');
    return { hash, body };
  });
}

/** Every document's problems at once, so one publish shows everything to fix. */
function documentProblems(schema: GraphQLSchema, documents: readonly ManifestDocument[]) {
  const problems: { hash: string; errors: string[] }[] = [];
  for (const { hash, body } of documents) {
    const errors: string[] = [];
    if (!HASH.test(hash)) errors.push('the id is not a lowercase hex SHA-256 (Relay: persistConfig algorithm "SHA256")');
    else if (documentHash(body) !== hash) errors.push('the id is not the SHA-256 of the document text');
    if (body.length > MAX_DOCUMENT_CHARACTERS) errors.push(`the text is over ${MAX_DOCUMENT_CHARACTERS} characters`);
    else {
      try {
        const document = parse(body);
        const found = validate(schema, document);
        if (found.length === 0 && !getOperationAST(document)) errors.push('the document must hold exactly one operation');
        errors.push(...found.map((error) => error.message));
      } catch (error) {
        errors.push((error as GraphQLError).message);
      }
    }
    if (errors.length > 0) problems.push({ hash, errors });
  }
  return problems;
}

function operationName(body: string): string | null {
  return getOperationAST(parse(body))?.name?.value ?? null;
}

/** All or nothing: a version is published once, with every document valid against `schema`. */
export async function publishRelease(
  db: Db,
  schema: GraphQLSchema,
  input: { app: string | undefined; version: string | undefined; documents: readonly ManifestDocument[] },
) {
  const app = checkAppName(input.app);
  const version = checkVersion(input.version);
  if (input.documents.length === 0) throw invalidInput('manifest', 'holds no documents');
  if (input.documents.length > MAX_DOCUMENTS) throw invalidInput('manifest', `holds more than ${MAX_DOCUMENTS} documents`);
  const problems = documentProblems(schema, input.documents);
  if (problems.length > 0) {
    const lines = problems.flatMap(({ hash, errors }) => errors.map((error) => `  ${hash}: ${error}`));
    throw invalidInput('manifest', `${problems.length} document(s) do not validate, nothing was published:\n${lines.join('\n')}`);
  }
  if (await db.documentRelease.findUnique({ where: { app_version: { app, version } }, select: { id: true } }))
    throw conflict('release_exists', `${app} ${version} is published already; publish its documents under a new version`);
  const unique = [...new Map(input.documents.map((document) => [document.hash, document])).values()];
  try {
    return await db.$transaction(async (tx) => {
      for (const { hash, body } of unique) {
        await tx.trustedDocument.upsert({ where: { hash }, create: { hash, body, operation_name: operationName(body) }, update: {} });
      }
      const release = await tx.documentRelease.create({
        data: { app, version, documents: { create: unique.map(({ hash }) => ({ hash })) } },
      });
      return { app, version, published_at: release.published_at.toISOString(), documents: unique.length };
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw conflict(
      'publish_raced',
      `another publish wrote ${app} ${version} or one of its documents meanwhile; nothing was published, run it again`,
    );
  }
}

export async function listReleases(db: Db, app?: string) {
  const rows = await db.documentRelease.findMany({
    where: app ? { app: checkAppName(app) } : {},
    orderBy: [{ app: 'asc' }, { published_at: 'desc' }, { id: 'desc' }],
    include: { _count: { select: { documents: true } } },
  });
  return rows.map((row) => ({
    app: row.app,
    version: row.version,
    published_at: row.published_at.toISOString(),
    documents: row._count.documents,
  }));
}

export async function listReleaseDocuments(db: Db, app: string, version: string) {
  const release = await db.documentRelease.findUnique({
    where: { app_version: { app: checkAppName(app), version: checkVersion(version) } },
    include: { documents: { include: { document: { select: { operation_name: true } } }, orderBy: { hash: 'asc' } } },
  });
  if (!release) throw notFound('release', `No release ${app} ${version} (see \`documents list\`).`);
  return release.documents.map((entry) => ({ hash: entry.hash, operation_name: entry.document.operation_name }));
}

export async function documentUsage(db: Db, app?: string) {
  const rows = await db.documentReleaseEntry.findMany({
    where: app ? { release: { app: checkAppName(app) } } : {},
    include: { release: { select: { app: true, version: true } }, document: { select: { operation_name: true } } },
  });
  return rows
    .map((row) => ({
      ...row.release,
      hash: row.hash,
      operation_name: row.document.operation_name,
      use_count: row.use_count,
      last_used_at: row.last_used_at?.toISOString() ?? null,
    }))
    .sort((a, b) => a.app.localeCompare(b.app) || a.version.localeCompare(b.version) || a.hash.localeCompare(b.hash));
}

/** The release of `version` holding the document when the client names one, else the newest, among `apps` (null: any application's). */
export async function findTrustedDocument(
  db: Db,
  hash: string,
  apps: readonly string[] | null,
  version: string | null = null,
): Promise<{ body: string; releaseId: number } | null> {
  const inApps = apps ? { app: { in: [...apps] } } : {};
  const entry = await db.documentReleaseEntry.findFirst({
    where: { hash, release: version ? { ...inApps, version } : inApps },
    orderBy: [{ release: { published_at: 'desc' } }, { release_id: 'desc' }],
    select: { release_id: true, document: { select: { body: true } } },
  });
  if (!entry && version) return findTrustedDocument(db, hash, apps);
  return entry ? { body: entry.document.body, releaseId: entry.release_id } : null;
}

export type DocumentUse = { releaseId: number; hash: string; count: number; lastUsedAt: Date };

export async function recordDocumentUses(db: Db, uses: readonly DocumentUse[]): Promise<void> {
  for (const use of uses) {
    await db.documentReleaseEntry.updateMany({
      where: { release_id: use.releaseId, hash: use.hash },
      data: { use_count: { increment: use.count }, last_used_at: use.lastUsedAt },
    });
  }
}

export type ActiveDocument = Awaited<ReturnType<typeof activeDocuments>>[number];

/** Active: in its application's latest release, or used within `days` of `now`. */
export async function activeDocuments(db: Db, now: Date, days: number) {
  const latest = await db.documentRelease.findMany({
    orderBy: [{ published_at: 'desc' }, { id: 'desc' }],
    distinct: ['app'],
    select: { id: true },
  });
  const usedSince = new Date(now.getTime() - days * 86_400_000);
  const rows = await db.documentReleaseEntry.findMany({
    where: { OR: [{ release_id: { in: latest.map((release) => release.id) } }, { last_used_at: { gte: usedSince } }] },
    include: { release: { select: { app: true, version: true } }, document: { select: { operation_name: true, body: true } } },
  });
  return rows.map((row) => ({ ...row.release, hash: row.hash, ...row.document }));
}
