// A key's view of the API (src/auth/api-view.ts, docs/api-view.md): with a key, /openapi.json lists
// only the operations the key may call and introspection only the root fields it may call; without a
// key both answer the whole public API, as before. What a key may call is computed here from each root
// field's own declaration (accessOfField), for every permission of the closed list, a few
// combinations, every permission at once and none.
import { buildClientSchema, getIntrospectionQuery, graphql as runGraphql, type GraphQLField, type IntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { accessOfField, type FieldAccess } from '../src/auth/field-access.ts';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { buildOpenApiDocument } from '../src/rest/openapi.ts';
import { openApiPath, restRoutes } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import { LINTED_PUBLIC_URL, lintOpenApiDocument } from '../scripts/openapi-lint.ts';
import { createTestApp, instanceDeps, withRequestIdChecked, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

type Operation = { operationId: string; tags: string[]; parameters?: { name: string }[] };
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  /** The deliveries the view's key may subscribe to (OAS 3.1 webhooks). */
  webhooks?: Record<string, unknown>;
  tags: { name: string }[];
  components: { schemas: Record<string, unknown> };
  info: { description: string };
}

const schema = getSchema();
const rootTypes = { Query: schema.getQueryType()!, Mutation: schema.getMutationType()! };

/** Every root field of the graph with its declared access. */
const rootFields: { operation: 'Query' | 'Mutation'; field: GraphQLField<unknown, unknown>; access: FieldAccess }[] = (
  ['Query', 'Mutation'] as const
).flatMap((operation) =>
  Object.values(rootTypes[operation].getFields()).map((field) => ({ operation, field, access: accessOfField(field) })),
);

/** On /graphql a key may call a root field whose own requirement it meets. */
const graphMay = (access: FieldAccess, held: ReadonlySet<Permission>) =>
  access.access === 'public' || access.access === 'authenticated' || held.has(access.access);
/** On the REST door it needs every permission the field needs, the further ones included. */
const restMay = (access: FieldAccess, held: ReadonlySet<Permission>) =>
  access.access === 'public' || access.permissions.every((permission) => held.has(permission));

function expectedRootFields(held: ReadonlySet<Permission>, operation: 'Query' | 'Mutation'): string[] {
  return rootFields
    .filter((root) => root.operation === operation && graphMay(root.access, held))
    .map((root) => root.field.name)
    .sort();
}

/** `METHOD /path` of every route the key may call, by its root field's declaration. */
function expectedOperations(held: ReadonlySet<Permission>): string[] {
  return restRoutes
    .filter((route) => {
      const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
      const field = rootTypes[operation].getFields()[name];
      return field !== undefined && restMay(accessOfField(field), held);
    })
    .map((route) => `${route.method} ${openApiPath(route.path)}`)
    .sort();
}

const operationsOf = (document: OpenApi): string[] =>
  Object.entries(document.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();

/** The component schemas a document's paths reach through `$ref`, transitively. */
function reachableComponents(document: OpenApi): string[] {
  const reached = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      for (const [name, inner] of Object.entries(value)) {
        const target = name === '$ref' && typeof inner === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(inner)?.[1] : undefined;
        if (target !== undefined) {
          if (!reached.has(target)) {
            reached.add(target);
            walk(document.components.schemas[target]);
          }
        } else walk(inner);
      }
    }
  };
  walk(document.paths);
  walk(document.webhooks);
  return [...reached].sort();
}

/** The views tested: one per permission of the closed list, a few combinations, all of them and none. */
const views: { name: string; permissions: Permission[] }[] = [
  ...allPermissions.map((permission) => ({ name: permission, permissions: [permission] })),
  { name: 'payment processors with their secret', permissions: ['show:payment_processor', 'show:payment_processor_secret'] },
  { name: 'leads and personal data', permissions: ['read:lead', 'update:lead', 'read:personal_data'] },
  { name: 'cars and offers', permissions: ['read:car', 'update:car', 'reserve:car', 'index:offer', 'show:model_variant'] },
  { name: 'every permission', permissions: [...allPermissions] },
  { name: 'no permission', permissions: [] },
];

let app: TestApp;
const keyOf = new Map<string, string>();

beforeAll(async () => {
  app = await createTestApp();
  for (const view of views) keyOf.set(view.name, (await makeKey(app.db, { permissions: view.permissions })).key);
});

