// HTTP as clients and load balancers expect it: HEAD wherever GET works (the same status and
// headers, no body), a JSON 404 for every unknown path, and a trailing slash answering like the path.
import { beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../src/rest/routes.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import type { TestApp } from './support/app.ts';

let app: TestApp;
let key: string;

/** One request for every GET route of the table, against the demo data. */
const GET_PATHS: Record<string, string> = {
  ...DEMO_READ_PATHS,
  'Mutation.redeem_partner_token': '/api/v1/partner/sign_on?token=unknown',
};

/** The service's own paths besides the REST table. */
const OTHER_GET_PATHS = ['/health', '/ready', '/openapi.json', '/docs'];

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
}, 120_000);

const headersOf = (response: Response): Record<string, string> => Object.fromEntries(response.headers.entries());

/** A HEAD is counted like the GET it stands for, so what is left of the budget is one less: compared apart. */
const RATE_LIMIT_LEFT = ['ratelimit', 'ratelimit-remaining'];
function withoutBudgetLeft(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !RATE_LIMIT_LEFT.includes(name)));
}

describe('HEAD', () => {
  it('covers every GET route of the table', () => {
    const getRoutes = restRoutes.filter((route) => route.method === 'GET').map((route) => route.field);
    expect(Object.keys(GET_PATHS).sort()).toEqual([...getRoutes].sort());
  });

  it('answers wherever GET does, with the same status and headers and no body', async () => {
    for (const path of [...Object.values(GET_PATHS), ...OTHER_GET_PATHS]) {
      // As sent (not through app.request, which takes error bodies' request_id out): the lengths are compared.
      const raw = (method: string): Promise<Response> =>
        Promise.resolve(app.yoga.fetch(`http://gateway.test${path}`, { method, headers: { authorization: `Bearer ${key}` } }));
      const get = await raw('GET');
      const getBody = new Uint8Array(await get.arrayBuffer());
      const head = await raw('HEAD');
      expect(head.status, path).toBe(get.status);
      expect(head.status, path).not.toBe(405);
      expect(await head.text(), path).toBe('');
      const { 'content-length': length, ...others } = headersOf(head);
      const { 'content-length': getLength, ...getOthers } = headersOf(get);
      // Each answer names its own request; everything else is the same.
      const { 'request-id': headId, ...headRest } = others;
      const { 'request-id': getId, ...getRest } = getOthers;
      expect(headId, path).toEqual(expect.any(String));
      expect(headId, path).not.toBe(getId);
      expect(withoutBudgetLeft(headRest), path).toEqual(withoutBudgetLeft(getRest));
      if (getOthers['ratelimit-remaining'] !== undefined) {
        expect(Number(others['ratelimit-remaining']), path).toBe(Number(getOthers['ratelimit-remaining']) - 1);
      }
      if (getLength !== undefined) expect(length, path).toBe(getLength);
      // The length of the body a GET would carry, as HTTP requires of HEAD.
      expect(Number(length), path).toBe(getBody.byteLength);
    }
  }, 120_000);

  it('answers HEAD on an unknown path with the 404 headers and no body', async () => {
    const response = await app.request('/no/such/path', { method: 'HEAD' });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe('');
  });

  it('lists HEAD in Allow for a GET path called with another method', async () => {
    const response = await app.request('/health', { method: 'DELETE' });
    expect(response.status).toBe(404);
    const rest = await app.request('/api/v1/partner/dealerships', { key, method: 'POST' });
    expect(rest.status).toBe(405);
    expect(rest.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('404', () => {
  it('is the JSON error body with its content type for every unknown path', async () => {
    for (const path of ['/', '/nope', '/api/v1/cars', '/api/v1/cars/1/performance.json/extra', '/docs/x', '/graphqlx']) {
      const response = await app.request(path, { key });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('content-type'), path).toBe('application/json; charset=utf-8');
      expect(await response.json(), path).toEqual({ error: 'not_found', message: 'No such path.' });
    }
  });
});

describe('a trailing slash', () => {
  it('answers like the path without it, for every GET path', async () => {
    for (const path of [...Object.values(GET_PATHS), ...OTHER_GET_PATHS]) {
      const [pathname, query] = path.split('?');
      const slashed = `${pathname}/${query ? `?${query}` : ''}`;
      const plain = await app.request(path, { key });
      const withSlash = await app.request(slashed, { key });
      expect(withSlash.status, slashed).toBe(plain.status);
      expect(withSlash.headers.get('location'), slashed).toBe(plain.headers.get('location'));
      expect(await withSlash.text(), slashed).toBe(await plain.text());
    }
  }, 120_000);

  it('keeps the method and body of a POST', async () => {
    const response = await app.request('/api/v1/leads/', {
      method: 'POST',
      key,
      json: {
        lead: {
          name: 'Jordan Lee',
          email: 'jordan.slash@example.com',
          phone: '0412 345 678',
          dealership_id: 1,
          category: 'Used Vehicle Enquiry',
          source: 'Website',
          send_customer_email: false,
        },
      },
    });
    expect(response.status).toBe(201);
    const { lead } = (await response.json()) as { lead: { id: number } };
    expect(await app.db.lead.findUnique({ where: { id: lead.id }, select: { email: true } })).toEqual({
      email: 'jordan.slash@example.com',
    });
  });
});

describe('OPTIONS', () => {
  /** A concrete path of a route pattern (`/api/v1/cars/:id/reserve` → `/api/v1/cars/1/reserve`). */
  const concrete = (pattern: string): string => pattern.replace(/:[A-Za-z_]+/g, '1');
  /** The methods each documented path answers, from the route table, HEAD wherever GET is. */
  const expectedByPath = new Map<string, Set<string>>();
  for (const route of restRoutes) {
    const methods = expectedByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    if (route.method === 'GET') methods.add('HEAD');
    expectedByPath.set(route.path, methods);
  }
  const order = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];
  const allowOf = (methods: Set<string>): string => [...order.filter((method) => methods.has(method)), 'OPTIONS'].join(', ');

  it('answers every REST path with its own methods from the route table, HEAD included where GET is', async () => {
    expect(expectedByPath.size).toBeGreaterThanOrEqual(19);
    for (const [pattern, methods] of expectedByPath) {
      const path = concrete(pattern);
      const response = await app.request(path, { method: 'OPTIONS' });
      expect(response.status, path).toBe(204);
      expect(response.headers.get('allow'), path).toBe(allowOf(methods));
      // A trailing slash answers like the path without it.
      expect((await app.request(`${path}/`, { method: 'OPTIONS' })).headers.get('allow'), `${path}/`).toBe(allowOf(methods));
      // Every method it lists is answered (not 405, not 404); every other is 405.
      for (const method of ['GET', 'POST', 'PUT']) {
        const answer = await app.request(path, { method, key });
        if (!methods.has(method)) expect(answer.status, `${method} ${path}`).toBe(405);
        else {
          expect(answer.status, `${method} ${path}`).not.toBe(405);
          // A 404 of the route's own (no such record) is fine; the path's "No such path." is not.
          if (answer.status === 404)
            expect(((await answer.json()) as { message: string }).message, `${method} ${path}`).not.toBe('No such path.');
        }
      }
    }
  }, 120_000);

  it("answers the service's own paths and /graphql with theirs", async () => {
    for (const path of OTHER_GET_PATHS) {
      expect((await app.request(path, { method: 'OPTIONS' })).headers.get('allow'), path).toBe('GET, HEAD, OPTIONS');
    }
    expect((await app.request('/graphql', { method: 'OPTIONS' })).headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
  });

  it('answers 404 with the JSON error body for a path that does not exist', async () => {
    for (const path of ['/', '/nope', '/api/v1/cars', '/api/v1/cars/1/performance.json/extra', '/docs/x', '/graphqlx']) {
      const response = await app.request(path, { method: 'OPTIONS' });
      expect(response.status, path).toBe(404);
      expect(response.headers.get('allow'), path).toBeNull();
      expect(await response.json(), path).toEqual({ error: 'not_found', message: 'No such path.' });
    }
  });
});
