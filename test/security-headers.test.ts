// Browser-facing defaults (src/gateway/security-headers.ts): CORS only for the configured origins and never
// with credentials, the protective headers on every kind of answer, the explorer pages' own
// Content-Security-Policy, no referrer on redirects, and no caching of answers a key was sent for.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config/index.ts';
import { API_POLICY, EXPOSED_HEADERS } from '../src/gateway/security-headers.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, testSettings, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeUser, makeWebsite } from './support/fixtures.ts';
import { makePartnerToken } from './support/fixtures-events.ts';

const SHOP = 'https://shop.example.com';
const LOCAL = 'http://localhost:5173';

let app: TestApp;
let closed: Yoga;
let open: Yoga;
let key: string;
let websiteId: number;
// A sign-on token has the shape createPartnerToken gives it: 43 base64url characters.
const signOnToken = 'HeaderTestSignOnToken0123456789abcdefghijkl';

function appWith(config: Partial<Config>): Yoga {
  return createApp(instanceDeps({ config: { ...app.config, ...config }, db: app.db, now: app.clock.now }));
}

beforeAll(async () => {
  app = await createTestApp({ corsOrigins: [SHOP, LOCAL], bodyLimitBytes: 16_384 });
  closed = appWith({ corsOrigins: [] });
  open = appWith({ corsOrigins: ['*'] });
  ({ key } = await makeKey(app.db, { permissions: ['read:car', 'create:lead_event'] }));
  const dealership = await makeDealership(app.db, { slug: 'header-motors' });
  websiteId = (await makeWebsite(app.db, dealership.id, { slug: 'header-site', url: 'https://www.header-motors.example.com.au' })).id;
  await makeCar(app.db, dealership.id, { stocknum: 'H1', slug: 'header-car' });
  const user = await makeUser(app.db, [dealership.id], { email: 'partner.user@example.com' });
  await makePartnerToken(app.db, user.id, signOnToken, { expires_at: new Date(app.clock.now().getTime() + 5 * 60_000) });
});

