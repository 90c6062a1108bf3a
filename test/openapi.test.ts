// The published contract: a valid OpenAPI 3.1 document covering exactly the REST route table,
// served with Swagger UI from this server, and a checker that really rejects what it should.
import { Validator } from '@seriousme/openapi-schema-validator';
import { printSchema } from 'graphql';
import { getSchema } from '../src/schema/index.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { accessOfRoute, openApiPath, restRoutes } from '../src/rest/routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { assertMatchesContract, openApiDocument } from './support/contract.ts';
import { LINTED_PUBLIC_URL, lintOpenApiDocument } from '../scripts/openapi-lint.ts';
import { buildOpenApiDocument, UNSAMPLED_ERROR_MESSAGE } from '../src/rest/openapi.ts';

type Operation = {
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
  security?: unknown[];
  'x-permission'?: string;
};
type Paths = Record<string, Record<string, Operation>>;

let app: TestApp;
let served: { openapi: string; paths: Paths };

beforeAll(async () => {
  app = await createTestApp();
  const response = await app.request('/openapi.json');
  expect(response.status).toBe(200);
  served = await response.json();
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 by a third-party validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(served) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("passes Redocly's recommended-strict ruleset with no problem, run offline (and the ruleset finds one where there is)", async () => {
    // As a deployment serves it: the ruleset refuses a server on localhost, which the test apps use.
    const report = await lintOpenApiDocument(buildOpenApiDocument(getSchema(), { publicUrl: LINTED_PUBLIC_URL }));
    expect(report.problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    const bare = await lintOpenApiDocument({
      openapi: '3.1.0',
      info: { title: 'x', version: '1' },
      servers: [{ url: 'http://localhost:4000' }],
      paths: {},
    });
    expect(bare.problems.map((problem) => problem.ruleId)).toEqual(expect.arrayContaining(['info-license', 'no-server-example.com']));
  }, 180_000);

  it('is the document the suite validates responses against', () => {
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it('has exactly the operations of the route table, and every route is implemented', () => {
    const documented = Object.entries(served.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const routed = restRoutes.map((route) => `${route.method} ${openApiPath(route.path)}`);
    expect(documented.sort()).toEqual(routed.sort());
  });

  it('reads each parameter where it is really read, with no mangled path keys', () => {
    for (const [path, operations] of Object.entries(served.paths)) {
      expect(path).not.toMatch(/\{[^}]*\.[^}]*\}/); // Sofa's {id.json}
      for (const [method, operation] of Object.entries(operations)) {
        const names = (operation.parameters ?? []).map((parameter) => parameter.name);
        expect(new Set(names).size, `${method} ${path}`).toBe(names.length);
        const pathParams = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
        expect(pathParams.sort()).toEqual([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort());
        if (method === 'get') expect(operation.requestBody).toBeUndefined();
      }
    }
  });

  it('states the security and permission of each operation', () => {
    for (const route of restRoutes) {
      const operation = served.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      const { access } = accessOfRoute(route, getSchema());
      expect(operation?.['x-permission']).toBe(access);
      expect(operation?.security).toEqual(access === 'public' ? [] : [{ bearer: [] }]);
      if (access !== 'public') expect(Object.keys(operation?.responses ?? {})).toContain('401');
    }
  });
});

describe('what the document tells an integrator', () => {
  type Full = {
    info: { contact?: { url?: string }; license?: { name?: string } };
    servers: { url: string }[];
    tags: { name: string; description: string }[];
    paths: Record<
      string,
      Record<
        string,
        Operation & {
          tags: string[];
          description: string;
          parameters?: { name: string; in: string }[];
          responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { example?: unknown }> }>;
        }
      >
    >;
  };
  const full = () => served as unknown as Full;
  const operations = () => Object.values(full().paths).flatMap((byMethod) => Object.values(byMethod));

  it('shows every error status of every operation with a message the service answers, none a placeholder', () => {
    const examples = operations().flatMap((operation) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .map(([status, response]) => ({ status, example: response.content?.['application/json']?.example as { message?: string } })),
    );
    expect(examples.length).toBeGreaterThan(100);
    expect(examples.filter(({ example }) => typeof example?.message !== 'string' || example.message === UNSAMPLED_ERROR_MESSAGE)).toEqual(
      [],
    );
  });

  it('names this service, from PUBLIC_URL, as its server, with a contact and a licence', () => {
    expect(full().servers).toEqual([{ url: 'http://localhost:4000', description: 'This service' }]);
    expect(full().info.contact?.url).toBe('http://localhost:4000/docs');
    expect(full().info.license?.name).toMatch(/Proprietary/);
  });

  it('declares each tag once, and every operation uses a declared one', () => {
    const names = full().tags.map((tag) => tag.name);
    expect(new Set(names).size).toBe(names.length);
    for (const operation of operations()) for (const tag of operation.tags) expect(names).toContain(tag);
  });

  it('documents 429 with Retry-After and the rate-limit headers on every operation, and an example on every error', () => {
    for (const operation of operations()) {
      expect(Object.keys(operation.responses['429']?.headers ?? {})).toEqual(
        expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'Retry-After']),
      );
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) >= 400)
          expect(response.content?.['application/json']?.example, `${operation['x-permission']} ${status}`).toBeDefined();
      }
    }
  });

  it('states per operation what a key without its permission gets, as its root field declares', () => {
    for (const route of restRoutes) {
      const operation = served.paths[openApiPath(route.path)]?.[route.method.toLowerCase()] as Operation & {
        'x-permission-denied-status'?: number;
      };
      const { access, deniedStatus } = accessOfRoute(route, getSchema());
      if (access === 'public' || access === 'authenticated') continue;
      expect(operation['x-permission-denied-status'], route.field).toBe(deniedStatus);
      if (deniedStatus === 401) expect(JSON.stringify(operation.responses['401']), route.field).toContain(access);
    }
  });

  it('documents the Idempotency-Key of lead creation', () => {
    const create = full().paths['/api/v1/leads']?.post;
    expect(create?.parameters?.find((parameter) => parameter.name === 'Idempotency-Key')?.in).toBe('header');
  });

  it('marks every deprecated route deprecated, and documents its Deprecation and Sunset on every answer with its own days', () => {
    const deprecated = restRoutes.filter((route) => route.deprecated);
    expect(deprecated.length).toBeGreaterThan(0);
    for (const route of restRoutes) {
      const operation = full().paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
      expect((operation as { deprecated?: boolean } | undefined)?.deprecated === true, route.path).toBe(route.deprecated !== undefined);
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const headers = (response.headers ?? {}) as Record<string, { example?: string }>;
        if (!route.deprecated) {
          expect(Object.keys(headers), `${route.path} ${status}`).not.toEqual(expect.arrayContaining(['Deprecation']));
          continue;
        }
        expect(headers.Deprecation?.example, `${route.path} ${status}`).toBe(
          `@${Date.parse(`${route.deprecated.since}T00:00:00Z`) / 1000}`,
        );
        expect(headers.Sunset?.example, `${route.path} ${status}`).toBe(new Date(`${route.deprecated.sunset}T00:00:00Z`).toUTCString());
      }
    }
  });

  it('explains operations without pointing at internal documents', () => {
    expect(JSON.stringify(served)).not.toMatch(/\b[Ss]pec(ification)? \d/);
    // GraphiQL's documentation is the schema's descriptions.
    expect(printSchema(getSchema())).not.toMatch(/\b[Ss]pec(ification)? \d/);
  });
});

