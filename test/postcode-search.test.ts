// Spec 4.15 on both doors: the 2.9 shape with the distance, ranking by great-circle distance from the
// postcode, the limit (5 by default, at most 20), the manufacturer's sales locations only (no service
// centres, parts counters, used-car yards, head offices or another brand's showroom), scoping, the
// geolocation errors, and the geocoder itself (loaded once, centroids, replaceable).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledPostcodeFile, distanceKm, PostcodeGeocoder, type GeoPoint, type Geocoder } from '../src/domain/geocoding.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeLocation, makeManufacturer, makeWebsite } from './support/fixtures.ts';
import { franchise, makeAddress, makeContactDetail } from './support/fixtures-dealership.ts';

const QUERY = `query ($id: Int!, $postcode: String!) {
  search_dealerships_by_postcode(id: $id, postcode: $postcode) {
    id: databaseId dealership_id name website_url distance_km
    address { id: databaseId addressable_id addressable_type city created_at updated_at long lat name place_id place_url seo_city postcode state street }
    contact_detail { id: databaseId contactable_id contactable_type created_at updated_at email facebook_url fax google_maps_url instagram_url landline_phone linkedin_url mailchimp_url mobile phone place_id tiktok_url youtube_url }
    website { id: databaseId name url }
  }
}`;
const unauthorized = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const forbidden = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let app: TestApp;
let mazda: { id: number };
let lonely: { id: number };
let cityDealer: { id: number };
let eastDealer: { id: number };
let ids: Record<'cbd' | 'geelong' | 'boxHill' | 'sydney' | 'dandenong' | 'ballarat' | 'darwin' | 'kiaCbd' | 'perth' | 'multiKia', number>;
let kia: { id: number };
let citySite: { id: number; name: string; url: string };
let westSite: { id: number; name: string; url: string };
let unlisted: Record<'noContact' | 'noWebsite', number>;
let full: { key: string };
let eastOnly: { key: string };
let withoutPermission: { key: string };

const path4 = (manufacturerId: number | string, query: string) => `/manufacturers/${manufacturerId}/search_by_postcode${query}`;