const preflight = (yoga: Yoga, origin: string | null, path = '/graphql') =>
  Promise.resolve(
    yoga.fetch(`http://gateway.test${path}`, {
      method: 'OPTIONS',
      headers: {
        ...(origin === null ? {} : { origin }),
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    }),
  );

describe('CORS preflight', () => {
  it('allows a configured origin, echoing exactly it, without credentials', async () => {
    const methods: Record<string, string> = { '/graphql': 'GET, HEAD, POST', '/api/v1/cars/1/performance.json': 'GET, HEAD' };
    for (const [path, allowed] of Object.entries(methods)) {
      const response = await preflight(app.yoga, SHOP, path);
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
      // The methods of the path asked about, not a fixed list.
      expect(response.headers.get('access-control-allow-methods')).toBe(allowed);
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      // A subscription's client of another origin resumes with Last-Event-ID (docs/subscriptions.md).
      expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('last-event-id');
      expect(response.headers.get('vary')).toContain('Origin');
    }
    expect((await preflight(app.yoga, LOCAL)).headers.get('access-control-allow-origin')).toBe(LOCAL);
  });

  it.each([
    ['another origin', 'https://evil.example.net'],
    ['the null origin', 'null'],
    ['an origin that only starts like an allowed one', `${SHOP}.evil.example.net`],
    ['the allowed host on another scheme', SHOP.replace('https:', 'http:')],
  ])('refuses %s, with no CORS header at all', async (_name, origin) => {
    const response = await preflight(app.yoga, origin);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'origin_not_allowed' });
    for (const name of ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-allow-methods']) {
      expect(response.headers.get(name), name).toBeNull();
    }
  });

  it('refuses every origin by default (no CORS_ORIGINS)', async () => {
    for (const origin of [SHOP, 'null', 'http://localhost:4000']) {
      const response = await preflight(closed, origin);
      expect(response.status, origin).toBe(403);
      expect(response.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });

  it('with CORS_ORIGINS=* allows any origin as *, still without credentials, and never null', async () => {
    const response = await preflight(open, 'https://anywhere.example.org');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect((await preflight(open, 'null')).status).toBe(403);
  });

  it('answers an OPTIONS request that is no preflight with the methods, and no CORS headers', async () => {
    const response = await preflight(app.yoga, null);
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("answers a preflight with the path's own methods, and 404 for a path that does not exist", async () => {
    const reserve = await preflight(app.yoga, SHOP, '/api/v1/cars/1/reserve');
    expect(reserve.status).toBe(204);
    expect(reserve.headers.get('access-control-allow-methods')).toBe('PUT');
    expect(reserve.headers.get('access-control-allow-origin')).toBe(SHOP);
    const unknown = await preflight(app.yoga, SHOP, '/no/such/path');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('CORS on answers', () => {
  it('lets an allowed origin read the answer and the documented headers, never with credentials', async () => {
    const response = await app.request('/api/v1/lead_events/sms/create?data[leadId]=999999', {
      method: 'POST',
      key,
      headers: { origin: SHOP },
    });
    expect(response.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('access-control-expose-headers')?.split(', ')).toEqual([...EXPOSED_HEADERS]);
    expect(EXPOSED_HEADERS).toEqual(
      expect.arrayContaining([
        'Deprecation',
        'Sunset',
        'RateLimit-Limit',
        'RateLimit-Remaining',
        'RateLimit-Reset',
        'RateLimit-Policy',
        'RateLimit',
        'Retry-After',
        'Request-Id',
      ]),
    );
    // The deprecated route's own headers are among those a page may read.
    expect(response.headers.get('deprecation')).toMatch(/^@\d+$/);
  });

  it('gives another origin, null and the default configuration nothing to read with', async () => {
    for (const [yoga, origin] of [
      [app.yoga, 'https://evil.example.net'],
      [app.yoga, 'null'],
      [closed, SHOP],
    ] as const) {
      const response = await yoga.fetch('http://gateway.test/api/v1/apikeys/apikey_details.json', {
        headers: { origin, authorization: `Bearer ${key}` },
      });
      expect(response.status, origin).toBe(200);
      expect(response.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(response.headers.get('access-control-allow-credentials'), origin).toBeNull();
      expect(response.headers.get('access-control-expose-headers'), origin).toBeNull();
    }
  });
});

describe('protective headers', () => {
  // The key is made in beforeAll: `key: KEY` stands for it until the test runs.
  const KEY = 'KEY';
  const authorised = { key: KEY };
  const answers: [string, string, RequestInit & { key?: string; json?: unknown }, number][] = [
    ['REST 200', '/api/v1/apikeys/apikey_details.json', authorised, 200],
    ['REST 401', '/api/v1/apikeys/apikey_details.json', {}, 401],
    ['REST 404', '/api/v1/cars/999999/performance.json', authorised, 404],
    ['REST 422', '/api/v1/cars/1/performance.json?lookup_by=stocknum', authorised, 422],
    ['REST 405', '/api/v1/apikeys/apikey_details.json', { method: 'DELETE', key: KEY }, 405],
    ['REST 413', '/api/v1/leads', { method: 'POST', key: KEY, json: { lead: { message: 'x'.repeat(20_000) } } }, 413],
    ['unknown path 404', '/no/such/path', {}, 404],
    ['GraphQL POST', '/graphql', { method: 'POST', key: KEY, json: { query: '{ apikey_details { id: databaseId } }' } }, 200],
    ['GraphQL GET', '/graphql?query=%7B__typename%7D', {}, 200],
    ['GraphQL refusal', '/graphql', { method: 'POST', key: KEY, json: { query: `{ ${'id '.repeat(1_000)} }` } }, 200],
    ['health', '/health', {}, 200],
    ['readiness', '/ready', {}, 200],
    ['OpenAPI document', '/openapi.json', {}, 200],
    ['Swagger UI script', '/docs/init.js', {}, 200],
    ['preflight', '/graphql', { method: 'OPTIONS', headers: { origin: SHOP, 'access-control-request-method': 'POST' } }, 204],
    ['stock-number redirect', '/api/v1/dealerships/header-motors/redirect_service?website_id=WEBSITE&stocknum=H1', {}, 302],
  ];

  it.each(answers)('%s: nosniff, no framing, no referrer, a Content-Security-Policy', async (_name, path, init, status) => {
    const response = await app.request(path.replace('WEBSITE', String(websiteId)), { ...init, key: init.key === KEY ? key : undefined });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('content-security-policy')).toBe(API_POLICY);
  });

  it('the partner sign-on redirect sends no referrer (its URL holds the token) and is not stored', async () => {
    const response = await app.request(`/api/v1/partner/sign_on?token=${signOnToken}`);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/\/sso\/partner\?session=/);
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('GraphiQL runs under a policy that admits exactly its own inline script', async () => {
    const response = await app.request('/graphql', { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(([, script]) => script ?? '');
    expect(scripts.length).toBeGreaterThan(0);
    const policy = response.headers.get('content-security-policy') ?? '';
    const directives = Object.fromEntries(policy.split('; ').map((directive) => [directive.split(' ')[0], directive]));
    expect(directives['script-src']).toBe(
      `script-src ${scripts.map((script) => `'sha256-${createHash('sha256').update(script).digest('base64')}'`).join(' ')}`,
    );
    expect(directives['default-src']).toBe("default-src 'none'");
    expect(directives['connect-src']).toBe("connect-src 'self'");
    expect(directives['frame-ancestors']).toBe("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("Swagger UI runs under a policy that admits only this server's scripts", async () => {
    const response = await app.request('/docs');
    expect(response.status).toBe(200);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });
});

describe('Cache-Control: no-store on answers a key was sent for', () => {
  it('REST and GraphQL answers to a request with a key, success or failure', async () => {
    const answers = [
      await app.request('/api/v1/apikeys/apikey_details.json', { key }),
      await app.request('/api/v1/cars/999999/performance.json', { key }),
      await app.request('/graphql', { method: 'POST', key, json: { query: '{ apikey_details { id: databaseId } }' } }),
      await app.request('/api/v1/apikeys/apikey_details.json', { headers: { authorization: 'Bearer not-a-key' } }),
    ];
    for (const response of answers) expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('a key sent as ?token= (webhooks) counts too', async () => {
    const response = await app.request(`/api/v1/webhooks/phone_calls_webhooks/generic?token=${key}`, { method: 'POST', json: {} });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('public, keyless answers keep their own caching', async () => {
    expect((await app.request('/docs/swagger-ui.css')).headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });
});

describe('CORS_ORIGINS', () => {
  it('takes exact origins, or * alone, and refuses anything else with the reason', () => {
    expect(loadConfig({ ...testSettings, CORS_ORIGINS: `${SHOP}, ${LOCAL}/` }).corsOrigins).toEqual([SHOP, LOCAL]);
    expect(loadConfig({ ...testSettings, CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(loadConfig(testSettings).corsOrigins).toEqual([]);
    for (const bad of ['null', 'https://shop.example.com/path', 'shop.example.com', 'ftp://files.example.com', `*,${SHOP}`]) {
      expect(() => loadConfig({ ...testSettings, CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS must/);
    }
  });
});
