// Partner mappings (4.14), dealership plugins (4.17) on both doors, and the Dealership graph
// (GraphQL only): shapes, scoping, permissions and a constant SQL statement count per page.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation, makeUser, makeWebsite } from './support/fixtures.ts';
import { installPlugin, makeAddress, makeContactDetail, makePlugin } from './support/fixtures-dealership.ts';

const unauthorized = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const forbidden = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const dealershipNotFound = { error: 'dealership_not_found', message: 'No dealership with that identifier.' };

let app: TestApp;
let north: { id: number; name: string; slug: string };
let south: { id: number; name: string; slug: string };
let quiet: { id: number; slug: string };

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db, { name: 'Northside Motors', slug: 'northside-motors' });
  south = await makeDealership(app.db, { name: 'Southbank Cars', slug: 'southbank-cars' });
  quiet = await makeDealership(app.db, { slug: 'quiet-motors' });
});

describe('GET /api/v1/partner/dealerships', () => {
  const PATH = '/api/v1/partner/dealerships';
  const QUERY = `{ partner_dealerships { dealerships { id: databaseId name dealership_id dealership_name partner_dealership_id partner_account_id } dealerships_truncated } }`;
  let southYard: { id: number };
  let northSales: { id: number };
  let northService: { id: number };
  let all: { key: string };
  let northOnly: { key: string };
  let quietOnly: { key: string };
  let withoutPermission: { key: string };

  beforeAll(async () => {
    // South's mapped location is created first, so ordering by dealership differs from ordering by location id.
    southYard = await makeLocation(app.db, south.id, {
      name: 'Southbank Yard',
      partner_dealership_id: 'PD-300',
      partner_account_id: 'ACC-2',
    });
    northSales = await makeLocation(app.db, north.id, {
      name: 'Northside Sales',
      partner_dealership_id: 'PD-100',
      partner_account_id: 'ACC-1',
    });
    await makeLocation(app.db, north.id, { name: 'Only primary id', partner_dealership_id: 'PD-101' });
    await makeLocation(app.db, north.id, { name: 'Only secondary id', partner_account_id: 'ACC-1' });
    await makeLocation(app.db, north.id, { name: 'Blank secondary id', partner_dealership_id: 'PD-102', partner_account_id: '  ' });
    await makeLocation(app.db, north.id, { name: 'Not mapped' });
    northService = await makeLocation(app.db, north.id, {
      name: 'Northside Service',
      location_type: 'service',
      partner_dealership_id: 'PD-110',
      partner_account_id: 'ACC-1',
    });
    all = await makeKey(app.db, { permissions: ['index:dealership'] });
    northOnly = await makeKey(app.db, { permissions: ['index:dealership'], dealershipIds: [north.id] });
    quietOnly = await makeKey(app.db, { permissions: ['index:dealership'], dealershipIds: [quiet.id] });
    withoutPermission = await makeKey(app.db, { permissions: ['read:contact', 'index:plugin'] });
  });

  it('lists every location with both partner ids, by dealership then location id', async () => {
    const response = await app.request(PATH, { key: all.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      dealerships: [
        {
          id: northSales.id,
          name: 'Northside Sales',
          dealership_id: north.id,
          dealership_name: 'Northside Motors',
          partner_dealership_id: 'PD-100',
          partner_account_id: 'ACC-1',
        },
        {
          id: northService.id,
          name: 'Northside Service',
          dealership_id: north.id,
          dealership_name: 'Northside Motors',
          partner_dealership_id: 'PD-110',
          partner_account_id: 'ACC-1',
        },
        {
          id: southYard.id,
          name: 'Southbank Yard',
          dealership_id: south.id,
          dealership_name: 'Southbank Cars',
          partner_dealership_id: 'PD-300',
          partner_account_id: 'ACC-2',
        },
      ],
      dealerships_truncated: false,
    });
  });

  it("shows a restricted key only its own dealerships' mappings", async () => {
    const body = (await (await app.request(PATH, { key: northOnly.key })).json()) as { dealerships: { id: number }[] };
    expect(body.dealerships.map((mapping) => mapping.id)).toEqual([northSales.id, northService.id]);
    const none = await app.request(PATH, { key: quietOnly.key });
    expect(none.status).toBe(200);
    expect(await none.json()).toEqual({ dealerships: [], dealerships_truncated: false });
  });

  it('answers the same through GraphQL', async () => {
    for (const key of [all.key, northOnly.key]) {
      const rest = await (await app.request(PATH, { key })).json();
      const graph = await app.graphql(QUERY, {}, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.partner_dealerships).toEqual(rest);
    }
  });

  it('is 403 without index:dealership and 401 without a valid key, on both doors', async () => {
    const denied = await app.request(PATH, { key: withoutPermission.key });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual(forbidden);
    for (const headers of [{}, { authorization: 'Bearer not-a-key' }] as Record<string, string>[]) {
      const response = await app.request(PATH, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(unauthorized);
    }
    expect((await app.graphql(QUERY, {}, withoutPermission.key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.graphql(QUERY)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('GET /api/v1/dealerships/{dealership_slug}/plugins', () => {
  const path = (slug: string) => `/api/v1/dealerships/${slug}/plugins`;
  const QUERY = `query ($slug: String!) { dealership_plugins(dealership_slug: $slug) { plugins { name slug categories installed_at trial } } }`;
  let all: { key: string };
  let southOnly: { key: string };
  let withoutPermission: { key: string };

  beforeAll(async () => {
    const chat = await makePlugin(app.db, { name: 'Live Chat', slug: 'live-chat', categories: ['communication', 'sales'] });
    const analytics = await makePlugin(app.db, { name: 'Analytics', slug: 'analytics', categories: ['reporting'] });
    const finance = await makePlugin(app.db, { name: 'Finance Calculator', slug: 'finance-calculator', categories: [] });
    await makePlugin(app.db, { name: 'Not installed', slug: 'not-installed' });
    await installPlugin(app.db, north.id, chat.id, { installed_at: new Date('2026-03-01T08:30:00.000Z'), trial: false });
    await installPlugin(app.db, north.id, analytics.id, { installed_at: new Date('2026-10-02T00:00:00.000Z'), trial: true });
    await installPlugin(app.db, south.id, finance.id, { installed_at: new Date('2025-12-24T23:59:59.000Z') });
    all = await makeKey(app.db, { permissions: ['index:plugin'] });
    southOnly = await makeKey(app.db, { permissions: ['index:plugin'], dealershipIds: [south.id] });
    withoutPermission = await makeKey(app.db, { permissions: ['index:dealership'] });
  });

  it('lists the dealership’s plugins by name', async () => {
    const response = await app.request(path(north.slug), { key: all.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      plugins: [
        { name: 'Analytics', slug: 'analytics', categories: ['reporting'], installed_at: '2026-10-02T00:00:00.000Z', trial: true },
        {
          name: 'Live Chat',
          slug: 'live-chat',
          categories: ['communication', 'sales'],
          installed_at: '2026-03-01T08:30:00.000Z',
          trial: false,
        },
      ],
    });
  });

  it('answers an empty list for a dealership without plugins', async () => {
    const response = await app.request(path(quiet.slug), { key: all.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ plugins: [] });
  });

  it('answers the same through GraphQL', async () => {
    for (const [slug, key] of [
      [north.slug, all.key],
      [south.slug, southOnly.key],
    ] as const) {
      const rest = await (await app.request(path(slug), { key })).json();
      const graph = await app.graphql(QUERY, { slug }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.dealership_plugins).toEqual(rest);
    }
    expect(
      ((await app.graphql(QUERY, { slug: south.slug }, southOnly.key)).data as { dealership_plugins: unknown }).dealership_plugins,
    ).toEqual({
      plugins: [
        { name: 'Finance Calculator', slug: 'finance-calculator', categories: [], installed_at: '2025-12-24T23:59:59.000Z', trial: false },
      ],
    });
  });

  it('is 404 dealership_not_found for an unknown slug, and the same for a dealership outside the key', async () => {
    const unknown = await app.request(path('no-such-dealer'), { key: all.key });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual(dealershipNotFound);
    const outside = await app.request(path(north.slug), { key: southOnly.key });
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual(dealershipNotFound);
    const graph = await app.graphql(QUERY, { slug: north.slug }, southOnly.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
  });

  it('is 403 without index:plugin and 401 without a valid key, on both doors', async () => {
    const denied = await app.request(path(north.slug), { key: withoutPermission.key });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual(forbidden);
    const anonymous = await app.request(path(north.slug));
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(unauthorized);
    expect((await app.graphql(QUERY, { slug: north.slug }, withoutPermission.key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.graphql(QUERY, { slug: north.slug })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('the Dealership graph (GraphQL only)', () => {
  const DEALERSHIP = `query ($id: Int!) {
    dealership(id: $id) {
      id: databaseId name slug
      locations { totalCount edges { node {
        id: databaseId dealership_id name location_type partner_dealership_id partner_account_id
        address { id: databaseId name street city seo_city state postcode lat long place_id place_url }
        contact_detail { id: databaseId email phone mobile landline_phone fax google_maps_url place_id facebook_url instagram_url linkedin_url mailchimp_url tiktok_url youtube_url }
        website { id: databaseId name slug custom_slug url }
      } } }
      websites { totalCount edges { node { id: databaseId name slug custom_slug url } } }
      users { totalCount edges { node { id: databaseId name email } } }
    }
  }`;
  const PAGE = `query ($first: Int, $after: String) {
    dealerships(first: $first, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { cursor node { id: databaseId name locations(first: 5) { totalCount edges { node { id: databaseId name address { city } contact_detail { phone } website { url } } } } users(first: 5) { totalCount edges { node { name email } } } cars(first: 2) { edges { node { id: databaseId stocknum } } } } }
    }
  }`;
  let graphDealer: { id: number; name: string; slug: string };
  let site: { id: number; name: string; slug: string; url: string };
  let yard: { id: number };
  let bare: { id: number };
  let staff: { id: number; email: string };
  let full: { key: string };
  let withoutPersonal: { key: string };
  let southOnly: { key: string };
  let withoutPermission: { key: string };
  let withCars: { key: string };
  let carIds: number[];

  beforeAll(async () => {
    graphDealer = await makeDealership(app.db, { name: 'Graph Motors', slug: 'graph-motors' });
    site = await makeWebsite(app.db, graphDealer.id, {
      name: 'Graph Motors',
      slug: 'graph-motors-site',
      url: 'https://graph.example.com.au',
    });
    yard = await makeLocation(app.db, graphDealer.id, { name: 'Graph Yard', website_id: site.id, partner_dealership_id: 'PD-9' });
    await makeAddress(app.db, yard.id, {
      name: 'Showroom',
      street: '1 Graph St',
      city: 'Geelong',
      state: 'VIC',
      postcode: 3220,
      lat: -38.15,
      long: 144.36,
    });
    await makeContactDetail(app.db, yard.id, { phone: '03 5222 0000', email: 'sales@graph.example.com.au' });
    bare = await makeLocation(app.db, graphDealer.id, { name: 'Graph Service', location_type: 'service' });
    staff = await makeUser(app.db, [graphDealer.id], { name: 'Ada Graph', email: 'Ada@graph.example.com.au' });
    // search:location: a location's contact details are null without it (src/auth/record-access.ts).
    full = await makeKey(app.db, { permissions: ['index:dealership', 'read:personal_data', 'search:location'] });
    withoutPersonal = await makeKey(app.db, { permissions: ['index:dealership'] });
    southOnly = await makeKey(app.db, { permissions: ['index:dealership', 'read:personal_data'], dealershipIds: [south.id] });
    withoutPermission = await makeKey(app.db, { permissions: ['read:contact'] });
    withCars = await makeKey(app.db, { permissions: ['index:dealership', 'read:car'] });
    carIds = [];
    for (const stocknum of ['G1', 'G2', 'G3']) carIds.push((await makeCar(app.db, graphDealer.id, { stocknum })).id);
  });

  it('answers a dealership with its locations (address, contact detail, website), websites and users', async () => {
    const result = await app.graphql(DEALERSHIP, { id: graphDealer.id }, full.key);
    expect(result.errors).toBeUndefined();
    expect(result.data?.dealership).toEqual({
      id: graphDealer.id,
      name: 'Graph Motors',
      slug: 'graph-motors',
      locations: {
        totalCount: 2,
        edges: [
          {
            node: {
              id: yard.id,
              dealership_id: graphDealer.id,
              name: 'Graph Yard',
              location_type: 'sales',
              partner_dealership_id: 'PD-9',
              partner_account_id: null,
              address: {
                id: expect.any(Number),
                name: 'Showroom',
                street: '1 Graph St',
                city: 'Geelong',
                seo_city: null,
                state: 'VIC',
                postcode: 3220,
                lat: -38.15,
                long: 144.36,
                place_id: null,
                place_url: null,
              },
              contact_detail: {
                id: expect.any(Number),
                email: 'sales@graph.example.com.au',
                phone: '03 5222 0000',
                mobile: null,
                landline_phone: null,
                fax: null,
                google_maps_url: null,
                place_id: null,
                facebook_url: null,
                instagram_url: null,
                linkedin_url: null,
                mailchimp_url: null,
                tiktok_url: null,
                youtube_url: null,
              },
              website: {
                id: site.id,
                name: 'Graph Motors',
                slug: 'graph-motors-site',
                custom_slug: null,
                url: 'https://graph.example.com.au',
              },
            },
          },
          {
            node: {
              id: bare.id,
              dealership_id: graphDealer.id,
              name: 'Graph Service',
              location_type: 'service',
              partner_dealership_id: null,
              partner_account_id: null,
              address: null,
              contact_detail: null,
              website: null,
            },
          },
        ],
      },
      websites: {
        totalCount: 1,
        edges: [
          {
            node: { id: site.id, name: 'Graph Motors', slug: 'graph-motors-site', custom_slug: null, url: 'https://graph.example.com.au' },
          },
        ],
      },
      users: { totalCount: 1, edges: [{ node: { id: staff.id, name: 'Ada Graph', email: 'Ada@graph.example.com.au' } }] },
    });
  });

  it('pages the dealership’s cars with read:car, and answers null for them without it', async () => {
    const CARS = `query ($id: Int!, $after: String) {
      dealership(id: $id) { cars(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id: databaseId stocknum } } } }
    }`;
    type Cars = {
      dealership: {
        cars: { pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: number; stocknum: string } }[] } | null;
      };
    };
    const first = await app.graphql<Cars>(CARS, { id: graphDealer.id }, withCars.key);
    expect(first.errors).toBeUndefined();
    expect(first.data?.dealership.cars?.edges.map((edge) => edge.node)).toEqual([
      { id: carIds[0], stocknum: 'G1' },
      { id: carIds[1], stocknum: 'G2' },
    ]);
    expect(first.data?.dealership.cars?.pageInfo.hasNextPage).toBe(true);
    const next = await app.graphql<Cars>(
      CARS,
      { id: graphDealer.id, after: first.data?.dealership.cars?.pageInfo.endCursor },
      withCars.key,
    );
    expect(next.data?.dealership.cars?.edges.map((edge) => edge.node)).toEqual([{ id: carIds[2], stocknum: 'G3' }]);
    const withoutCar = await app.graphql<Cars>(CARS, { id: graphDealer.id }, full.key);
    expect(withoutCar.errors).toBeUndefined();
    expect(withoutCar.data).toEqual({ dealership: { cars: null } });
  });

  it('shows staff work e-mails also without read:personal_data (it guards customers’ data)', async () => {
    const result = await app.graphql<{ dealership: { users: { edges: { node: unknown }[] } } }>(
      DEALERSHIP,
      { id: graphDealer.id },
      withoutPersonal.key,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.dealership.users.edges.map((edge) => edge.node)).toEqual([{ id: staff.id, name: 'Ada Graph', email: staff.email }]);
  });

  it('answers null for an unknown dealership and for one outside the key', async () => {
    const unknown = await app.graphql(DEALERSHIP, { id: 999_999 }, full.key);
    expect(unknown.errors).toBeUndefined();
    expect(unknown.data).toEqual({ dealership: null });
    const outside = await app.graphql(DEALERSHIP, { id: graphDealer.id }, southOnly.key);
    expect(outside.errors).toBeUndefined();
    expect(outside.data).toEqual({ dealership: null });
    const own = await app.graphql<{ dealership: { id: number } }>(DEALERSHIP, { id: south.id }, southOnly.key);
    expect(own.data?.dealership.id).toBe(south.id);
  });

  it('pages the dealerships the key reaches, by id', async () => {
    type Page = { dealerships: { pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: number } }[] } };
    const everyId = (await app.db.dealership.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map((row) => row.id);
    const first = await app.graphql<Page>(PAGE, { first: 2 }, full.key);
    expect(first.errors).toBeUndefined();
    expect(first.data?.dealerships.edges.map((edge) => edge.node.id)).toEqual(everyId.slice(0, 2));
    expect(first.data?.dealerships.pageInfo.hasNextPage).toBe(true);
    const second = await app.graphql<Page>(PAGE, { first: 2, after: first.data?.dealerships.pageInfo.endCursor }, full.key);
    expect(second.data?.dealerships.edges.map((edge) => edge.node.id)).toEqual(everyId.slice(2, 4));
    const restricted = await app.graphql<Page>(PAGE, { first: 10 }, southOnly.key);
    expect(restricted.data?.dealerships.edges.map((edge) => edge.node.id)).toEqual([south.id]);
    expect(restricted.data?.dealerships.pageInfo.hasNextPage).toBe(false);
  });

  it('is FORBIDDEN without index:dealership and UNAUTHENTICATED without a key', async () => {
    for (const [query, variables] of [
      [DEALERSHIP, { id: graphDealer.id }],
      [PAGE, { first: 1 }],
    ] as const) {
      const denied = await app.graphql(query, variables, withoutPermission.key);
      expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(JSON.stringify(denied.data)).not.toContain('Graph Motors');
      const anonymous = await app.graphql(query, variables);
      expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
  });

  it('is not served on the REST door', async () => {
    expect((await app.request('/dealerships', { key: full.key })).status).toBe(404);
    expect((await app.request(`/dealership/${graphDealer.id}`, { key: full.key })).status).toBe(404);
  });

  it('costs the same number of SQL statements for a page of 3 dealerships with locations as for 30', async () => {
    const first = await app.db.dealership.count();
    for (let index = 0; index < 30; index += 1) {
      const dealer = await makeDealership(app.db);
      const site = await makeWebsite(app.db, dealer.id);
      for (const name of ['Sales', 'Service']) {
        const location = await makeLocation(app.db, dealer.id, { name, website_id: site.id });
        await makeAddress(app.db, location.id);
        await makeContactDetail(app.db, location.id, { phone: '03 9000 0000' });
      }
      await makeUser(app.db, [dealer.id]);
      for (let car = 0; car < 3; car += 1) await makeCar(app.db, dealer.id);
    }
    const everything = await makeKey(app.db, { permissions: ['index:dealership', 'read:car', 'read:personal_data'] });
    // Start after the dealerships made above, so every dealership on the page has two locations.
    const skipped = await app.graphql<{ dealerships: { pageInfo: { endCursor: string } } }>(PAGE, { first }, full.key);
    const after = skipped.data?.dealerships.pageInfo.endCursor;
    const count = async (size: number) => {
      app.queries.length = 0;
      const result = await app.graphql<{
        dealerships: {
          edges: { node: { locations: { totalCount: number; edges: { node: { address: unknown } }[] }; cars: { edges: unknown[] } } }[];
        };
      }>(PAGE, { first: size, after }, everything.key);
      expect(result.errors).toBeUndefined();
      const edges = result.data?.dealerships.edges ?? [];
      expect(edges).toHaveLength(size);
      expect(
        edges.every((edge) => edge.node.locations.totalCount === 2 && edge.node.locations.edges.every((l) => l.node.address !== null)),
      ).toBe(true);
      expect(edges.every((edge) => edge.node.cars.edges.length === 2)).toBe(true);
      return app.queries.filter((sql) => !/api_key/i.test(sql)).length;
    };
    // The key's first use (its lookup and last_used_at write) is not the page's cost.
    await app.graphql('{ __typename }', {}, everything.key);
    const small = await count(3);
    // The page, its cursor check, then one statement per relation (locations, users, addresses, cars, …).
    expect(small).toBeLessThanOrEqual(9);
    expect(await count(30)).toBe(small);
  });
});
