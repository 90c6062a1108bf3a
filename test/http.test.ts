// The HTTP surface shared by both doors: routing, health, GraphiQL, limits and masked errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../src/rest/routes.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await createTestApp({ bodyLimitBytes: 16_384 });
  key = (await makeKey(app.db, { permissions: ['read:car'] })).key;
});

describe('routing', () => {
  it('answers 404 for a path that is not documented, even one Sofa would generate', async () => {
    for (const path of ['/api/apikey-details', '/apikey_details', '/webhook', '/api/v1/apikeys/apikey_details.json/x']) {
      const response = await app.request(path, { key });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toBe('application/json; charset=utf-8');
      expect(await response.json(), path).toEqual({ error: 'not_found', message: 'No such path.' });
    }
  });

  it('answers 405 with Allow for a documented path called with another method', async () => {
    const response = await app.request('/api/v1/apikeys/apikey_details.json', { method: 'DELETE', key });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect((await response.json()).error).toBe('method_not_allowed');
  });
});

describe('deprecated paths', () => {
  /** A call of the route as a caller without a key makes it: refused before any of its work. */
  const call = (route: (typeof restRoutes)[number]): Promise<Response> =>
    app.request(route.path.replace(/:[A-Za-z_]+/g, '1'), { method: route.method });

  it('answer every caller, refused ones too, with RFC 9745 Deprecation and RFC 8594 Sunset from the route table', async () => {
    const deprecated = restRoutes.filter((route) => route.deprecated);
    expect(deprecated.length).toBeGreaterThan(0);
    for (const route of deprecated) {
      const response = await call(route);
      const { since, sunset } = route.deprecated!;
      // `@` and the Unix seconds of the deprecation day; the sunset day as an IMF-fixdate at 00:00 GMT.
      expect(response.headers.get('deprecation'), route.path).toBe(`@${Date.parse(`${since}T00:00:00Z`) / 1000}`);
      expect(response.headers.get('sunset'), route.path).toBe(new Date(`${sunset}T00:00:00Z`).toUTCString());
      expect(response.headers.get('sunset'), route.path).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} 00:00:00 GMT$/);
    }
  });

  it('are the only ones that say so', async () => {
    for (const route of restRoutes.filter((candidate) => !candidate.deprecated)) {
      const response = await call(route);
      expect(response.headers.get('deprecation'), route.path).toBeNull();
      expect(response.headers.get('sunset'), route.path).toBeNull();
    }
  });
});

describe('health', () => {
  it('reports liveness and readiness', async () => {
    expect(await (await app.request('/health')).json()).toEqual({ status: 'ok' });
    const ready = await app.request('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });
});

describe('GraphiQL', () => {
  it('is served at /graphql with its code inline, loading nothing from a CDN', async () => {
    const response = await app.request('/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('Dealership API');
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    expect(html).not.toMatch(/<link[^>]+href="https?:/);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr\.net|esm\.sh/);
  });
});

describe('limits', () => {
  it('refuses a body over the limit with 413 before reading it', async () => {
    const response = await app.request('/graphql', {
      method: 'POST',
      key,
      json: { query: `{ apikey_details { id: databaseId } }`, padding: 'x'.repeat(20_000) },
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error).toBe('payload_too_large');
  });
});

describe('errors', () => {
  it("names a GraphQL syntax error, which is the caller's to fix", async () => {
    const result = await app.graphql('{ apikey_details { id: databaseId ', {}, key);
    expect(result.errors?.[0]?.message).toMatch(/Syntax Error/);
  });
});

describe('GraphQL query limits', () => {
  it('refuses a document with more aliases than the limit, and accepts one within it', async () => {
    const aliased = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: apikey_details { databaseId }`).join(' ')} }`;
    expect((await app.graphql(aliased(15), {}, key)).errors).toBeUndefined();
    const refused = await app.graphql(aliased(16), {}, key);
    expect(refused.data).toBeUndefined();
    expect(refused.errors?.[0]?.message).toMatch(/aliases/i);
  });

  it('refuses a document with more tokens than the limit', async () => {
    const huge = `{ apikey_details { ${'id '.repeat(3100)} } }`;
    const refused = await app.graphql(huge, {}, key);
    expect(refused.errors?.[0]?.message).toMatch(/token/i);
  });
});
