// The key lifecycle and the permission matrix, on both doors, for every operation in the schema:
// no key → 401 / UNAUTHENTICATED; a key without the operation's permission → 403 / FORBIDDEN.
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isCompositeType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { revokeKey, rotateKey } from '../src/auth/api-keys.ts';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { accessOfRoute, restRoutes, type RestRoute } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

const DETAILS = '/api/v1/apikeys/apikey_details.json';
/**
 * The operations whose "insufficient permission" the spec's error table calls "unauthorised" (4.4,
 * 4.8, 4.9, 4.11): a valid key without their permission is 401 / UNAUTHENTICATED; every other is 403.
 */
const UNAUTHORISED_WITHOUT_PERMISSION = new Set([
  'Query.model_variant',
  'Mutation.update_lead',
  'Mutation.create_lead',
  'Mutation.create_lead_event',
]);
const DENIED_MESSAGE = 'This API key does not have the permission this operation needs.';

const UNAUTHORIZED_BODY = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const HOUR = 3_600_000;

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

async function detailsStatus(key: string): Promise<number> {
  return (await app.request(DETAILS, { key })).status;
}

describe('key lifecycle', () => {
  it('refuses a well-formed key that was never issued, with the one 401 body', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:car'] });
    await app.db.apiKeySecret.deleteMany({});
    const response = await app.request(DETAILS, { key });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(UNAUTHORIZED_BODY);
  });

  it('refuses an expired key from its expiry on, on both doors', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:car'], expiresAt: new Date(app.clock.now().getTime() + HOUR) });
    expect(await detailsStatus(key)).toBe(200);
    app.clock.advance(HOUR);
    const response = await app.request(DETAILS, { key });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual(UNAUTHORIZED_BODY);
    const graph = await app.graphql('{ apikey_details { id: databaseId } }', {}, key);
    expect(graph.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a revoked key once the remembered verdict runs out (API_KEY_CACHE_TTL_MS), at the latest', async () => {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    expect(await detailsStatus(key)).toBe(200);
    await revokeKey(app.db, id, app.clock.now());
    // Without Redis to announce it, this instance learns of the revocation within the TTL.
    app.clock.advance(app.config.apiKeyCacheTtlMs);
    expect(await detailsStatus(key)).toBe(401);
  });

  it('keeps the old secret working through the rotation overlap, and not after', async () => {
    const { id, key: oldKey } = await makeKey(app.db, { permissions: ['read:car'] });
    const newKey = await rotateKey(app.db, id, HOUR, app.clock.now());
    expect(await detailsStatus(newKey)).toBe(200);
    app.clock.advance(HOUR - 1000);
    expect(await detailsStatus(oldKey)).toBe(200);
    app.clock.advance(1000);
    expect(await detailsStatus(oldKey)).toBe(401);
    expect(await detailsStatus(newKey)).toBe(200);
    // Both secrets belong to the one key: the details answer the same id.
    expect((await (await app.request(DETAILS, { key: newKey })).json()).id).toBe(id);
  });

  it('a second rotation does not extend the first overlap', async () => {
    const { id, key: first } = await makeKey(app.db, { permissions: ['read:car'] });
    await rotateKey(app.db, id, HOUR, app.clock.now());
    await rotateKey(app.db, id, 10 * HOUR, app.clock.now());
    app.clock.advance(HOUR);
    expect(await detailsStatus(first)).toBe(401);
  });

  it('stores no secret: only hashes and the public lookup id', async () => {
    const { key } = await makeKey(app.db, { permissions: ['read:car'] });
    const secretPart = key.split('_')[2] ?? '';
    const rows = await app.db.apiKeySecret.findMany();
    expect(JSON.stringify(rows)).not.toContain(secretPart);
    expect(rows.every((row) => /^[0-9a-f]{64}$/.test(row.secret_hash))).toBe(true);
  });
});

/** Arguments of the right types for any field, so that only authorization decides the answer. */
function sampleValue(type: GraphQLInputType): unknown {
  const inner = getNullableType(type);
  if (isListType(inner)) return [sampleValue(inner.ofType)];
  if (isEnumType(inner)) return inner.getValues()[0]?.value;
  if (isInputObjectType(inner)) {
    return Object.fromEntries(
      Object.values(inner.getFields())
        .filter((field) => isNonNullType(field.type))
        .map((field) => [field.name, sampleValue(field.type)]),
    );
  }
  if (isScalarType(inner)) {
    const samples: Record<string, unknown> = {
      Int: 1,
      Float: 1,
      Boolean: true,
      ID: '1',
      DateTime: '2026-01-01T00:00:00Z',
      Date: '2026-01-01',
      JSON: {},
      JSONObject: {},
    };
    return samples[inner.name] ?? '1';
  }
  return null;
}

