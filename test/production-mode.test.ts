// Production mode (NODE_ENV=production): introspection only for a key holding read:schema, no
// "Did you mean …?" in any error on either door, and the explorers off unless EXPLORERS=on; the
// same requests in development keep all three. One database, one app per mode.
import { getIntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, testSettings, withRequestIdChecked, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;
let production: Yoga;
let productionWithExplorers: Yoga;
let development: Yoga;
let reader: string;
let schemaReader: string;
let leadWriter: string;

function appWith(config: Partial<Config>): Yoga {
  return createApp(instanceDeps({ config: { ...app.config, ...config }, db: app.db, now: app.clock.now }));
}

beforeAll(async () => {
  app = await createTestApp();
  production = appWith({ production: true, explorers: false });
  productionWithExplorers = appWith({ production: true, explorers: true });
  development = appWith({ production: false, explorers: true });
  ({ key: reader } = await makeKey(app.db, { permissions: ['read:car'] }));
  ({ key: schemaReader } = await makeKey(app.db, { permissions: ['read:car', 'read:schema'] }));
  ({ key: leadWriter } = await makeKey(app.db, { permissions: ['create:lead'] }));
});

interface GraphqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function graphql(yoga: Yoga, query: string, key?: string, variables?: Record<string, unknown>): Promise<GraphqlAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await withRequestIdChecked(
    await yoga.fetch('http://gateway.test/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) }),
  );
  return (await response.json()) as GraphqlAnswer;
}

const get = (yoga: Yoga, path: string, accept = '*/*') =>
  Promise.resolve(yoga.fetch(`http://gateway.test${path}`, { headers: { accept } })).then(withRequestIdChecked);

describe('settings', () => {
  const secret = testSettings;
  it('NODE_ENV=production turns production mode on and the explorers off, unless EXPLORERS=on', () => {
    expect(loadConfig({ ...secret, NODE_ENV: 'production' })).toMatchObject({ production: true, explorers: false });
    expect(loadConfig({ ...secret, NODE_ENV: 'production', EXPLORERS: 'on' })).toMatchObject({ production: true, explorers: true });
    expect(loadConfig(secret)).toMatchObject({ production: false, explorers: true });
    expect(loadConfig({ ...secret, EXPLORERS: 'off' })).toMatchObject({ production: false, explorers: false });
    expect(() => loadConfig({ ...secret, EXPLORERS: 'sometimes' })).toThrow(/EXPLORERS must be true or false/);
  });
});

describe('introspection', () => {
  const queries = {
    schema: getIntrospectionQuery(),
    type: '{ __type(name: "Car") { name fields { name } } }',
    'schema in a fragment': '{ ...Schema } fragment Schema on Query { __schema { queryType { name } } }',
  };

  it.each(Object.entries(queries))('%s: production answers only a key holding read:schema', async (_name, query) => {
    const anonymous = await graphql(production, query);
    expect(anonymous.data ?? undefined).toBeUndefined();
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
    const withoutPermission = await graphql(production, query, reader);
    expect(withoutPermission.data ?? undefined).toBeUndefined();
    expect(withoutPermission.errors?.[0]).toMatchObject({
      message: 'Introspection needs a key with the read:schema permission.',
      extensions: { code: 'FORBIDDEN', error: 'forbidden' },
    });
    const allowed = await graphql(production, query, schemaReader);
    expect(allowed.errors).toBeUndefined();
    expect(JSON.stringify(allowed.data)).toContain('"name":"');
  });

  it.each(Object.entries(queries))('%s: development answers anyone', async (_name, query) => {
    const anonymous = await graphql(development, query);
    expect(anonymous.errors).toBeUndefined();
    expect(anonymous.data).toBeTruthy();
  });

  it('__typename is not introspection: production answers it without read:schema', async () => {
    expect(await graphql(production, '{ apikey_details { __typename id: databaseId } }', reader)).toMatchObject({
      data: { apikey_details: { __typename: 'ApiKeyDetails' } },
    });
  });
});

describe('field suggestions', () => {
  const misspelt = '{ apikey_details { permisions } }';
  const badVariable = 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }';

  it('production names the unknown field without suggesting the right one', async () => {
    const answer = await graphql(production, misspelt, reader);
    expect(answer.errors?.map((error) => error.message)).toEqual(['Cannot query field "permisions" on type "ApiKeyDetails".']);
    const unknownArgument = await graphql(production, '{ cars(frist: 1) { edges { cursor } } }', reader);
    expect(unknownArgument.errors?.[0]?.message).toBe('Unknown argument "frist" on field "Query.cars".');
  });

  it('production leaves the suggestion out of GraphQL input errors, still naming the field; REST ignores the unknown field and names it', async () => {
    const graph = await graphql(production, badVariable, leadWriter, { lead: { nme: 'Jo' } });
    expect(graph.errors?.[0]?.message).toMatch(/Field "nme" is not defined by type "LeadInput"\.$/);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'lead.nme' });
    const rest = await production.fetch('http://gateway.test/api/v1/leads', {
      method: 'POST',
      headers: { authorization: `Bearer ${leadWriter}`, 'content-type': 'application/json' },
      body: JSON.stringify({ lead: { nme: 'Jo' } }),
    });
    // REST ignores unknown keys, as the Rails service its clients were written against did, and says which.
    expect(rest.headers.get('x-ignored-parameters')).toBe('lead.nme');
    expect(rest.status).toBe(422);
    expect(await rest.json()).toEqual({
      error: 'invalid_input',
      field: 'lead.dealership_id',
      message: 'lead.dealership_id: is required',
      request_id: rest.headers.get('request-id'),
    });
  });

  it('development keeps the suggestions', async () => {
    expect((await graphql(development, misspelt, reader)).errors?.[0]?.message).toBe(
      'Cannot query field "permisions" on type "ApiKeyDetails". Did you mean "permissions"?',
    );
    const graph = await graphql(development, badVariable, leadWriter, { lead: { nme: 'Jo' } });
    expect(graph.errors?.[0]?.message).toMatch(/Field "nme" is not defined by type "LeadInput"\. Did you mean "name"\?$/);
  });
});

describe('explorers', () => {
  it('production without EXPLORERS serves neither GraphiQL nor Swagger UI, and keeps the OpenAPI document', async () => {
    const graphiql = await get(production, '/graphql', 'text/html');
    expect(graphiql.headers.get('content-type') ?? '').not.toContain('text/html');
    expect(await graphiql.text()).not.toContain('YogaGraphiQL');
    for (const path of ['/docs', '/docs/', '/docs/init.js', '/docs/swagger-ui-bundle.js']) {
      expect((await get(production, path)).status, path).toBe(404);
    }
    const openapi = await get(production, '/openapi.json');
    expect(openapi.status).toBe(200);
    expect((await openapi.json()).openapi).toMatch(/^3\.1/);
  });

  it.each([
    ['production with EXPLORERS=on', () => productionWithExplorers],
    ['development', () => development],
  ])('%s serves both', async (_name, yoga) => {
    const graphiql = await get(yoga(), '/graphql', 'text/html');
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain('YogaGraphiQL');
    const docs = await get(yoga(), '/docs');
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui-bundle.js');
    expect((await get(yoga(), '/docs/swagger-ui-bundle.js')).status).toBe(200);
  });
});
