// Spec 4.18 on both doors: the public ad-click redirect. The car page or the stock listing on the
// website's own origin, fbclid carried along, 404s for unknown dealerships and foreign websites, and
// no crafted stock number, fbclid or stored slug can move the browser to another host.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeWebsite } from './support/fixtures.ts';

const QUERY = `query ($dealership_slug: String!, $website_id: String!, $stocknum: String!, $fbclid: String) {
  car_redirect(dealership_slug: $dealership_slug, website_id: $website_id, stocknum: $stocknum, fbclid: $fbclid) { location }
}`;
const ORIGIN = 'https://www.harbourmotors.example.com.au';

let app: TestApp;
let site: { id: number; slug: string };
let secondSite: { id: number };
let otherSite: { id: number; slug: string };
let brokenSite: { id: number };

const path = (query: Record<string, string>, slug = 'harbour-motors') =>
  `/api/v1/dealerships/${slug}/redirect_service?${new URLSearchParams(query).toString()}`;

async function redirectOf(query: Record<string, string>, slug?: string): Promise<string> {
  const response = await app.request(path(query, slug));
  expect(response.status).toBe(302);
  return response.headers.get('location') ?? '';
}

beforeAll(async () => {
  app = await createTestApp();
  const harbour = await makeDealership(app.db, { slug: 'harbour-motors' });
  const other = await makeDealership(app.db, { slug: 'other-motors' });
  site = await makeWebsite(app.db, harbour.id, { slug: 'harbour-site', custom_slug: 'harbour', url: `${ORIGIN}/` });
  secondSite = await makeWebsite(app.db, harbour.id, { slug: 'harbour-second', url: 'http://second.example.com.au/used/stock?x=1' });
  brokenSite = await makeWebsite(app.db, harbour.id, { slug: 'harbour-broken', url: 'javascript:alert(1)' });
  otherSite = await makeWebsite(app.db, other.id, { slug: 'other-site', url: 'https://other.example.com.au' });
  await makeCar(app.db, harbour.id, { stocknum: 'A100', slug: '2020-toyota-corolla-a100' });
  await makeCar(app.db, harbour.id, { stocknum: 'B200', slug: '2021-ford-ranger-b200', custom_slug: 'my-ranger' });
  await makeCar(app.db, harbour.id, { stocknum: 'S300', slug: 'sold-by-date', sold_date: new Date('2026-11-01T00:00:00.000Z') });
  await makeCar(app.db, harbour.id, { stocknum: 'S301', slug: 'sold-by-status', status: 'Sold' });
  await makeCar(app.db, harbour.id, { stocknum: 'H400', slug: 'hidden-car', show_on_dealer_website: false });
  await makeCar(app.db, harbour.id, { stocknum: 'X500', slug: 'crafted-slug', custom_slug: '//evil.com/@x' });
  await makeCar(app.db, other.id, { stocknum: 'O100', slug: 'other-dealers-car' });
});