describe('the contract checker', () => {
  const details = '/api/v1/apikeys/apikey_details.json';
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

  it('accepts a documented answer', async () => {
    await expect(
      assertMatchesContract('GET', details, json(200, { id: 1, permissions: [], dealerships: [], dealerships_truncated: false })),
    ).resolves.toBeUndefined();
  });

  it('rejects an extra field, a missing field, a wrong type and an undocumented status', async () => {
    await expect(
      assertMatchesContract(
        'GET',
        details,
        json(200, { id: 1, permissions: [], dealerships: [], dealerships_truncated: false, secret: 'x' }),
      ),
    ).rejects.toThrow(/does not match/);
    await expect(assertMatchesContract('GET', details, json(200, { id: 1, permissions: [] }))).rejects.toThrow(/does not match/);
    await expect(assertMatchesContract('GET', details, json(200, { id: '1', permissions: [], dealerships: [] }))).rejects.toThrow(
      /does not match/,
    );
    await expect(assertMatchesContract('GET', details, json(418, { error: 'teapot', message: 'x' }))).rejects.toThrow(/does not list/);
    await expect(assertMatchesContract('GET', details, json(401, { error: 'unauthorized' }))).rejects.toThrow(/does not match/);
  });
});

describe('Swagger UI', () => {
  it('is served with its code from this server, loading nothing from elsewhere', async () => {
    const page = await app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toMatch(/(src|href)="https?:/);
    for (const asset of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '')) {
      const response = await app.request(asset);
      expect(response.status, asset).toBe(200);
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const init = await (await app.request('/docs/init.js')).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('persistAuthorization: true');
  });

  it('answers 404 for files it does not serve', async () => {
    expect((await app.request('/docs/../package.json')).status).toBe(404);
    expect((await app.request('/docs/swagger-ui-bundle.js.map')).status).toBe(404);
  });
});