beforeAll(async () => {
  app = await createTestApp();
  mazda = await makeManufacturer(app.db, { name: 'Mazda' });
  kia = await makeManufacturer(app.db, { name: 'Kia' });
  lonely = await makeManufacturer(app.db, { name: 'No dealers' });
  cityDealer = await makeDealership(app.db, { name: 'City Mazda' });
  eastDealer = await makeDealership(app.db, { name: 'East Mazda' });
  const westDealer = await makeDealership(app.db, { name: 'West Mazda' });
  const northDealer = await makeDealership(app.db, { name: 'Top End Mazda' });
  const kiaDealer = await makeDealership(app.db, { name: 'City Kia' });
  for (const dealer of [cityDealer, eastDealer, westDealer, northDealer]) await franchise(app.db, dealer.id, mazda.id);
  await franchise(app.db, kiaDealer.id, kia.id);
  // Two franchises, a showroom for each brand and one named for neither.
  const multiDealer = await makeDealership(app.db, { name: 'Southern Cross Motors' });
  await franchise(app.db, multiDealer.id, mazda.id);
  await franchise(app.db, multiDealer.id, kia.id);
  citySite = await makeWebsite(app.db, cityDealer.id, { name: 'City Mazda', url: 'https://citymazda.example.com.au' });
  // A later site of the same dealership: the fallback is the first (lowest id), not this one.
  await makeWebsite(app.db, cityDealer.id, { name: 'City Mazda Used', url: 'https://used.citymazda.example.com.au' });
  westSite = await makeWebsite(app.db, westDealer.id, { name: 'West Mazda', url: 'https://westmazda.example.com.au' });
  for (const dealer of [eastDealer, northDealer, kiaDealer, multiDealer]) await makeWebsite(app.db, dealer.id);

  const place = async (dealershipId: number, name: string, address: Parameters<typeof makeAddress>[2] | null, extra = {}) => {
    const location = await makeLocation(app.db, dealershipId, { name, ...extra });
    if (address) await makeAddress(app.db, location.id, address);
    return location.id;
  };
  ids = {
    cbd: await place(
      cityDealer.id,
      'City Mazda Showroom',
      {
        name: 'Showroom',
        street: '1 Collins St',
        city: 'Melbourne',
        seo_city: 'melbourne',
        state: 'VIC',
        postcode: 3000,
        lat: -37.8136,
        long: 144.9631,
        place_id: 'ChIJ-city',
        place_url: 'https://maps.example.com/city',
      },
      { website_id: citySite.id },
    ),
    geelong: await place(cityDealer.id, 'City Mazda Geelong', { city: 'Geelong', postcode: 3220, lat: -38.1499, long: 144.3617 }),
    boxHill: await place(eastDealer.id, 'East Mazda Box Hill', { city: 'Box Hill', postcode: 3128, lat: -37.8189, long: 145.1225 }),
    sydney: await place(eastDealer.id, 'East Mazda Sydney', {
      city: 'Sydney',
      state: 'NSW',
      postcode: 2000,
      lat: -33.8688,
      long: 151.2093,
    }),
    // No coordinates: placed at its postcode's centroid (about 30 km from the CBD).
    dandenong: await place(westDealer.id, 'West Mazda Dandenong', { city: 'Dandenong', postcode: 3175 }),
    ballarat: await place(westDealer.id, 'West Mazda Ballarat', { city: 'Ballarat', postcode: 3350, lat: -37.5622, long: 143.8503 }),
    // Stored as the integer 800: the search must read it as "0800".
    darwin: await place(northDealer.id, 'Top End Mazda', { city: 'Darwin', state: 'NT', postcode: 800 }),
    kiaCbd: await place(kiaDealer.id, 'City Kia', { city: 'Melbourne', postcode: 3000, lat: -37.8136, long: 144.9631 }),
    // Names neither brand: it sells both.
    perth: await place(multiDealer.id, 'Southern Cross Motors Perth', {
      city: 'Perth',
      state: 'WA',
      postcode: 6000,
      lat: -31.9523,
      long: 115.8613,
    }),
    // Names the dealership's other brand: a Kia showroom, not in a Mazda search.
    multiKia: await place(multiDealer.id, 'Southern Cross KIA', { city: 'Melbourne', postcode: 3000, lat: -37.8136, long: 144.9631 }),
  };
  // Where Mazda's new cars are not sold, though they sit in the CBD: never in a Mazda search.
  const cbd = { city: 'Melbourne', postcode: 3000, lat: -37.8136, long: 144.9631 };
  for (const [name, location_type] of [
    ['City Mazda Service Centre', 'service'],
    ['City Mazda Parts', 'parts'],
    ['City Mazda Head Office', 'head_office'],
    ['City Used Cars', 'used_cars'],
  ] as const) {
    await place(cityDealer.id, name, cbd, { location_type });
  }
  // Neither can be ranked: no address at all, and an address whose postcode is not known and has no coordinates.
  await place(cityDealer.id, 'City Mazda Workshop (no address)', null);
  await makeContactDetail(app.db, await place(westDealer.id, 'West Mazda Nowhere', { city: 'Nowhere', postcode: 1 }));
  for (const [name, id] of Object.entries(ids)) if (name !== 'cbd') await makeContactDetail(app.db, id, { phone: '03 9000 2000' });
  // Right by the CBD, yet nowhere to send the searcher: never a result, and the limit fills from the next nearest.
  const sitelessDealer = await makeDealership(app.db, { name: 'Siteless Mazda' });
  await franchise(app.db, sitelessDealer.id, mazda.id);
  unlisted = {
    noContact: await place(cityDealer.id, 'City Mazda Southbank', { city: 'Southbank', postcode: 3006, lat: -37.8226, long: 144.9646 }),
    noWebsite: await place(sitelessDealer.id, 'Siteless Mazda Carlton', { city: 'Carlton', postcode: 3053, lat: -37.8, long: 144.9671 }),
  };
  await makeContactDetail(app.db, unlisted.noWebsite, { phone: '03 9000 3000' });
  await makeContactDetail(app.db, ids.cbd, {
    email: 'sales@citymazda.example.com.au',
    phone: '03 9000 1000',
    google_maps_url: 'https://maps.example.com/city',
    facebook_url: 'https://facebook.example.com/citymazda',
  });

  full = await makeKey(app.db, { permissions: ['search:location'] });
  eastOnly = await makeKey(app.db, { permissions: ['search:location'], dealershipIds: [eastDealer.id] });
  withoutPermission = await makeKey(app.db, { permissions: ['index:dealership', 'read:contact'] });
});