describe('GET /api/v1/dealerships/{dealership_slug}/redirect_service', () => {
  it("answers a 302 to the car's page on the website, with no key and no body", async () => {
    const response = await app.request(path({ website_id: String(site.id), stocknum: 'A100' }));
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${ORIGIN}/cars/2020-toyota-corolla-a100`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toBe('');
  });

  it('finds the website by id, slug or custom slug', async () => {
    for (const websiteId of [String(site.id), 'harbour-site', 'harbour']) {
      expect(await redirectOf({ website_id: websiteId, stocknum: 'A100' })).toBe(`${ORIGIN}/cars/2020-toyota-corolla-a100`);
    }
  });

  it('prefers the website whose id is the given digits over one whose slug is those digits', async () => {
    const dealer = await makeDealership(app.db, { slug: 'digits-motors' });
    const older = await makeWebsite(app.db, dealer.id, { url: 'https://older.example.com.au' });
    const byId = await makeWebsite(app.db, dealer.id, { url: 'https://by-id.example.com.au' });
    await app.db.website.update({ where: { id: older.id }, data: { slug: String(byId.id) } });
    expect(await redirectOf({ website_id: String(byId.id), stocknum: 'Z1' }, 'digits-motors')).toBe(
      'https://by-id.example.com.au/cars?stocknum=Z1',
    );
    expect(await redirectOf({ website_id: String(older.id), stocknum: 'Z1' }, 'digits-motors')).toBe(
      'https://older.example.com.au/cars?stocknum=Z1',
    );
  });

  it("uses the car's custom slug when it has one, and only the website's origin", async () => {
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'B200' })).toBe(`${ORIGIN}/cars/my-ranger`);
    expect(await redirectOf({ website_id: String(secondSite.id), stocknum: 'B200' })).toBe('http://second.example.com.au/cars/my-ranger');
  });

  it('carries fbclid through as a query parameter', async () => {
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'A100', fbclid: 'IwAR0abc-123_x' })).toBe(
      `${ORIGIN}/cars/2020-toyota-corolla-a100?fbclid=IwAR0abc-123_x`,
    );
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'A100', fbclid: '' })).toBe(`${ORIGIN}/cars/2020-toyota-corolla-a100`);
  });

  it('sends an unknown stock number to the stock listing, with the stock number and fbclid', async () => {
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'NOPE1' })).toBe(`${ORIGIN}/cars?stocknum=NOPE1`);
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'NOPE1', fbclid: 'fb1' })).toBe(`${ORIGIN}/cars?stocknum=NOPE1&fbclid=fb1`);
    // Another dealership's stock number is unknown here.
    expect(await redirectOf({ website_id: 'harbour', stocknum: 'O100' })).toBe(`${ORIGIN}/cars?stocknum=O100`);
  });

  it('sends sold and hidden cars to the stock listing', async () => {
    for (const stocknum of ['S300', 'S301', 'H400']) {
      expect(await redirectOf({ website_id: 'harbour', stocknum })).toBe(`${ORIGIN}/cars?stocknum=${stocknum}`);
    }
  });

  it('works whatever Authorization header comes along (it is public)', async () => {
    const key = await makeKey(app.db, { permissions: [] });
    for (const headers of [{ authorization: `Bearer ${key.key}` }, { authorization: 'Bearer not-a-key' }]) {
      const response = await app.request(path({ website_id: 'harbour', stocknum: 'A100' }), { headers });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${ORIGIN}/cars/2020-toyota-corolla-a100`);
    }
  });

  it('answers the same location through GraphQL, without a key', async () => {
    const cases: Record<string, string>[] = [
      { website_id: 'harbour', stocknum: 'B200', fbclid: 'abc' },
      { website_id: String(site.id), stocknum: 'NOPE2' },
    ];
    for (const variables of cases) {
      const location = await redirectOf(variables);
      const graph = await app.graphql(QUERY, { dealership_slug: 'harbour-motors', ...variables });
      expect(graph.errors).toBeUndefined();
      expect(graph.data).toEqual({ car_redirect: { location } });
    }
  });

  it('is 404 dealership_not_found for an unknown dealership', async () => {
    const response = await app.request(path({ website_id: 'harbour', stocknum: 'A100' }, 'no-such-dealer'));
    expect(response.status).toBe(404);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.json()).toEqual({ error: 'dealership_not_found', message: 'No dealership with that identifier.' });
    const graph = await app.graphql(QUERY, { dealership_slug: 'no-such-dealer', website_id: 'harbour', stocknum: 'A100' });
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
  });

  it("is 404 website_not_found for another dealership's website and for an unknown one", async () => {
    for (const websiteId of [String(otherSite.id), otherSite.slug, '999999', 'no-such-site']) {
      const response = await app.request(path({ website_id: websiteId, stocknum: 'A100' }));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'website_not_found', message: 'No website with that identifier.' });
    }
    const graph = await app.graphql(QUERY, { dealership_slug: 'harbour-motors', website_id: otherSite.slug, stocknum: 'A100' });
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'website_not_found' });
  });

  it('is 404 for a website whose address is not http(s), instead of redirecting there', async () => {
    const response = await app.request(path({ website_id: String(brokenSite.id), stocknum: 'A100' }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'website_not_found', message: 'The website has no http(s) address to redirect to.' });
  });

  it.each([
    [{ stocknum: 'A100' }, 'website_id'],
    [{ website_id: 'harbour' }, 'stocknum'],
    [{ website_id: 'harbour', stocknum: '   ' }, 'stocknum'],
    [{ website_id: 'harbour', stocknum: 'A100', fbclid: 'x'.repeat(501) }, 'fbclid'],
  ])('is 422 naming the parameter for %o', async (query, field) => {
    const response = await app.request(path(query as Record<string, string>));
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field });
    const graph = await app.graphql(QUERY, { dealership_slug: 'harbour-motors', ...query });
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });

  describe('never leaves the website’s host', () => {
    const crafted = [
      '//evil.com',
      'https://evil.com',
      '%2F%2Fevil.com',
      '/\\evil.com',
      '\\\\evil.com',
      '@evil.com',
      'evil.com:443',
      '../../evil.com',
      'A100/../../@evil.com',
      'A100\r\nLocation: https://evil.com',
      'A100%0d%0aLocation:%20https://evil.com',
      'javascript:alert(1)',
      '\u2215\u2215evil.com',
    ];

    it.each(crafted)('with stocknum %j', async (stocknum) => {
      const location = await redirectOf({ website_id: 'harbour', stocknum });
      expect(new URL(location).origin).toBe(ORIGIN);
      expect(location.startsWith(`${ORIGIN}/cars?stocknum=`)).toBe(true);
      expect(new URL(location).searchParams.get('stocknum')).toBe(stocknum.trim());
    });

    it.each(crafted)('with fbclid %j', async (fbclid) => {
      const location = await redirectOf({ website_id: 'harbour', stocknum: 'A100', fbclid });
      expect(new URL(location).origin).toBe(ORIGIN);
      expect(location.startsWith(`${ORIGIN}/cars/2020-toyota-corolla-a100?fbclid=`)).toBe(true);
      expect(new URL(location).searchParams.get('fbclid')).toBe(fbclid.trim());
      expect(location).not.toMatch(/[\r\n]/);
    });

    it('with a stored custom slug that looks like a host', async () => {
      const location = await redirectOf({ website_id: 'harbour', stocknum: 'X500' });
      expect(location).toBe(`${ORIGIN}/cars/%2F%2Fevil.com%2F%40x`);
      expect(new URL(location).origin).toBe(ORIGIN);
    });
  });
});
