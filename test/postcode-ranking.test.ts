// The postcode search (spec 4.15) ranks in the database: with many more showrooms than the limit,
// spread over the country, some placed only by their postcode, some at the very same point (ties),
// some of another brand, the answer is exactly the k nearest by distanceKm (ties by id), on both
// doors, for an unrestricted and a restricted key; and the SQL distance is distanceKm's.
import { beforeAll, describe, expect, it } from 'vitest';
import { distanceKm, distanceKmSql, PostcodeGeocoder, type GeoPoint } from '../src/domain/geocoding.ts';
import { Prisma } from '../src/generated/prisma/sqlite/client.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeManufacturer, makeWebsite } from './support/fixtures.ts';
import { franchise } from './support/fixtures-dealership.ts';

let app: TestApp;
let grid: { id: number };
let full: { key: string };
let restricted: { key: string };
let restrictedDealerships: number[];
const geocoder = new PostcodeGeocoder();

/** A small deterministic generator, so a failure is the same failure on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

interface Showroom {
  id: number;
  dealership_id: number;
  name: string;
  lat: number | null;
  long: number | null;
  postcode: number;
}
const showrooms: Showroom[] = [];
const tiedIds: number[] = [];
const POSTCODES_WITHOUT_COORDINATES = [3000, 3175, 2000, 4000, 5000, 2600, 3220, 800];

beforeAll(async () => {
  app = await createTestApp();
  grid = await makeManufacturer(app.db, { name: 'Grid' });
  const rival = await makeManufacturer(app.db, { name: 'Rival' });
  const next = random(43);
  const dealerships: number[] = [];
  for (let d = 0; d < 12; d += 1) {
    const dealership = await makeDealership(app.db, { name: `Grid Dealer ${d}` });
    await franchise(app.db, dealership.id, grid.id);
    if (d % 3 === 0) await franchise(app.db, dealership.id, rival.id);
    await makeWebsite(app.db, dealership.id);
    dealerships.push(dealership.id);
  }
  restrictedDealerships = [dealerships[2] as number, dealerships[7] as number];
  let previous: { lat: number; long: number } = { lat: -37.8, long: 145 };
  for (let n = 0; n < 150; n += 1) {
    const dealership_id = dealerships[n % dealerships.length] as number;
    // Every 9th showroom sits exactly where the one before it does: a tie, broken by id.
    const point = n % 9 === 8 ? previous : { lat: -44 + next() * 32, long: 114 + next() * 40 };
    previous = point;
    const placedByPostcode = n % 7 === 3;
    const name = n % 11 === 5 ? `Rival Showroom ${n}` : `Grid Showroom ${n}`;
    const location = await app.db.location.create({
      data: {
        dealership_id,
        name,
        location_type: n % 13 === 6 ? 'service' : 'sales',
        address: {
          create: {
            street: `${n} Grid St`,
            city: 'Somewhere',
            state: 'VIC',
            postcode: placedByPostcode ? (POSTCODES_WITHOUT_COORDINATES[n % POSTCODES_WITHOUT_COORDINATES.length] as number) : 3000,
            ...(placedByPostcode ? {} : point),
          },
        },
        ...(n % 17 === 10 ? {} : { contact_detail: { create: { phone: '03 9000 0000' } } }),
      },
    });
    if (n % 13 !== 6 && n % 17 !== 10 && n % 11 !== 5) {
      showrooms.push({
        id: location.id,
        dealership_id,
        name,
        lat: placedByPostcode ? null : point.lat,
        long: placedByPostcode ? null : point.long,
        postcode: placedByPostcode ? (POSTCODES_WITHOUT_COORDINATES[n % POSTCODES_WITHOUT_COORDINATES.length] as number) : 3000,
      });
    }
  }
  // Two showrooms at the very same point by the CBD: a tie among the nearest, broken by id.
  for (const dealership_id of [dealerships[5] as number, dealerships[1] as number]) {
    const name = `Grid Showroom Collins St ${dealership_id}`;
    const at = { lat: -37.8141, long: 144.9633 };
    const location = await app.db.location.create({
      data: {
        dealership_id,
        name,
        address: { create: { street: '2 Collins St', city: 'Melbourne', state: 'VIC', postcode: 3000, ...at } },
        contact_detail: { create: { phone: '03 9000 0000' } },
      },
    });
    tiedIds.push(location.id);
    showrooms.push({ id: location.id, dealership_id, name, ...at, postcode: 3000 });
  }
  full = await makeKey(app.db, { permissions: ['search:location'] });
  restricted = await makeKey(app.db, { permissions: ['search:location'], dealershipIds: restrictedDealerships });
});

/** The answer worked out here, from every showroom: distanceKm from the postcode's centre, ties by id. */
async function expectedNearest(
  postcode: string,
  limit: number,
  reach: readonly number[] | null,
): Promise<{ id: number; distance_km: number }[]> {
  const origin = (await geocoder.locate(postcode)) as GeoPoint;
  const placed: { id: number; distance: number }[] = [];
  for (const showroom of showrooms) {
    if (reach && !reach.includes(showroom.dealership_id)) continue;
    const point =
      showroom.lat !== null && showroom.long !== null
        ? { lat: showroom.lat, long: showroom.long }
        : await geocoder.locate(String(showroom.postcode).padStart(4, '0'));
    if (point) placed.push({ id: showroom.id, distance: distanceKm(origin, point) });
  }
  placed.sort((a, b) => a.distance - b.distance || a.id - b.id);
  return placed.slice(0, limit).map(({ id, distance }) => ({ id, distance_km: Math.round(distance * 10) / 10 }));
}