describe('GET /manufacturers/{id}/search_by_postcode', () => {
  it('answers an array of the 5 closest locations of the manufacturer’s dealerships, nearest first', async () => {
    const response = await app.request(path4(mazda.id, '?postcode=3000'), { key: full.key });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: number }[];
    expect(body.map((location) => location.id)).toEqual([ids.cbd, ids.boxHill, ids.dandenong, ids.geelong, ids.ballarat]);
  });

  it('answers each location in the 2.9 shape', async () => {
    const body = (await (await app.request(path4(mazda.id, '?postcode=3000'), { key: full.key })).json()) as Record<string, unknown>[];
    expect(body[0]).toEqual({
      id: ids.cbd,
      dealership_id: cityDealer.id,
      name: 'City Mazda Showroom',
      website_url: 'https://citymazda.example.com.au',
      address: {
        id: expect.any(Number),
        addressable_id: ids.cbd,
        addressable_type: 'Location',
        city: 'Melbourne',
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        long: 144.9631,
        lat: -37.8136,
        name: 'Showroom',
        place_id: 'ChIJ-city',
        place_url: 'https://maps.example.com/city',
        seo_city: 'melbourne',
        postcode: 3000,
        state: 'VIC',
        street: '1 Collins St',
      },
      contact_detail: {
        id: expect.any(Number),
        contactable_id: ids.cbd,
        contactable_type: 'Location',
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        email: 'sales@citymazda.example.com.au',
        facebook_url: 'https://facebook.example.com/citymazda',
        fax: null,
        google_maps_url: 'https://maps.example.com/city',
        instagram_url: null,
        landline_phone: null,
        linkedin_url: null,
        mailchimp_url: null,
        mobile: null,
        phone: '03 9000 1000',
        place_id: null,
        tiktok_url: null,
        youtube_url: null,
      },
      website: { id: citySite.id, name: 'City Mazda', url: 'https://citymazda.example.com.au' },
      // From the centre of the postcode's localities, not from the showroom's own block.
      distance_km: 1.7,
    });
    // A location without its own website: website_url is null and website is its dealership's.
    expect(body[2]).toEqual({
      id: ids.dandenong,
      dealership_id: expect.any(Number),
      name: 'West Mazda Dandenong',
      website_url: null,
      address: expect.objectContaining({
        addressable_id: ids.dandenong,
        addressable_type: 'Location',
        postcode: 3175,
        lat: null,
        long: null,
      }),
      contact_detail: expect.objectContaining({ contactable_id: ids.dandenong, contactable_type: 'Location', phone: '03 9000 2000' }),
      website: { id: westSite.id, name: 'West Mazda', url: 'https://westmazda.example.com.au' },
      distance_km: expect.any(Number),
    });
  });

  it("answers a location without its own website with its dealership's first website", async () => {
    const body = (await (await app.request(path4(mazda.id, '?postcode=3220'), { key: full.key })).json()) as Record<string, unknown>[];
    expect(body[0]).toMatchObject({
      id: ids.geelong,
      website_url: null,
      website: { id: citySite.id, name: 'City Mazda', url: citySite.url },
    });
  });

  it('leaves out a location without contact details and one whose dealership has no website; the limit fills from the next nearest', async () => {
    for (const limit of ['', '&limit=20']) {
      const body = (await (await app.request(path4(mazda.id, `?postcode=3000${limit}`), { key: full.key })).json()) as { id: number }[];
      const answered = body.map((location) => location.id);
      expect(answered).not.toContain(unlisted.noContact);
      expect(answered).not.toContain(unlisted.noWebsite);
      expect(answered.length).toBe(limit ? 8 : 5);
    }
    const two = (await (await app.request(path4(mazda.id, '?postcode=3006&limit=2'), { key: full.key })).json()) as { id: number }[];
    expect(two.map((location) => location.id)).toEqual([ids.cbd, ids.boxHill]);
  });

  it('answers every result with contact_detail and website objects, on both doors', async () => {
    const rest = (await (await app.request(path4(mazda.id, '?postcode=3000&limit=20'), { key: full.key })).json()) as Record<
      string,
      unknown
    >[];
    const graph = await app.graphql<{ search_dealerships_by_postcode: Record<string, unknown>[] }>(
      QUERY.replace('postcode: $postcode)', 'postcode: $postcode, limit: 20)'),
      { id: mazda.id, postcode: '3000' },
      full.key,
    );
    expect(graph.errors).toBeUndefined();
    for (const results of [rest, graph.data?.search_dealerships_by_postcode ?? []]) {
      expect(results).toHaveLength(8);
      for (const result of results) {
        expect(result.contact_detail).toEqual(expect.objectContaining({ id: expect.any(Number), contactable_id: result.id }));
        expect(result.website).toEqual({ id: expect.any(Number), name: expect.any(String), url: expect.any(String) });
      }
    }
  });

  it('answers only the manufacturer’s sales locations: no service, parts, used cars, head office or other brand’s showroom', async () => {
    const response = await app.request(path4(mazda.id, '?postcode=3000&limit=20'), { key: full.key });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: number; name: string }[];
    expect(body.map((location) => location.id)).toEqual([
      ids.cbd,
      ids.boxHill,
      ids.dandenong,
      ids.geelong,
      ids.ballarat,
      ids.sydney,
      ids.perth,
      ids.darwin,
    ]);
    const kiaSearch = (await (await app.request(path4(kia.id, '?postcode=3000'), { key: full.key })).json()) as { id: number }[];
    expect(kiaSearch.map((location) => location.id)).toEqual([ids.kiaCbd, ids.multiKia, ids.perth]);
  });

  it('adds the distance in kilometres from the postcode, to 0.1 km', async () => {
    const body = (await (await app.request(path4(mazda.id, '?postcode=3000&limit=20'), { key: full.key })).json()) as {
      id: number;
      distance_km: number;
    }[];
    const distances = body.map((location) => location.distance_km);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    const origin = await new PostcodeGeocoder().locate('3000');
    const sydney = body.find((location) => location.id === ids.sydney);
    expect(sydney?.distance_km).toBe(Math.round(distanceKm(origin as GeoPoint, { lat: -33.8688, long: 151.2093 }) * 10) / 10);
    expect(sydney?.distance_km).toBeGreaterThan(700);
    expect(sydney?.distance_km).toBeLessThan(720);
  });

  it('takes a limit from 1 to 20 (5 by default), on both doors', async () => {
    const one = (await (await app.request(path4(mazda.id, '?postcode=3000&limit=1'), { key: full.key })).json()) as { id: number }[];
    expect(one.map((location) => location.id)).toEqual([ids.cbd]);
    const seven = (await (await app.request(path4(mazda.id, '?postcode=3000&limit=7'), { key: full.key })).json()) as { id: number }[];
    expect(seven).toHaveLength(7);
    const graph = await app.graphql<{ search_dealerships_by_postcode: { id: number }[] }>(
      `query ($id: Int!) { search_dealerships_by_postcode(id: $id, postcode: "3000", limit: 2) { id: databaseId distance_km } }`,
      { id: mazda.id },
      full.key,
    );
    expect(graph.data?.search_dealerships_by_postcode.map((location) => location.id)).toEqual([ids.cbd, ids.boxHill]);
  });

  it.each([
    ['0', 'limit: must be a whole number from 1 to 20, got 0'],
    ['21', 'limit: must be a whole number from 1 to 20, got 21'],
    ['-3', 'limit: must be a whole number from 1 to 20, got -3'],
    ['ten', 'limit: must be a whole number, got "ten"'],
    ['2.5', 'limit: must be a whole number, got "2.5"'],
  ])('refuses limit=%s with a 422 naming limit', async (limit, message) => {
    const response = await app.request(path4(mazda.id, `?postcode=3000&limit=${limit}`), { key: full.key });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field: 'limit', message });
    if (/^-?\d+$/.test(limit)) {
      const graph = await app.graphql(
        `{ search_dealerships_by_postcode(id: ${mazda.id}, postcode: "3000", limit: ${limit}) { id: databaseId } }`,
        {},
        full.key,
      );
      expect(graph.errors?.[0]?.message).toBe(message);
      expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'limit' });
    }
  });

  it('ranks from the searched postcode: Darwin first from 0800, Sydney first from 2000', async () => {
    const fromDarwin = (await (await app.request(path4(mazda.id, '?postcode=0800'), { key: full.key })).json()) as { id: number }[];
    expect(fromDarwin[0]?.id).toBe(ids.darwin);
    const fromSydney = (await (await app.request(path4(mazda.id, '?postcode=2000'), { key: full.key })).json()) as { id: number }[];
    expect(fromSydney.map((location) => location.id)).toEqual([ids.sydney, ids.boxHill, ids.dandenong, ids.cbd, ids.geelong]);
    expect(fromSydney.map((location) => location.id)).not.toContain(ids.kiaCbd);
  });

  it('answers the same through GraphQL', async () => {
    for (const key of [full.key, eastOnly.key]) {
      const rest = await (await app.request(path4(mazda.id, '?postcode=3000'), { key })).json();
      const graph = await app.graphql(QUERY, { id: mazda.id, postcode: '3000' }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.search_dealerships_by_postcode).toEqual(rest);
    }
  });

  it("ranks only a restricted key's own dealerships' locations", async () => {
    const body = (await (await app.request(path4(mazda.id, '?postcode=3000'), { key: eastOnly.key })).json()) as { id: number }[];
    expect(body.map((location) => location.id)).toEqual([ids.boxHill, ids.sydney]);
  });

  it('answers an empty array for a manufacturer without dealerships', async () => {
    const response = await app.request(path4(lonely.id, '?postcode=3000'), { key: full.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it.each([
    ['300', 'postcode: "300" is not a four-digit Australian postcode'],
    ['30000', 'postcode: "30000" is not a four-digit Australian postcode'],
    ['abcd', 'postcode: "abcd" is not a four-digit Australian postcode'],
    ['30 00', 'postcode: "30 00" is not a four-digit Australian postcode'],
    ['3000x', 'postcode: "3000x" is not a four-digit Australian postcode'],
    ['', 'postcode: is required'],
    ['0000', 'postcode: no place is known for 0000'],
    ['0001', 'postcode: no place is known for 0001'],
  ])('is 422 geolocation_error naming postcode for "%s"', async (postcode, message) => {
    const response = await app.request(path4(mazda.id, `?postcode=${encodeURIComponent(postcode)}`), { key: full.key });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'geolocation_error', message, field: 'postcode' });
    const graph = await app.graphql(QUERY, { id: mazda.id, postcode }, full.key);
    expect(graph.errors?.[0]?.message).toBe(message);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'geolocation_error', field: 'postcode' });
  });

  it('accepts surrounding spaces around a postcode', async () => {
    const response = await app.request(path4(mazda.id, '?postcode=%203000%20'), { key: full.key });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: number }[])[0]?.id).toBe(ids.cbd);
  });

  it('is 422 geolocation_error naming postcode when it is missing, and invalid_input naming id when that is not a number', async () => {
    const missing = await app.request(path4(mazda.id, ''), { key: full.key });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toEqual({ error: 'geolocation_error', message: 'postcode: is required', field: 'postcode' });
    const graph = await app.graphql(`{ search_dealerships_by_postcode(id: ${mazda.id}) { id: databaseId } }`, {}, full.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'geolocation_error', field: 'postcode' });
    const badId = await app.request(path4('mazda', '?postcode=3000'), { key: full.key });
    expect(badId.status).toBe(422);
    expect(await badId.json()).toMatchObject({ error: 'invalid_input', field: 'id' });
  });

  it('is 404 manufacturer_not_found for an unknown manufacturer', async () => {
    const response = await app.request(path4(999_999, '?postcode=3000'), { key: full.key });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'manufacturer_not_found', message: 'No manufacturer with that identifier.' });
    const graph = await app.graphql(QUERY, { id: 999_999, postcode: '3000' }, full.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'manufacturer_not_found' });
  });

  it('is 403 without search:location and 401 without a valid key, on both doors', async () => {
    const denied = await app.request(path4(mazda.id, '?postcode=3000'), { key: withoutPermission.key });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual(forbidden);
    for (const headers of [{}, { authorization: 'Bearer dlr_bad' }] as Record<string, string>[]) {
      const response = await app.request(path4(mazda.id, '?postcode=3000'), { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(unauthorized);
    }
    expect((await app.graphql(QUERY, { id: mazda.id, postcode: '3000' }, withoutPermission.key)).errors?.[0]?.extensions?.code).toBe(
      'FORBIDDEN',
    );
    expect((await app.graphql(QUERY, { id: mazda.id, postcode: '3000' })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  describe('with another geocoder in place', () => {
    const calls: string[] = [];
    const sydney: GeoPoint = { lat: -33.8688, long: 151.2093 };
    const stub: Geocoder = {
      locate: async (postcode) => {
        calls.push(postcode);
        return postcode === '1234' ? sydney : null;
      },
    };
    it('uses the geocoder the service is given, asking once per distinct postcode', async () => {
      const stubbed = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { geocoder: stub }));
      const response = await stubbed.fetch(`http://gateway.test${path4(mazda.id, '?postcode=1234')}`, {
        headers: { authorization: `Bearer ${full.key}` },
      });
      expect(response.status).toBe(200);
      // The stub knows neither 3175 nor 0800, so those locations cannot be placed.
      expect(((await response.json()) as { id: number }[]).map((location) => location.id)).toEqual([
        ids.sydney,
        ids.boxHill,
        ids.cbd,
        ids.geelong,
        ids.ballarat,
      ]);
      expect(calls.sort()).toEqual(['0001', '0800', '1234', '3175']);
    });
  });
});

describe('PostcodeGeocoder', () => {
  const shared = new PostcodeGeocoder();

  it('answers the centroid of a postcode’s localities from the bundled data', async () => {
    const rows = JSON.parse(await readFile(bundledPostcodeFile(), 'utf8')) as { postcode: string; lat: number; long: number }[];
    const sydneyRows = rows.filter((row) => row.postcode === '2000');
    expect(sydneyRows.length).toBeGreaterThan(1);
    const expected = {
      lat: sydneyRows.reduce((sum, row) => sum + row.lat, 0) / sydneyRows.length,
      long: sydneyRows.reduce((sum, row) => sum + row.long, 0) / sydneyRows.length,
    };
    const located = await shared.locate('2000');
    expect(located?.lat).toBeCloseTo(expected.lat, 9);
    expect(located?.long).toBeCloseTo(expected.long, 9);
    const melbourne = await shared.locate('3000');
    expect(melbourne?.lat).toBeCloseTo(-37.814, 2);
    expect(melbourne?.long).toBeCloseTo(144.98, 1);
    expect((await shared.centroids()).size).toBe(new Set(rows.map((row) => row.postcode)).size);
  });

  it('answers null for unknown and malformed postcodes', async () => {
    for (const postcode of ['0001', '0000', '123', '12345', 'abcd', '']) expect(await shared.locate(postcode)).toBeNull();
  });

  describe('loading', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'geocoder-'));
    const file = path.join(dir, 'postcodes.json');
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads its file once: later searches do not see the file change', async () => {
      writeFileSync(
        file,
        JSON.stringify([
          { postcode: '1111', locality: 'A', lat: -30, long: 150 },
          { postcode: '1111', locality: 'B', lat: -32, long: 152 },
          { postcode: '2222', locality: 'C', lat: 0, long: 0 },
          { postcode: '333', locality: 'D', lat: -1, long: 1 },
        ]),
      );
      const local = new PostcodeGeocoder({ file });
      const [first, again] = await Promise.all([local.locate('1111'), local.locate('1111')]);
      expect(first).toEqual({ lat: -31, long: 151 });
      expect(again).toEqual(first);
      expect(await local.locate('2222')).toBeNull();
      rmSync(file);
      expect(await local.locate('1111')).toEqual({ lat: -31, long: 151 });
    });

    it('retries a load that failed', async () => {
      const missing = path.join(dir, 'later.json');
      const local = new PostcodeGeocoder({ file: missing });
      await expect(local.locate('1111')).rejects.toThrow();
      writeFileSync(missing, JSON.stringify([{ postcode: '1111', lat: -10, long: 120 }]));
      expect(await local.locate('1111')).toEqual({ lat: -10, long: 120 });
    });
  });

  it('measures great-circle distances', () => {
    const melbourne = { lat: -37.8136, long: 144.9631 };
    const sydney = { lat: -33.8688, long: 151.2093 };
    expect(distanceKm(melbourne, sydney)).toBeGreaterThan(705);
    expect(distanceKm(melbourne, sydney)).toBeLessThan(720);
    expect(distanceKm(melbourne, melbourne)).toBe(0);
    expect(distanceKm(sydney, melbourne)).toBeCloseTo(distanceKm(melbourne, sydney), 9);
  });
});