async function documentFor(key?: string): Promise<{ text: string; response: Response }> {
  const response = await app.request('/openapi.json', key ? { key } : {});
  expect(response.status).toBe(200);
  return { text: await response.clone().text(), response };
}

async function introspect(key?: string): Promise<IntrospectionQuery> {
  const answer = await app.graphql<IntrospectionQuery>(getIntrospectionQuery(), undefined, key);
  expect(answer.errors).toBeUndefined();
  return answer.data!;
}

describe("a key's view of the OpenAPI document", () => {
  it.each(views)('$name: exactly the operations its permissions let it call, and only what they reach', async ({ name, permissions }) => {
    const held = new Set(permissions);
    const { text, response } = await documentFor(keyOf.get(name));
    expect(response.headers.get('vary')).toMatch(/Authorization/i);
    const document = JSON.parse(text) as OpenApi;
    expect(operationsOf(document)).toEqual(expectedOperations(held));
    // No component (a body, an answer's record, a parameter's record) that no operation of the view reaches.
    expect(Object.keys(document.components.schemas).sort()).toEqual(reachableComponents(document));
    // Every tag names at least one of its operations.
    const usedTags = new Set(
      Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((operation) => operation.tags)),
    );
    expect(document.tags.map((tag) => tag.name).filter((tag) => !usedTags.has(tag))).toEqual([]);
    // Each operation it keeps is the public document's, parameters and all.
    const publicDocument = JSON.parse((await documentFor()).text) as OpenApi;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) expect(operation).toEqual(publicDocument.paths[path]?.[method]);
    }
  });

  it('has more than one operation for a key of one permission, and every operation for a key of all of them', async () => {
    // Guards the test above against passing on empty views.
    expect(expectedOperations(new Set(['read:car']))).toContain('GET /api/v1/cars/{id}/performance.json');
    const everything = JSON.parse((await documentFor(keyOf.get('every permission'))).text) as OpenApi;
    const publicDocument = JSON.parse((await documentFor()).text) as OpenApi;
    expect(everything.paths).toEqual(publicDocument.paths);
    expect(everything.components).toEqual(publicDocument.components);
    // A key that holds show:payment_processor without its secret cannot call the route (403): it is not in its view.
    const processors = JSON.parse((await documentFor(keyOf.get('show:payment_processor'))).text) as OpenApi;
    expect(operationsOf(processors)).not.toContain('GET /api/v1/cars/{id}/payment_processors.json');
    expect(processors.components.schemas).not.toHaveProperty('CarPaymentProcessor');
    const withSecret = JSON.parse((await documentFor(keyOf.get('payment processors with their secret'))).text) as OpenApi;
    expect(operationsOf(withSecret)).toContain('GET /api/v1/cars/{id}/payment_processors.json');
    expect(withSecret.components.schemas).toHaveProperty('CarPaymentProcessor');
  });

  it('without a key is the public document, byte for byte as it was written before views existed', async () => {
    const { text } = await documentFor();
    const whole = buildOpenApiDocument(schema, {
      publicUrl: app.config.publicUrl,
      contactEmail: app.config.apiContactEmail,
      leadSources: app.config.leadSources,
    });
    expect(text).toBe(JSON.stringify(whole, null, 2));
    expect(operationsOf(JSON.parse(text) as OpenApi)).toHaveLength(restRoutes.length);
    expect(text).not.toContain('x-permissions": [\n    "');
  });

  it('compressed, each view keeps its own ETag and bytes (no answer carries another view under its validator)', async () => {
    const gzipped = async (key?: string) =>
      app.yoga.fetch('http://gateway.test/openapi.json', {
        headers: { 'accept-encoding': 'gzip', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      });
    const first = await gzipped();
    const keyed = await gzipped(keyOf.get('read:car'));
    const again = await gzipped();
    expect(first.headers.get('content-encoding')).toBe('gzip');
    expect(keyed.headers.get('etag')).not.toBe(first.headers.get('etag'));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(keyed.headers.get('content-length')).not.toBe(first.headers.get('content-length'));
  });

  it('a key that is not valid gets 401, never the public document', async () => {
    const response = await app.request('/openapi.json', { key: 'dlr_0a1B2c3D4e5F_6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'unauthorized' });
  });

  it("passes the OpenAPI lint (Redocly's recommended-strict) for a one-permission view, a combination and the none view", async () => {
    for (const permissions of [['read:car'], ['read:lead', 'update:lead', 'read:personal_data'], []] as Permission[][]) {
      const report = await lintOpenApiDocument(
        buildOpenApiDocument(schema, { publicUrl: LINTED_PUBLIC_URL, viewOf: new Set(permissions) }),
      );
      expect(
        report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`),
        permissions.join(),
      ).toEqual([]);
    }
  }, 120_000);
});

describe("a key's view of the graph (introspection)", () => {
  it.each(views)('$name: exactly the root fields its permissions let it call', async ({ name, permissions }) => {
    const held = new Set(permissions);
    const introspection = await introspect(keyOf.get(name));
    // The view is a schema a client can build and use.
    const client = buildClientSchema(introspection);
    expect(Object.keys(client.getQueryType()?.getFields() ?? {}).sort()).toEqual(expectedRootFields(held, 'Query'));
    expect(Object.keys(client.getMutationType()?.getFields() ?? {}).sort()).toEqual(expectedRootFields(held, 'Mutation'));
  });

  it('leaves out a field that fails without a permission the key lacks, and keeps it for a key that holds it', async () => {
    const fieldsOf = async (key: string | undefined) =>
      (
        await app.graphql<{ __type: { fields: { name: string }[] } | null }>(
          '{ __type(name: "CarPaymentProcessor") { fields { name } } }',
          undefined,
          key,
        )
      ).data?.__type?.fields.map((field) => field.name);
    expect(await fieldsOf(keyOf.get('show:payment_processor'))).not.toContain('authorization_key');
    expect(await fieldsOf(keyOf.get('show:payment_processor'))).toContain('apple_pay_enabled');
    expect(await fieldsOf(keyOf.get('payment processors with their secret'))).toContain('authorization_key');
    // A type no field of the view reaches is not in it.
    expect(await fieldsOf(keyOf.get('create:lead'))).toBeUndefined();
  });

  it('keeps a field the key is answered null (personal data), as its shape still has it', async () => {
    const fieldsOf = async (key: string | undefined) =>
      (
        await app.graphql<{ __type: { fields: { name: string }[] } | null }>('{ __type(name: "Lead") { fields { name } } }', undefined, key)
      ).data?.__type?.fields.map((field) => field.name);
    expect(await fieldsOf(keyOf.get('read:lead'))).toEqual(await fieldsOf(keyOf.get('leads and personal data')));
  });

  it('without a key is the whole schema, as before; with every permission it is the whole schema too', async () => {
    const whole = (await runGraphql({ schema, source: getIntrospectionQuery() })).data;
    expect(await introspect()).toEqual(whole);
    expect(await introspect(keyOf.get('every permission'))).toEqual(whole);
  });

  it('executes on the whole schema: a field outside the view answers the error it always did, and mixed documents answer both', async () => {
    const reader = keyOf.get('read:car');
    const outside = await app.graphql('{ leads(first: 1) { totalCount } }', undefined, reader);
    expect(outside.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const mixed = await app.graphql<{ __schema: { queryType: { fields: { name: string }[] } }; apikey_details: { permissions: string[] } }>(
      '{ __schema { queryType { fields { name } } } apikey_details { permissions } }',
      undefined,
      reader,
    );
    expect(mixed.errors).toBeUndefined();
    expect(mixed.data?.apikey_details.permissions).toEqual(['read:car']);
    expect(mixed.data?.__schema.queryType.fields.map((field) => field.name).sort()).toEqual(
      expectedRootFields(new Set(['read:car']), 'Query'),
    );
  });

  it('never answers one key its cached view of another, with the response cache on', async () => {
    const cached: Yoga = createApp(
      instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { readCache: inMemoryReadCache() }),
    );
    const query = '{ __schema { queryType { fields { name } } } }';
    const rootNames = async (key: string) => {
      const response = await withRequestIdChecked(
        await cached.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ query }),
        }),
      );
      const body = (await response.json()) as { data: { __schema: { queryType: { fields: { name: string }[] } } } };
      return body.data.__schema.queryType.fields.map((field) => field.name).sort();
    };
    for (let round = 0; round < 2; round += 1) {
      expect(await rootNames(keyOf.get('every permission')!)).toEqual(expectedRootFields(new Set(allPermissions), 'Query'));
      expect(await rootNames(keyOf.get('read:contact')!)).toEqual(expectedRootFields(new Set(['read:contact']), 'Query'));
    }
  });
});