const searchPath = (postcode: string, limit: number) => `/manufacturers/${grid.id}/search_by_postcode?postcode=${postcode}&limit=${limit}`;

describe('the postcode search over many showrooms', () => {
  it('has more showrooms than any limit, ties among them, and some placed by postcode only', () => {
    expect(showrooms.length).toBeGreaterThan(100);
    expect(showrooms.filter((showroom) => showroom.lat === null).length).toBeGreaterThan(10);
  });

  it.each(['3000', '2000', '6000', '0800', '7000', '4870'])('answers the k nearest from %s in order, on both doors', async (postcode) => {
    for (const limit of [1, 5, 20]) {
      const expected = await expectedNearest(postcode, limit, null);
      const response = await app.request(searchPath(postcode, limit), { key: full.key });
      expect(response.status).toBe(200);
      const rest = (await response.json()) as { id: number; distance_km: number }[];
      expect(rest.map(({ id, distance_km }) => ({ id, distance_km }))).toEqual(expected);
      const graph = await app.graphql<{ search_dealerships_by_postcode: { id: number; distance_km: number }[] }>(
        `query ($id: Int!, $postcode: String!, $limit: Int) { search_dealerships_by_postcode(id: $id, postcode: $postcode, limit: $limit) { id: databaseId distance_km } }`,
        { id: grid.id, postcode, limit },
        full.key,
      );
      expect(graph.data?.search_dealerships_by_postcode).toEqual(expected);
    }
  });

  it('breaks a tie of two showrooms at the same point by id', async () => {
    const body = (await (await app.request(searchPath('3000', 5), { key: full.key })).json()) as { id: number; distance_km: number }[];
    const tied = body.filter((location) => tiedIds.includes(location.id));
    expect(tied.map((location) => location.id)).toEqual([...tiedIds].sort((a, b) => a - b));
    expect(tied[0]?.distance_km).toBe(tied[1]?.distance_km);
    expect(body.findIndex((location) => location.id === tied[1]?.id)).toBe(body.findIndex((location) => location.id === tied[0]?.id) + 1);
  });

  it("ranks a restricted key's showrooms only, the k nearest of those", async () => {
    for (const postcode of ['3000', '6000']) {
      const expected = await expectedNearest(postcode, 5, restrictedDealerships);
      expect(expected).toHaveLength(5);
      const body = (await (await app.request(searchPath(postcode, 5), { key: restricted.key })).json()) as {
        id: number;
        distance_km: number;
      }[];
      expect(body.map(({ id, distance_km }) => ({ id, distance_km }))).toEqual(expected);
    }
  });

  it('orders and limits in the database: each ranking statement ends ORDER BY distance LIMIT n, the nearest first within a box', async () => {
    app.queries.length = 0;
    const response = await app.request(searchPath('3000', 5), { key: full.key });
    expect(response.status).toBe(200);
    const ranking = app.queries.filter((sql) => sql.includes('ORDER BY distance_km, id'));
    expect(ranking.length).toBeGreaterThan(0);
    for (const sql of ranking) expect(sql).toMatch(/LIMIT \S+\s*$/);
    // The first statement looks within a radius: a range of the coordinates' index.
    expect(ranking[0]).toContain('a.lat BETWEEN');
  });

  it('measures in SQL the distance distanceKm measures', async () => {
    const origin = { lat: -37.8136, long: 144.9631 };
    const points = [
      { lat: -37.8136, long: 144.9631 },
      { lat: -33.8688, long: 151.2093 },
      { lat: -12.4634, long: 130.8456 },
      { lat: -31.9523, long: 115.8613 },
      { lat: 37.8136, long: -35.0369 },
    ];
    for (const point of points) {
      const [row] = await app.db.$queryRaw<{ distance: number }[]>(
        Prisma.sql`SELECT ${distanceKmSql(origin, Prisma.sql`CAST(${point.lat} AS DOUBLE PRECISION)`, Prisma.sql`CAST(${point.long} AS DOUBLE PRECISION)`)} AS distance`,
      );
      expect(row?.distance).toBeCloseTo(distanceKm(origin, point), 9);
    }
  });
});
