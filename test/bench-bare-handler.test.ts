// The benchmark's bare handler (scripts/bench-bare-handler.ts) is only an honest floor if it answers
// what the service answers: the same bodies and statuses for every route of its table (walked here, so
// a route added later is held too), for keys of every reach and permission, and the same refusals.
// It runs here on a real node:http server over the demo data.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bareRoutes, createBareHandler } from '../scripts/bench-bare-handler.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { PostcodeGeocoder } from '../src/domain/geocoding.ts';
import { restRoutes } from '../src/rest/routes.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';
import type { TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;
let server: Server;
let base: string;
let keys: Record<'all' | 'restricted' | 'noCar', string>;
/** Keys of other reaches and permissions, for the walk over every route. */
let moreKeys: Record<'oneDealership' | 'none' | 'noSecret', string>;

/**
 * Requests that each route answers with its not-found or refusal outcomes (by the route's root field),
 * beside DEMO_READ_PATHS' one answered request per route.
 */
const REFUSED_PATHS: Readonly<Record<string, readonly string[]>> = {
  'Query.car_payment_processors': [
    '/api/v1/cars/999999/payment_processors.json',
    '/api/v1/cars/1/payment_processors.json?website=no-such-site',
  ],
  'Query.model_variant': [
    '/api/v1/model_variants/no-such-variant?website_id=1',
    '/api/v1/model_variants/toyota-corolla-sx-hybrid?website_id=999999',
  ],
  'Query.manufacturer_offers': ['/manufacturers/999999/offers.json'],
  'Query.website_offer': ['/websites/1/offers/999999.json', '/websites/999999/offers/13.json'],
  'Query.contact': ['/dealerships/1/contacts/999999', '/dealerships/999999/contacts/1'],
  'Query.contacts': ['/dealerships/999999/contacts', '/dealerships/1/contacts?per_page=500'],
  'Query.search_dealerships_by_postcode': [
    '/manufacturers/1/search_by_postcode?postcode=0000',
    '/manufacturers/999999/search_by_postcode?postcode=3000',
  ],
  'Query.dealership_plugins': ['/api/v1/dealerships/no-such-dealership/plugins'],
  'Query.website_models': ['/api/v1/websites/no-such-site/models', '/api/v1/websites/richmond-toyota/models?version=3'],
  'Query.webhook_deliveries': ['/api/v1/webhook_subscriptions/999999/deliveries'],
};

beforeAll(async () => {
  const demo = await createDemoApp();
  app = demo.app;
  const restricted = await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [2] });
  const noCar = await makeKey(app.db, { permissions: ['read:contact'] });
  keys = { all: demo.key, restricted: restricted.key, noCar: noCar.key };
  const oneDealership = await makeKey(app.db, { permissions: allPermissions, dealershipIds: [2] });
  const none = await makeKey(app.db, { permissions: [] });
  const noSecret = await makeKey(app.db, { permissions: ['read:car', 'show:payment_processor'] });
  moreKeys = { oneDealership: oneDealership.key, none: none.key, noSecret: noSecret.key };
  server = createServer(
    createBareHandler(app.db, app.clock.now, { secretsKeyring: app.config.secretsKeyring, geocoder: new PostcodeGeocoder() }),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The service's and the bare handler's answers to one GET with one key. */
async function both(
  path: string,
  key: string | null,
): Promise<{ service: { status: number; body: unknown }; bare: { status: number; body: unknown } }> {
  const service = await app.request(path, key ? { key } : {});
  const bare = await fetch(`${base}${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return { service: { status: service.status, body: await service.json() }, bare: { status: bare.status, body: await bare.json() } };
}

describe('the bench bare handler answers what the service answers', () => {
  it('serves every REST read that answers a JSON body (its paths and access are the REST door’s, by root field)', () => {
    const reads = restRoutes.filter((route) => route.method === 'GET' && route.field.startsWith('Query.') && route.successStatus !== 302);
    expect(bareRoutes.map((route) => route.field).sort()).toEqual(reads.map((route) => route.field).sort());
  });

  it('every route of its table, for keys of every reach and permission', async () => {
    for (const route of bareRoutes) {
      const path = DEMO_READ_PATHS[route.field];
      expect(path, `${route.field} needs a request in DEMO_READ_PATHS`).toBeDefined();
      if (!path) continue;
      const answered = await both(path, keys.all);
      expect(answered.service.status, `${route.field} ${path}`).toBe(200);
      expect(answered.bare, `${route.field} ${path}`).toEqual(answered.service);
      for (const [name, key] of Object.entries({ ...keys, ...moreKeys })) {
        const { service, bare } = await both(path, key);
        expect(bare, `${route.field} ${path} (${name})`).toEqual(service);
      }
      for (const refused of REFUSED_PATHS[route.field] ?? []) {
        const { service, bare } = await both(refused, keys.all);
        expect(service.status, refused).toBeGreaterThanOrEqual(400);
        expect(bare, refused).toEqual(service);
      }
    }
  });

  it('apikey_details, for a key that reaches every dealership and one restricted without personal data', async () => {
    for (const [name, key] of Object.entries(keys)) {
      const { service, bare } = await both('/api/v1/apikeys/apikey_details.json', key);
      expect(service.status, name).toBe(200);
      expect(bare, name).toEqual(service);
    }
  });

  it('car performance, for cars with leads, price changes, photos, calls and views, and a sold one, by id, slug and VIN', async () => {
    const withLeads = await app.db.car.findFirstOrThrow({ where: { leads: { some: {} } }, select: { id: true, slug: true } });
    const withPriceChanges = await app.db.car.findFirstOrThrow({ where: { price_changes: { some: {} } }, select: { id: true, vin: true } });
    const sold = await app.db.car.findFirstOrThrow({ where: { sold_date: { not: null } }, select: { id: true } });
    const paths = [
      `/api/v1/cars/${withLeads.id}/performance.json`,
      `/api/v1/cars/${withLeads.slug}/performance.json`,
      `/api/v1/cars/${withPriceChanges.vin}/performance.json?lookup_by=vin`,
      `/api/v1/cars/${sold.id}/performance.json`,
      '/api/v1/cars/1/performance.json',
    ];
    for (const path of paths) {
      const { service, bare } = await both(path, keys.all);
      expect(service.status, path).toBe(200);
      expect(bare, path).toEqual(service);
    }
    const figures = (await both(`/api/v1/cars/${withLeads.id}/performance.json`, keys.all)).bare.body as { leads: unknown[] };
    expect(figures.leads.length).toBeGreaterThan(0);
  });

  it('reads with the statements the service runs, its key lookup aside, on every route', async () => {
    for (const path of bareRoutes.map((route) => DEMO_READ_PATHS[route.field] ?? '')) {
      // Warmed first: the service remembers the key's verdict, and the key's last use is recorded.
      await both(path, keys.all);
      app.queries.length = 0;
      await app.request(path, { key: keys.all });
      const service = app.queries.splice(0);
      await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${keys.all}` } });
      // The bare handler looks its key up on every request (the service's key cache is the difference measured).
      const bare = app.queries.splice(0).filter((sql) => !/(?:FROM|UPDATE|INTO)\s+(?:[`"]\w+[`"]\.)?[`"]api_key/.test(sql));
      expect(service.length, path).toBeGreaterThan(0);
      // Some reads are made at once (Promise.all: the car's figures), so the order may differ.
      expect.soft([...bare].sort(), path).toEqual([...service].sort());
    }
  });

  it('refuses as the service does: no key, an unknown key, a car outside the key, a key without read:car', async () => {
    const otherDealershipCar = await app.db.car.findFirstOrThrow({ where: { dealership_id: { not: 2 } }, select: { id: true } });
    const cases: [string, string, string | null][] = [
      ['no key', '/api/v1/apikeys/apikey_details.json', null],
      ['unknown key', '/api/v1/cars/1/performance.json', `${keys.all.slice(0, -8)}AAAAAAAA`],
      ['car outside the key', `/api/v1/cars/${otherDealershipCar.id}/performance.json`, keys.restricted],
      ['no such car', '/api/v1/cars/999999/performance.json', keys.all],
      ['no read:car', '/api/v1/cars/1/performance.json', keys.noCar],
    ];
    for (const [name, path, key] of cases) {
      const { service, bare } = await both(path, key);
      expect(service.status, name).toBeGreaterThanOrEqual(400);
      expect(bare, name).toEqual(service);
    }
  });
});