function operationFor(
  kind: 'query' | 'mutation',
  field: GraphQLField<unknown, unknown>,
): { query: string; variables: Record<string, unknown> } {
  const required = field.args.filter((arg) => isNonNullType(arg.type));
  const declarations = required.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const passing = required.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isCompositeType(getNamedType(field.type)) ? ' { __typename }' : '';
  return {
    query: `${kind}${declarations ? `(${declarations})` : ''} { ${field.name}${passing ? `(${passing})` : ''}${selection} }`,
    variables: Object.fromEntries(required.map((arg) => [arg.name, sampleValue(arg.type)])),
  };
}

type Scopes = { public?: boolean; authenticated?: boolean; permission?: Permission };

const schema = getSchema();
const graphFields = (['query', 'mutation'] as const).flatMap((kind) => {
  const type = kind === 'query' ? schema.getQueryType() : schema.getMutationType();
  return type
    ? Object.values(type.getFields()).map((field) => ({
        kind,
        field,
        scopes: ((field.extensions as { pothosOptions?: { authScopes?: Scopes } }).pothosOptions?.authScopes ?? {}) as Scopes,
      }))
    : [];
});

describe('permission matrix, GraphQL door', () => {
  const guarded = graphFields.filter(({ scopes }) => !scopes.public);

  it.each(guarded.map((entry) => [entry.field.name, entry] as const))('%s: no key → UNAUTHENTICATED', async (_name, { kind, field }) => {
    const { query, variables } = operationFor(kind, field);
    const result = await app.graphql(query, variables);
    expect(result.errors?.[0]?.extensions?.code, JSON.stringify(result.errors)).toBe('UNAUTHENTICATED');
  });

  const permissioned = guarded.filter(({ scopes }) => scopes.permission);
  it.each(permissioned.map((entry) => [entry.field.name, entry] as const))(
    '%s: every permission but its own → FORBIDDEN, or UNAUTHENTICATED where the spec says unauthorised',
    async (_name, { kind, field, scopes }) => {
      const { key } = await makeKey(app.db, { permissions: allPermissions.filter((p) => p !== scopes.permission) });
      const { query, variables } = operationFor(kind, field);
      const result = await app.graphql(query, variables, key);
      const coordinate = `${kind === 'query' ? 'Query' : 'Mutation'}.${field.name}`;
      const expected = UNAUTHORISED_WITHOUT_PERMISSION.has(coordinate)
        ? { code: 'UNAUTHENTICATED', error: 'unauthorized' }
        : { code: 'FORBIDDEN', error: 'forbidden' };
      expect(result.errors?.[0]?.extensions, JSON.stringify(result.errors)).toEqual(expected);
      expect(result.errors?.[0]?.message).toBe(DENIED_MESSAGE);
    },
  );
});

describe('permission matrix, REST door', () => {
  // Who may call each route is what its root field declares (src/auth/field-access.ts).
  const accessOf = (route: RestRoute) => accessOfRoute(route, getSchema()).access;
  const pathFor = (path: string): string => path.replace(/:([a-z_]+)/g, '1');

  it.each(restRoutes.filter((route) => accessOf(route) !== 'public').map((route) => [route.method, route.path, route] as const))(
    '%s %s: no key → 401, before any input is read',
    async (method, path) => {
      const response = await app.request(pathFor(path), { method, ...(method === 'GET' ? {} : { body: 'not json' }) });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(UNAUTHORIZED_BODY);
    },
  );

  it.each(
    restRoutes
      .filter((route) => accessOf(route) !== 'public' && accessOf(route) !== 'authenticated')
      .map((route) => [route.method, route.path, route] as const),
  )('%s %s: every permission but its own → 403, or 401 where the spec says unauthorised', async (method, path, route) => {
    const { key } = await makeKey(app.db, { permissions: allPermissions.filter((p) => p !== accessOf(route)) });
    const response = await app.request(pathFor(path), { method, key, ...(method === 'GET' ? {} : { json: {} }) });
    const unauthorised = UNAUTHORISED_WITHOUT_PERMISSION.has(route.field);
    expect(response.status).toBe(unauthorised ? 401 : 403);
    expect(await response.json()).toEqual({ error: unauthorised ? 'unauthorized' : 'forbidden', message: DENIED_MESSAGE });
  });
});
