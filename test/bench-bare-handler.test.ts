// The benchmark's bare handler (scripts/bench-bare-handler.ts) is only an honest floor if it answers
// what the service answers: the same bodies for apikey_details and car performance, for every key
// and car kind, and the same refusals. It runs here on a real node:http server over the demo data.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBareHandler } from '../scripts/bench-bare-handler.ts';
import { createDemoApp } from './support/demo.ts';
import type { TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;
let server: Server;
let base: string;
let keys: Record<'all' | 'restricted' | 'noCar', string>;

beforeAll(async () => {
  const demo = await createDemoApp();
  app = demo.app;
  const restricted = await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [2] });
  const noCar = await makeKey(app.db, { permissions: ['read:contact'] });
  keys = { all: demo.key, restricted: restricted.key, noCar: noCar.key };
  server = createServer(createBareHandler(app.db, app.clock.now));
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

  it('reads with the statements the service runs, its key lookup aside', async () => {
    for (const path of ['/api/v1/apikeys/apikey_details.json', '/api/v1/cars/1/performance.json']) {
      // Warmed first: the service remembers the key's verdict, and the key's last use is recorded.
      await both(path, keys.all);
      app.queries.length = 0;
      await app.request(path, { key: keys.all });
      const service = app.queries.splice(0);
      await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${keys.all}` } });
      // The bare handler looks its key up on every request (the service's key cache is the difference measured).
      const bare = app.queries.splice(0).filter((sql) => !/[`"]api_key/.test(sql));
      expect(service.length, path).toBeGreaterThan(0);
      // The car's figures are read at once (Promise.all), so the order may differ.
      expect([...bare].sort(), path).toEqual([...service].sort());
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
