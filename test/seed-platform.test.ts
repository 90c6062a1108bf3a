// The platform-sized data set (prisma/seed-platform.ts) at a small fraction, on the engine under test:
// the counts are the declared table's, the shape is a platform's, and the service reads it.
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions } from '../src/auth/permissions.ts';
import { seedDemoData } from '../prisma/seed.ts';
import {
  PLATFORM_SIZES,
  PLATFORM_SLUG_PREFIX,
  platformCounts,
  seedPlatformData,
  type PlatformSeedResult,
} from '../prisma/seed-platform.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { testEngine } from './support/database.ts';
import { makeKey } from './support/fixtures.ts';
import { runScript } from './support/processes.ts';

const FRACTION = 0.001;
const expected = platformCounts(FRACTION);

let app: TestApp;
let result: PlatformSeedResult;
/** Each table's rows before the platform was added: the demo's. */
const demo: Record<string, number> = {};

const countRows = async (table: string): Promise<number> =>
  Number((await app.db.$queryRawUnsafe<{ n: unknown }[]>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n);

/** Rows per group of the platform's rows, largest first. */
async function groupSizes(table: string, column: string, where = 'TRUE'): Promise<{ key: number; rows: number }[]> {
  const rows = await app.db.$queryRawUnsafe<{ key: unknown; rows: unknown }[]>(
    `SELECT ${column} AS key, COUNT(*) AS rows FROM ${table} WHERE ${where} GROUP BY ${column} ORDER BY COUNT(*) DESC`,
  );
  return rows.map((row) => ({ key: Number(row.key), rows: Number(row.rows) }));
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Every index of the tables and its definition, as the engine reports it. */
async function indexDefinitions(): Promise<Record<string, string>> {
  const rows =
    testEngine === 'postgresql'
      ? await app.db.$queryRawUnsafe<{ name: string; definition: string }[]>(
          'SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema()',
        )
      : await app.db.$queryRawUnsafe<{ name: string; definition: string | null }[]>(
          "SELECT name, COALESCE(sql, tbl_name) AS definition FROM sqlite_master WHERE type = 'index'",
        );
  return Object.fromEntries(rows.map((row) => [row.name, row.definition ?? '']));
}
let indexesBefore: Record<string, string>;

const TABLES = [
  'dealerships',
  'locations',
  'users',
  'cars',
  'car_photos',
  'contacts',
  'leads',
  'lead_events',
  'api_keys',
  'offers',
] as const;

beforeAll(async () => {
  app = await createTestApp();
  await seedDemoData(app.db, { now: app.clock.now(), keyring: app.config.secretsKeyring });
  for (const table of TABLES) demo[table] = await countRows(table);
  indexesBefore = await indexDefinitions();
  result = await seedPlatformData(app.db, { engine: testEngine, fraction: FRACTION, now: app.clock.now() });
}, 60_000);

describe('seedPlatformData', () => {
  it('adds the declared count of each table, scaled by the fraction', async () => {
    expect(result).toMatchObject({ made: true, fraction: FRACTION });
    const added: Record<string, number> = {};
    for (const table of TABLES) added[table] = (await countRows(table)) - (demo[table] ?? 0);
    expect(added).toEqual({
      dealerships: expected.dealerships,
      locations: expected.locations,
      users: expected.users,
      cars: expected.cars,
      car_photos: expected.car_photos,
      contacts: expected.contacts,
      leads: expected.leads,
      lead_events: expected.lead_events,
      api_keys: expected.api_keys,
      offers: expected.manufacturer_offers + expected.website_offers,
    });
    // The minimums hold the shape at a tiny fraction; a larger one scales every count.
    expect(platformCounts(0.1)).toMatchObject({ dealerships: 200, cars: 50_000, leads: 500_000, contacts: 220_000, api_keys: 200 });
    expect(platformCounts(1)).toMatchObject({ dealerships: 2_000, locations: 8_000, car_photos: 5_000_000, lead_events: 5_000_000 });
    for (const [table, size] of Object.entries(PLATFORM_SIZES)) {
      expect(platformCounts(1), table).toHaveProperty(table, size.full);
      expect(platformCounts(FRACTION), table).toHaveProperty(table, Math.max(size.minimum, Math.round(size.full * FRACTION)));
    }
  });

  it('leaves every index as the migrations made it (those it drops while the big tables fill are built again)', async () => {
    expect(Object.keys(indexesBefore).length).toBeGreaterThan(20);
    expect(await indexDefinitions()).toEqual(indexesBefore);
  });

  it('spreads rows unevenly: a few dealerships much larger than the median', async () => {
    const platformDealership = `dealership_id IN (SELECT id FROM dealerships WHERE slug LIKE '${PLATFORM_SLUG_PREFIX}%')`;
    const contacts = await groupSizes('contacts', 'dealership_id', platformDealership);
    expect(contacts).toHaveLength(expected.dealerships);
    const largest = contacts[0]?.rows ?? 0;
    expect(largest).toBeGreaterThan(10 * median(contacts.map((group) => group.rows)));
    // The largest dealership by contacts is also the largest by leads and by cars.
    expect((await groupSizes('leads', 'dealership_id', platformDealership))[0]?.key).toBe(contacts[0]?.key);
    expect((await groupSizes('cars', 'dealership_id', platformDealership))[0]?.key).toBe(contacts[0]?.key);
  });

  it('interleaves the dealerships in id order', async () => {
    for (const table of ['contacts', 'leads', 'cars']) {
      const rows = await app.db.$queryRawUnsafe<{ dealership_id: unknown }[]>(
        `SELECT dealership_id FROM ${table} WHERE id > ${demo[table]} ORDER BY id LIMIT 200`,
      );
      const ids = rows.map((row) => Number(row.dealership_id));
      const changes = ids.filter((id, i) => i > 0 && id !== ids[i - 1]).length;
      expect(new Set(ids).size, table).toBeGreaterThan(10);
      expect(changes, table).toBeGreaterThan(100);
    }
  });

  it('has popular cars, and every lead a contact of its dealership and an event', async () => {
    const leadsPerCar = await groupSizes('leads', 'car_id', `car_id IS NOT NULL AND id > ${demo.leads}`);
    expect(leadsPerCar[0]?.rows).toBeGreaterThanOrEqual(20);
    expect(leadsPerCar[0]?.rows ?? 0).toBeGreaterThan(10 * median(leadsPerCar.map((group) => group.rows)));
    const strays = await app.db.$queryRawUnsafe<{ n: unknown }[]>(
      `SELECT COUNT(*) AS n FROM leads l LEFT JOIN contacts c ON c.id = l.contact_id LEFT JOIN cars car ON car.id = l.car_id
       WHERE l.id > ${demo.leads} AND (c.id IS NULL OR c.dealership_id <> l.dealership_id OR car.dealership_id <> l.dealership_id
         OR NOT EXISTS (SELECT 1 FROM lead_events e WHERE e.lead_id = l.id))`,
    );
    expect(Number(strays[0]?.n)).toBe(0);
  });

  it('restricts keys to 1–20 dealerships, a few to every dealership, a few to none', async () => {
    const dealerships = await countRows('dealerships');
    const perKey = await groupSizes('api_key_dealerships', 'api_key_id');
    const sizes = new Set(perKey.map((group) => group.rows));
    expect(perKey[0]?.rows).toBe(dealerships);
    const restricted = perKey.filter((group) => group.rows < dealerships).map((group) => group.rows);
    expect(Math.min(...restricted)).toBe(1);
    expect(Math.max(...restricted)).toBe(20);
    expect(sizes.size).toBeGreaterThan(10);
    expect(perKey.length).toBeLessThan(expected.api_keys);
  });

  it('franchises Toyota to more than half the platform and links its offers to every Toyota dealership', async () => {
    const toyota = await app.db.manufacturer.findUniqueOrThrow({ where: { slug: 'toyota' }, select: { id: true } });
    const franchised = await app.db.dealershipManufacturer.count({ where: { manufacturer_id: toyota.id } });
    expect(franchised).toBeGreaterThan(expected.dealerships / 2);
    const offers = await app.db.offer.findMany({
      where: { manufacturer_id: toyota.id, kind: 'manufacturer', id: { gt: demo.offers } },
      select: { sanitized_description: true, _count: { select: { dealerships: true } } },
    });
    expect(offers).toHaveLength(expected.manufacturer_offers);
    for (const offer of offers) {
      expect(offer._count.dealerships).toBe(franchised);
      expect(offer.sanitized_description).not.toContain('<script');
    }
  });

  it('refuses a second run, adding nothing', async () => {
    const before = await countRows('leads');
    const again = await seedPlatformData(app.db, { engine: testEngine, fraction: FRACTION, now: app.clock.now() });
    expect(again).toMatchObject({ made: false, why: 'present', reason: expect.stringContaining('already holds platform data') });
    expect(await countRows('leads')).toBe(before);
  });
});

describe('the service over the platform data', () => {
  it('answers a lead page, a popular car and a restricted key’s details', async () => {
    const [largest] = await groupSizes('leads', 'dealership_id', `id > ${demo.leads}`);
    const [popular] = await groupSizes('leads', 'car_id', `car_id IS NOT NULL AND id > ${demo.leads}`);
    if (!largest || !popular) throw new Error('the platform data has no leads');
    const firstPlatformDealership = (demo.dealerships ?? 0) + 1;
    const other = largest.key === firstPlatformDealership ? largest.key + 1 : firstPlatformDealership;
    const { id: keyId, key } = await makeKey(app.db, { permissions: allPermissions, dealershipIds: [largest.key, other] });

    const page = await app.graphql<{
      leads: { totalCount: number; edges: { node: { dealership_id: number; events: { totalCount: number } } }[] };
    }>(
      `query ($dealership_id: Int) { leads(dealership_id: $dealership_id, first: 20) {
        totalCount edges { node { id: databaseId dealership_id contact { id: databaseId } events { totalCount } } } } }`,
      { dealership_id: largest.key },
      key,
    );
    expect(page.errors).toBeUndefined();
    expect(page.data?.leads.totalCount).toBeGreaterThan(20);
    expect(page.data?.leads.edges).toHaveLength(20);
    for (const { node } of page.data?.leads.edges ?? []) {
      expect(node.dealership_id).toBe(largest.key);
      expect(node.events.totalCount).toBeGreaterThanOrEqual(1);
    }

    const carOwner = await app.db.car.findUniqueOrThrow({ where: { id: popular.key }, select: { dealership_id: true } });
    const { key: carKey } = await makeKey(app.db, { permissions: allPermissions, dealershipIds: [carOwner.dealership_id] });
    const car = await app.graphql<{ car: { id: number; photos: unknown[]; performance: { leads_count: number } } }>(
      `query ($id: String!) { car(id: $id) { id: databaseId photos { url position } performance { leads_count } } }`,
      { id: String(popular.key) },
      carKey,
    );
    expect(car.errors).toBeUndefined();
    expect(car.data?.car).toMatchObject({ id: popular.key, performance: { leads_count: popular.rows } });
    expect(car.data?.car.photos).toHaveLength(expected.car_photos / expected.cars);

    const details = await app.request('/api/v1/apikeys/apikey_details.json', { key });
    expect(details.status).toBe(200);
    const body = (await details.json()) as { id: number; dealerships: { id: number; locations: unknown[] }[] };
    expect(body.id).toBe(keyId);
    expect(body.dealerships.map((dealership) => dealership.id)).toEqual([largest.key, other].sort((a, b) => a - b));
    for (const dealership of body.dealerships) expect(dealership.locations).toHaveLength(expected.locations / expected.dealerships);
  });
});

describe('npm run seed', () => {
  it('exits 2 naming the option for a bad --scale or --fraction, before touching a database', async () => {
    const settings = { DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' };
    for (const [args, option] of [
      [['--scale', 'huge'], '--scale'],
      [['--scale', 'platform', '--fraction', '0'], '--fraction'],
    ] as const) {
      const run = await runScript('scripts/seed.ts', args, settings);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(option);
    }
  }, 60_000);
});
