// A platform's data on top of the demo (`npm run seed -- --scale platform [--fraction F]`): thousands
// of dealerships, hundreds of thousands of cars, millions of photos, leads, events and contacts,
// shaped like a live platform. Every row is generated inside the database (INSERT … SELECT over
// generate_series on PostgreSQL, a recursive CTE on SQLite) so the data never crosses the driver:
// the platform size takes minutes, not hours.
//
// The shape, so the reads meet what a platform holds (issue 43):
// - ids interleaved across dealerships: a row's dealership is picked per row, never in blocks;
// - a skewed spread: a row's dealership is the cube of a uniform pick, so the first of the spread
//   holds about 8 % of the contacts, cars and leads (about 175,000 contacts at full size), the
//   median a few hundred;
// - popular cars: a quarter of the leads name a car of their contact's dealership, picked by the
//   square of a uniform pick over its cars, so the most popular car of a large dealership has
//   hundreds of leads;
// - every lead has a contact (of its dealership, one of the month's contacts before it) and at least one event;
// - keys restricted to 1–20 dealerships, a few listing every dealership, a few with no dealership
//   (the schema's "reaches every dealership");
// - the demo's Toyota franchises more than half the platform's dealerships, and its new offers are
//   linked to every Toyota dealership; sales showrooms across the country's postcodes.
//
// The picks are Weyl sequences ((g·A + C) mod 2³², a different A per pick): deterministic, spread
// evenly, and plain integer arithmetic both engines compute the same way.
import { readFile } from 'node:fs/promises';
import type { Engine } from '../src/config/index.ts';
import type { Db } from '../src/db/client.ts';
import { bundledPostcodeFile } from '../src/domain/geocoding.ts';
import { sanitizeDescription } from '../src/domain/offers.ts';

/** The platform's sizes at fraction 1; a fraction scales each (rounded), never below its minimum. */
export const PLATFORM_SIZES = {
  dealerships: { full: 2_000, minimum: 20 },
  locations: { full: 8_000, minimum: 80 },
  users: { full: 10_000, minimum: 100 },
  cars: { full: 500_000, minimum: 500 },
  car_photos: { full: 5_000_000, minimum: 5_000 },
  contacts: { full: 2_200_000, minimum: 2_200 },
  leads: { full: 5_000_000, minimum: 5_000 },
  lead_events: { full: 5_000_000, minimum: 5_000 },
  api_keys: { full: 2_000, minimum: 40 },
  manufacturer_offers: { full: 10, minimum: 2 },
  website_offers: { full: 4_000, minimum: 40 },
} as const;

type PlatformTable = keyof typeof PLATFORM_SIZES;
type PlatformCounts = Record<PlatformTable, number>;

/** The fraction each engine gets when none is given: the platform on PostgreSQL, a tenth of it on SQLite. */
export const DEFAULT_FRACTION: Record<Engine, number> = { postgresql: 1, sqlite: 0.1 };

/** Keys listing every dealership, and keys with no dealership (reaching every one). */
const KEYS_LISTING_EVERY_DEALERSHIP = 3;
const KEYS_WITHOUT_DEALERSHIPS = 2;
/** A restricted key lists 1 to this many dealerships. */
const MOST_DEALERSHIPS_OF_A_RESTRICTED_KEY = 20;
/** One lead in this many names a car. */
const LEADS_PER_CAR_LEAD = 4;
/** Every generated dealership's slug starts so: how a later run knows the data is there. */
export const PLATFORM_SLUG_PREFIX = 'platform-motors-';
/** Tables of the generator's own, dropped when it ends; one left behind marks an interrupted run. */
const WORK_TABLES = [
  'seed_platform_postcodes',
  'seed_platform_kinds',
  'seed_platform_dealer_cars',
  'seed_platform_car_ranks',
  'seed_platform_indexes',
] as const;
/**
 * The tables of millions of rows. Their secondary indexes are dropped while they fill and built again
 * after (their definitions kept in seed_platform_indexes meanwhile): rows inserted under an index that
 * outgrows the database's cache land at random pages, and that, not the generation, was the run's time.
 */
const BULK_TABLES = ['cars', 'car_photos', 'contacts', 'leads', 'lead_events'] as const;

export function platformCounts(fraction: number): PlatformCounts {
  const counts = {} as PlatformCounts;
  for (const [table, size] of Object.entries(PLATFORM_SIZES) as [PlatformTable, { full: number; minimum: number }][]) {
    counts[table] = Math.max(size.minimum, Math.round(size.full * fraction));
  }
  return counts;
}

export type PlatformSeedResult =
  | { made: true; fraction: number; counts: Record<string, number>; seconds: number }
  /** `present`: the platform data is already there (nothing to do); `blocked`: this database cannot take it. */
  | { made: false; why: 'present' | 'blocked'; reason: string };

interface Dialect {
  engine: Engine;
  /** A prefix (WITH …) and a FROM source binding each named integer series to the inclusive range. */
  series(ranges: readonly (readonly [name: string, from: number, to: number])[]): { with: string; from: string };
  floorInt(expr: string): string;
  /** Zero-padded decimal text of a non-negative integer. */
  pad(expr: string, width: number): string;
  /** A timestamp `secondsAgo` seconds before `now`, as the engine's DateTime column holds it. */
  ago(secondsAgo: string): string;
  json(expr: string): string;
  enumValue(expr: string, type: string): string;
  /** 64 random hex digits. */
  randomHex(): string;
}

function dialectOf(engine: Engine, now: Date): Dialect {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (engine === 'postgresql') {
    return {
      engine,
      series: (ranges) => ({
        with: '',
        from: ranges.map(([name, from, to]) => `generate_series(${from}, ${to}) AS ${name}(${name})`).join(' CROSS JOIN '),
      }),
      floorInt: (expr) => `CAST(floor(${expr}) AS INTEGER)`,
      pad: (expr, width) => `lpad(CAST(${expr} AS TEXT), ${width}, '0')`,
      ago: (secondsAgo) => `(to_timestamp(${nowSeconds} - (${secondsAgo})) AT TIME ZONE 'UTC')`,
      json: (expr) => `CAST(${expr} AS JSONB)`,
      enumValue: (expr, type) => `CAST(${expr} AS "${type}")`,
      randomHex: () => 'md5(random()::text) || md5(random()::text)',
    };
  }
  return {
    engine,
    series: (ranges) => ({
      with: `WITH RECURSIVE ${ranges
        .map(([name, from, to]) => `${name}(${name}) AS (SELECT ${from} UNION ALL SELECT ${name} + 1 FROM ${name} WHERE ${name} < ${to})`)
        .join(', ')}`,
      from: ranges.map(([name]) => name).join(' CROSS JOIN '),
    }),
    floorInt: (expr) => `CAST(${expr} AS INTEGER)`,
    pad: (expr, width) => `printf('%0${width}d', ${expr})`,
    ago: (secondsAgo) => `strftime('%Y-%m-%dT%H:%M:%f+00:00', ${nowSeconds} - (${secondsAgo}), 'unixepoch')`,
    json: (expr) => expr,
    enumValue: (expr) => expr,
    randomHex: () => 'lower(hex(randomblob(32)))',
  };
}

/** A uniform pick in [0, 1) for row `g`, one sequence per multiplier. */
function pick(g: string, multiplier: number, offset = 0): string {
  return `(CAST((CAST(${g} AS BIGINT) * ${multiplier} + ${offset}) % 4294967296 AS DOUBLE PRECISION) / 4294967296.0)`;
}

const text = (value: string): string => `'${value.replaceAll("'", "''")}'`;

/** One of `values` by `index` (0-based; taken modulo the list's length by the caller). */
function choose(index: string, values: readonly string[]): string {
  return `CASE ${index} ${values.map((value, i) => `WHEN ${i} THEN ${text(value)}`).join(' ')} END`;
}

/** A multiplier coprime with `n`: stepping by it visits every residue once. */
function coprimeStep(n: number, preferred: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let step = preferred;
  while (gcd(step, n) !== 1) step += 1;
  return step;
}

const FIRST_NAMES = [
  'Olivia',
  'Jack',
  'Charlotte',
  'Noah',
  'Amelia',
  'William',
  'Isla',
  'Oliver',
  'Mia',
  'Leo',
  'Ava',
  'Henry',
  'Grace',
  'Lucas',
  'Chloe',
  'Thomas',
];
const LAST_NAMES = [
  'Smith',
  'Jones',
  'Williams',
  'Brown',
  'Wilson',
  'Taylor',
  'Nguyen',
  'Johnson',
  'Martin',
  'White',
  'Anderson',
  'Walker',
  'Thompson',
  'Kelly',
  'Ryan',
  'Lee',
];
const CAR_LEAD_CATEGORIES = ['Used Vehicle Enquiry', 'Test Drive Booking', 'Vehicle Reservation', 'Finance Enquiry'];
const OTHER_LEAD_CATEGORIES = [
  'General Enquiry',
  'New Vehicle Enquiry',
  'Service Booking',
  'Trade-in Enquiry',
  'Parts Enquiry',
  'Fleet Enquiry',
];
const LEAD_SOURCES = ['Website', 'carsales', 'Phone Call', 'Walk In', 'facebook', 'Chatbot'];
const MARKETING_SOURCES = ['Organic', 'Email', 'SMS', 'Unknown'];
const COLOURS = ['Glacier White', 'Eclipse Black', 'Silver', 'Graphite Grey', 'Deep Blue', 'Red'];
const OFFER_DESCRIPTIONS = [
  '<p>Drive away a new <strong>Toyota</strong> with <em>complimentary servicing</em> for three years.</p><p><a href="https://www.toyota.com.au/offers">See the offer</a></p>',
  '<p>Finance from <strong>4.99% p.a.</strong> on selected models.</p><script>alert(1)</script>',
  '<p>Bonus accessories pack on every new vehicle ordered this month.</p><img src="https://cdn.dealerdemo.com.au/offers/pack.jpg" onerror="alert(1)">',
  '<h2>End of year clearance</h2><ul><li>Demo stock</li><li>Run-out models</li></ul>',
];

interface Bases {
  dealerships: number;
  websites: number;
  locations: number;
  location_addresses: number;
  location_contact_details: number;
  users: number;
  cars: number;
  car_photos: number;
  contacts: number;
  leads: number;
  lead_events: number;
  api_keys: number;
  api_key_secrets: number;
  offers: number;
}

/**
 * Adds the platform's data to a migrated database holding the demo catalogue (prisma/seed.ts:
 * Toyota and the other manufacturers, their models and variants). Refuses, changing nothing, when
 * the database already holds platform data (or the leftovers of an interrupted run).
 */
export async function seedPlatformData(
  db: Db,
  options: { engine: Engine; fraction: number; now?: Date; log?: (line: string) => void },
): Promise<PlatformSeedResult> {
  const started = performance.now();
  const log = options.log ?? (() => {});
  const sql = dialectOf(options.engine, options.now ?? new Date());
  const run = (statement: string): Promise<number> => db.$executeRawUnsafe(statement);
  const scalar = async (statement: string): Promise<number> => {
    const rows = await db.$queryRawUnsafe<{ n: unknown }[]>(statement);
    return Number(rows[0]?.n ?? 0);
  };

  const leftover = await leftoverWorkTable(db, sql.engine);
  if (leftover)
    return {
      made: false,
      why: 'blocked',
      reason: `holds the leftovers of an interrupted platform seed (table ${leftover}; seed_platform_indexes, if there, lists the indexes it dropped): use a fresh database`,
    };
  const platformDealerships = await scalar(`SELECT COUNT(*) AS n FROM dealerships WHERE slug LIKE '${PLATFORM_SLUG_PREFIX}%'`);
  if (platformDealerships > 0)
    return {
      made: false,
      why: 'present',
      reason: `already holds platform data (${platformDealerships} platform dealerships): nothing was added`,
    };

  const manufacturers = await db.manufacturer.findMany({ select: { id: true, slug: true }, orderBy: { id: 'asc' } });
  const toyota = manufacturers.find((manufacturer) => manufacturer.slug === 'toyota');
  const others = manufacturers.filter((manufacturer) => manufacturer !== toyota);
  if (!toyota || others.length === 0 || (await db.modelVariant.count()) === 0) {
    return {
      made: false,
      why: 'blocked',
      reason: 'holds no demo catalogue (Toyota, other manufacturers, models and variants): seed the demo first',
    };
  }

  const counts = platformCounts(options.fraction);
  const D = counts.dealerships;
  const base = await currentMaxIds(db);
  const made: Record<string, number> = {};
  const step = async (table: string, work: () => Promise<unknown>, countsRows = true): Promise<void> => {
    const stepStarted = performance.now();
    await work();
    let rows = '';
    if (countsRows) {
      made[table] = await scalar(`SELECT COUNT(*) AS n FROM ${table}`);
      rows = String(made[table]);
    }
    log(
      `${table.padEnd(26)} ${rows.padStart(10)} ${countsRows ? 'rows' : '    '}  ${((performance.now() - stepStarted) / 1000).toFixed(1).padStart(6)} s`,
    );
  };
  /** Inserts `total` rows numbered g = 1…total, in statements of at most `batch` rows. */
  const inBatches = async (total: number, batch: number, statement: (from: number, to: number) => string): Promise<void> => {
    for (let from = 1; from <= total; from += batch) await run(statement(from, Math.min(total, from + batch - 1)));
  };
  // Each statement's rows are written in dealership order (their ids stay interleaved): the indexes that
  // lead with dealership_id then grow in one pass per statement rather than at random.
  const batch = sql.engine === 'postgresql' ? 500_000 : 250_000;
  if (sql.engine === 'sqlite') await db.$queryRawUnsafe('PRAGMA cache_size = -262144');

  // A platform dealership's position (0…D-1) from its id, and a row's skewed dealership position.
  const position = (dealershipId: string): string => `(${dealershipId} - ${base.dealerships + 1})`;
  const spreadStep = coprimeStep(D, 7919);
  const skewedDealership = (g: string, multiplier: number): string => {
    const u = pick(g, multiplier, 12345);
    return `(${base.dealerships + 1} + (${sql.floorInt(`${D} * ${u} * ${u} * ${u}`)} * ${spreadStep}) % ${D})`;
  };
  const dealershipSlug = (pos: string): string => `('${PLATFORM_SLUG_PREFIX}' || ${sql.pad(`${pos} + 1`, 4)})`;
  const DAY = 86_400;

  await dropWorkTables(db);
  await dropSecondaryIndexes(db, sql.engine);

  // ── the generator's own lookup tables ──
  await run(
    'CREATE TABLE seed_platform_postcodes (n INTEGER PRIMARY KEY, postcode INTEGER NOT NULL, locality TEXT NOT NULL, state TEXT NOT NULL, lat DOUBLE PRECISION NOT NULL, long DOUBLE PRECISION NOT NULL)',
  );
  const postcodes = await australianPostcodes();
  for (let i = 0; i < postcodes.length; i += 500) {
    const values = postcodes
      .slice(i, i + 500)
      .map((p, j) => `(${i + j}, ${p.postcode}, ${text(p.locality)}, ${text(p.state)}, ${p.lat}, ${p.long})`)
      .join(', ');
    await run(`INSERT INTO seed_platform_postcodes (n, postcode, locality, state, lat, long) VALUES ${values}`);
  }
  await run(
    'CREATE TABLE seed_platform_kinds (k INTEGER PRIMARY KEY, variant_id INTEGER NOT NULL, make TEXT NOT NULL, model TEXT NOT NULL, badge TEXT NOT NULL, body TEXT, fuel TEXT, transmission TEXT, seats INTEGER, price INTEGER)',
  );
  await run(
    `INSERT INTO seed_platform_kinds (k, variant_id, make, model, badge, body, fuel, transmission, seats, price)
     SELECT ROW_NUMBER() OVER (ORDER BY v.id) - 1, v.id, f.name, m.name, v.name, v."bodyStyle", v.fuel, v.transmission, v.seats, v.price
     FROM model_variants v JOIN models m ON m.id = v.model_id JOIN manufacturers f ON f.id = m.manufacturer_id`,
  );
  const kinds = await scalar('SELECT COUNT(*) AS n FROM seed_platform_kinds');

  // ── dealerships, their franchises, websites, locations ──
  {
    const s = sql.series([['g', 1, D]]);
    await step('dealerships', () =>
      run(`${s.with} INSERT INTO dealerships (id, name, slug, created_at, updated_at)
        SELECT ${base.dealerships} + g, 'Platform Motors ' || ${sql.pad('g', 4)}, '${PLATFORM_SLUG_PREFIX}' || ${sql.pad('g', 4)},
          ${sql.ago(`(${D} - g) * ${Math.round((1000 * DAY) / D)} + ${2 * DAY}`)}, ${sql.ago('(g % 30) * 60')}
        FROM ${s.from}`),
    );
    // Toyota franchises 11 in 20 platform dealerships; 12 in 20 sell another manufacturer (some both).
    const other = choose(
      `((g - 1) % ${others.length})`,
      others.map((manufacturer) => String(manufacturer.id)),
    );
    await step('dealership_manufacturers', () =>
      run(`${s.with} INSERT INTO dealership_manufacturers (dealership_id, manufacturer_id)
        SELECT ${base.dealerships} + g, ${toyota.id} FROM ${s.from} WHERE (g - 1) % 20 < 11
        UNION ALL
        SELECT ${base.dealerships} + g, CAST(${other} AS INTEGER) FROM ${s.from} WHERE (g - 1) % 20 >= 8`),
    );
    await step('websites', () =>
      run(`${s.with} INSERT INTO websites (id, dealership_id, name, slug, url, created_at, updated_at)
        SELECT ${base.websites} + g, ${base.dealerships} + g, 'Platform Motors ' || ${sql.pad('g', 4)}, '${PLATFORM_SLUG_PREFIX}' || ${sql.pad('g', 4)},
          'https://www.${PLATFORM_SLUG_PREFIX}' || ${sql.pad('g', 4)} || '.com.au', ${sql.ago(`(${D} - g) * ${Math.round((1000 * DAY) / D)} + ${DAY}`)}, ${sql.ago('(g % 20) * 60')}
        FROM ${s.from}`),
    );
  }
  {
    const L = counts.locations;
    const s = sql.series([['g', 1, L]]);
    // Location g belongs to dealership position (g-1) % D, its j-th location j = (g-1) / D: the
    // first is the sales showroom of every other dealership (a used-car yard for the rest).
    const pos = `((g - 1) % ${D})`;
    const j = `((g - 1) / ${D})`;
    const type = `CASE WHEN ${j} = 0 AND ${pos} % 2 = 0 THEN 'sales' WHEN ${j} = 0 THEN 'used_cars' WHEN ${j} = 1 THEN 'service' WHEN ${j} = 2 THEN 'parts' ELSE 'head_office' END`;
    const suffix = `CASE WHEN ${j} = 0 THEN '' WHEN ${j} = 1 THEN ' Service Centre' WHEN ${j} = 2 THEN ' Parts' ELSE ' Head Office ' || ${j} END`;
    await step('locations', () =>
      run(`${s.with} INSERT INTO locations (id, dealership_id, website_id, name, location_type, partner_dealership_id, partner_account_id, tracking_phone, created_at, updated_at)
        SELECT ${base.locations} + g, ${base.dealerships + 1} + ${pos}, ${base.websites + 1} + ${pos}, 'Platform Motors ' || ${sql.pad(`${pos} + 1`, 4)} || ${suffix},
          ${sql.enumValue(type, 'location_type')}, 'PD' || ${sql.pad('g', 6)}, 'PA' || ${sql.pad(`${pos} + 1`, 5)}, '+6188' || ${sql.pad('g', 7)},
          ${sql.ago(`(${L} - g) * ${Math.round((900 * DAY) / L)} + ${DAY}`)}, ${sql.ago('(g % 40) * 60')}
        FROM ${s.from}`),
    );
    const U = counts.users;
    const u = sql.series([['g', 1, U]]);
    // User g works at dealership position (g-1) % D (five a dealership), its first user the admin.
    await step('users', () =>
      run(`${u.with} INSERT INTO users (id, name, email, email_normalized, created_at, updated_at)
        SELECT ${base.users} + g, 'Platform Staff ' || ${sql.pad('g', 5)}, 'staff' || ${sql.pad('g', 5)} || '@platform-motors.example',
          'staff' || ${sql.pad('g', 5)} || '@platform-motors.example', ${sql.ago(`(${U} - g) * ${Math.round((900 * DAY) / U)} + ${DAY}`)}, ${sql.ago('(g % 40) * 60')}
        FROM ${u.from}`),
    );
    await step('dealership_users', () =>
      run(`${u.with} INSERT INTO dealership_users (dealership_id, user_id, role)
        SELECT ${base.dealerships + 1} + (g - 1) % ${D}, ${base.users} + g, CASE WHEN g <= ${D} THEN 'admin' ELSE 'staff' END
        FROM ${u.from}`),
    );
    const P = postcodes.length;
    const postcodeStep = coprimeStep(P, 7919);
    await step('location_addresses', () =>
      run(`${s.with} INSERT INTO location_addresses (id, location_id, name, street, city, seo_city, state, postcode, lat, long, place_id, place_url, created_at, updated_at)
        SELECT ${base.location_addresses} + g, ${base.locations} + g, NULL, (1 + g % 400) || ' Platform Road', p.locality, p.locality, p.state, p.postcode,
          p.lat + ((g % 41) - 20) * 0.0005, p.long + ((g % 37) - 18) * 0.0005, 'PLACE' || ${sql.pad('g', 8)},
          'https://maps.google.com/?cid=' || (900000 + g), ${sql.ago(`(${L} - g) * ${Math.round((900 * DAY) / L)} + ${DAY}`)}, ${sql.ago('(g % 40) * 60')}
        FROM ${s.from} JOIN seed_platform_postcodes p ON p.n = (g * ${postcodeStep}) % ${P}`),
    );
    await step('location_contact_details', () =>
      run(`${s.with} INSERT INTO location_contact_details (id, location_id, email, phone, landline_phone, google_maps_url, facebook_url, created_at, updated_at)
        SELECT ${base.location_contact_details} + g, ${base.locations} + g, 'sales' || g || '@${PLATFORM_SLUG_PREFIX}' || ${sql.pad(`${pos} + 1`, 4)} || '.com.au',
          '+6139' || ${sql.pad('g', 7)}, '+6138' || ${sql.pad('g', 7)}, 'https://maps.google.com/?cid=' || (900000 + g),
          'https://www.facebook.com/${PLATFORM_SLUG_PREFIX}' || ${sql.pad(`${pos} + 1`, 4)}, ${sql.ago(`(${L} - g) * ${Math.round((900 * DAY) / L)} + ${DAY}`)}, ${sql.ago('(g % 40) * 60')}
        FROM ${s.from}`),
    );
  }

  // ── cars and their photos ──
  const C = counts.cars;
  const locationsPerDealership = Math.max(1, Math.floor(counts.locations / D));
  const carCreatedAgo = (g: string): string => `(${C} - ${g}) * ${Math.max(1, Math.round((365 * DAY) / C))} + ${DAY}`;
  await step('cars', () =>
    inBatches(C, batch, (from, to) => {
      const s = sql.series([['g', from, to]]);
      const dealership = skewedDealership('g', 2654435761);
      return `${s.with} INSERT INTO cars (id, dealership_id, location_id, model_variant_id, slug, stocknum, vin, rego, rego_state, odometer, dapprice, egcprice,
          make, model, badge, year, body, colour, transmission, fuel, drive, doors, seats, dealercomments, features, status, car_type, item_type,
          locked_fields, custom_attributes, created_at, updated_at)
        SELECT ${base.cars} + g, d, ${base.locations + 1} + ${position('d')} + ${D} * (g % ${locationsPerDealership}),
          CASE WHEN g % 5 < 2 THEN k.variant_id END, 'platform-car-' || (${base.cars} + g), 'P' || (${base.cars} + g),
          'PLT' || ${sql.pad('g', 14)}, 'P' || ${sql.pad('g % 1000000', 6)}, 'VIC', CASE WHEN g % 5 = 0 THEN 10 ELSE (CAST(g AS BIGINT) * 104729) % 180000 END,
          COALESCE(k.price, 30000) - (g % 40) * 250, CASE WHEN g % 3 = 0 THEN COALESCE(k.price, 30000) + 990 END,
          k.make, k.model, k.badge, CASE WHEN g % 5 < 2 THEN 2025 ELSE 2014 + g % 11 END, k.body, ${choose('(g % 6)', COLOURS)}, k.transmission, k.fuel,
          ${choose('(g % 3)', ['FWD', 'AWD', '4WD'])}, 5, k.seats, 'One owner, full service history.',
          ${sql.json(`CASE WHEN g % 2 = 0 THEN '["Reversing Camera","Apple CarPlay","Bluetooth"]' ELSE '[]' END`)},
          CASE WHEN g % 7 = 0 THEN 'sold' ELSE 'available' END, ${choose('(g % 5)', ['new', 'demo', 'used', 'used', 'used'])}, 'car',
          ${sql.json("'[]'")}, ${sql.json("'[]'")}, ${sql.ago(carCreatedAgo('g'))}, ${sql.ago(`${carCreatedAgo('g')} - (g % 20) * 3600`)}
        FROM (SELECT g, ${dealership} AS d FROM ${s.from}) AS rows_ JOIN seed_platform_kinds k ON k.k = g % ${kinds} ORDER BY d, g`;
    }),
  );
  {
    const P = counts.car_photos;
    const photosPerCar = Math.max(1, Math.floor(P / C));
    await step('car_photos', () =>
      inBatches(P, batch, (from, to) => {
        const s = sql.series([['g', from, to]]);
        // A car's photos are consecutive (as an upload makes them): photo g is of car ((g-1) / per car) mod C;
        // the index on (car_id, position) then grows at one end instead of everywhere.
        const car = `(1 + ((g - 1) / ${photosPerCar}) % ${C})`;
        const photo = `(1 + (g - 1) % ${photosPerCar} + ${photosPerCar} * ((g - 1) / ${photosPerCar * C}))`;
        return `${s.with} INSERT INTO car_photos (id, car_id, url, position, created_at)
          SELECT ${base.car_photos} + g, ${base.cars} + ${car},
            'https://cdn.dealerdemo.com.au/stock/platform/' || (${base.cars} + ${car}) || '/' || ${photo} || '.jpg',
            ${photo}, ${sql.ago(`${carCreatedAgo(car)} - 60 * ${photo}`)}
          FROM ${s.from}`;
      }),
    );
  }

  // ── contacts ──
  const K = counts.contacts;
  const contactCreatedAgo = (g: string): string => `(${K} - ${g}) * ${Math.max(1, Math.round((1000 * DAY) / K))} + ${DAY}`;
  await step('contacts', () =>
    inBatches(K, batch, (from, to) => {
      const s = sql.series([['g', from, to]]);
      return `${s.with} INSERT INTO contacts (id, dealership_id, first_name, last_name, email, email_normalized, phone, postcode, sms_verified, created_at, updated_at)
        SELECT ${base.contacts} + g, d, ${choose('(g % 16)', FIRST_NAMES)}, ${choose('((g / 16) % 16)', LAST_NAMES)},
          'Contact' || (${base.contacts} + g) || '@example.com.au', 'contact' || (${base.contacts} + g) || '@example.com.au',
          '+614' || ${sql.pad('(CAST(g AS BIGINT) * 7919) % 100000000', 8)}, CAST(2000 + g % 4000 AS TEXT), g % 3 = 0,
          ${sql.ago(contactCreatedAgo('g'))}, ${sql.ago(`${contactCreatedAgo('g')} - (g % 90) * 600`)}
        FROM (SELECT g, ${skewedDealership('g', 2246822519)} AS d FROM ${s.from}) AS rows_ ORDER BY d, g`;
    }),
  );

  // ── leads: each of a contact's dealership, a quarter naming one of its cars ──
  await run('CREATE TABLE seed_platform_dealer_cars (dealership_id INTEGER PRIMARY KEY, cars INTEGER NOT NULL)');
  await run(
    `INSERT INTO seed_platform_dealer_cars (dealership_id, cars) SELECT dealership_id, COUNT(*) FROM cars WHERE id > ${base.cars} GROUP BY dealership_id`,
  );
  await run(
    'CREATE TABLE seed_platform_car_ranks (dealership_id INTEGER NOT NULL, car_rank INTEGER NOT NULL, car_id INTEGER NOT NULL, PRIMARY KEY (dealership_id, car_rank))',
  );
  await run(
    `INSERT INTO seed_platform_car_ranks (dealership_id, car_rank, car_id)
     SELECT dealership_id, ROW_NUMBER() OVER (PARTITION BY dealership_id ORDER BY id), id FROM cars WHERE id > ${base.cars}`,
  );
  const N = counts.leads;
  // A lead's contact is one of the month's contacts before it (as a platform's leads come mostly from recent
  // contacts), so the contact_id index grows near one end; its dealership is the contact's.
  const recentContacts = Math.max(1, Math.min(K, Math.round(K / 30)));
  const leadCreatedAgo = (g: string): string => `(${N} - ${g}) * ${Math.max(1, Math.round((730 * DAY) / N))} + ${g} % 3600 + ${DAY}`;
  await step('leads', () =>
    inBatches(N, batch, (from, to) => {
      const s = sql.series([['g', from, to]]);
      const v = pick('g', 3266489917, 777);
      const carLead = `g % ${LEADS_PER_CAR_LEAD} = 0`;
      const category = `CASE WHEN r.car_id IS NOT NULL THEN ${choose(`(g / ${LEADS_PER_CAR_LEAD} % ${CAR_LEAD_CATEGORIES.length})`, CAR_LEAD_CATEGORIES)} ELSE ${choose(`(g % ${OTHER_LEAD_CATEGORIES.length})`, OTHER_LEAD_CATEGORIES)} END`;
      return `${s.with} INSERT INTO leads (id, dealership_id, contact_id, website_id, location_id, car_id, name, last_name, email, phone, message, dealership_slug, website_slug,
          category, source, marketing_source, stocknum, lead_state, lead_status, tags, fields, created_at, updated_at)
        SELECT ${base.leads} + g, c.dealership_id, c.id, ${base.websites + 1} + ${position('c.dealership_id')}, ${base.locations + 1} + ${position('c.dealership_id')},
          r.car_id, c.first_name || ' ' || c.last_name, c.last_name, c.email, c.phone, 'Hi, this is ' || c.first_name || '. Please call me back.',
          ${dealershipSlug(position('c.dealership_id'))}, ${dealershipSlug(position('c.dealership_id'))}, ${category}, ${choose(`(g % ${LEAD_SOURCES.length})`, LEAD_SOURCES)},
          ${choose(`(g % ${MARKETING_SOURCES.length})`, MARKETING_SOURCES)}, CASE WHEN r.car_id IS NOT NULL THEN 'P' || r.car_id END,
          ${choose('(g % 4)', ['new', 'contacted', 'qualified', 'closed'])}, CASE WHEN g % 4 < 3 THEN 'open' WHEN g % 8 = 3 THEN 'won' ELSE 'lost' END,
          ${sql.json(`CASE WHEN g % 10 = 0 THEN '["callback"]' ELSE '[]' END`)}, ${sql.json("'{}'")},
          ${sql.ago(leadCreatedAgo('g'))}, ${sql.ago(`${leadCreatedAgo('g')} - (g % 48) * 1800`)}
        FROM ${s.from}
          JOIN contacts c ON c.id = ${base.contacts + 1} + (CAST(g - 1 AS BIGINT) * ${K} / ${N} + ${K} - ${sql.floorInt(`${recentContacts} * ${pick('g', 668265263, 4242)}`)}) % ${K}
          LEFT JOIN seed_platform_dealer_cars dc ON ${carLead} AND dc.dealership_id = c.dealership_id
          LEFT JOIN seed_platform_car_ranks r ON r.dealership_id = dc.dealership_id AND r.car_rank = 1 + ${sql.floorInt(`dc.cars * ${v} * ${v}`)}
        ORDER BY c.dealership_id, g`;
    }),
  );
  {
    const E = counts.lead_events;
    await step('lead_events', () =>
      inBatches(E, batch, (from, to) => {
        const s = sql.series([['g', from, to]]);
        // Event g is of lead (g-1) % N + 1, an hour or more after the lead.
        const lead = `(1 + (g - 1) % ${N})`;
        const eventAgo = `${leadCreatedAgo(lead)} - 3600 * (1 + (g - 1) / ${N}) - (g % 50) * 60`;
        return `${s.with} INSERT INTO lead_events (id, lead_id, service, contact_type, description, sent_date, sent_by, link_stop_communication, created_at)
          SELECT ${base.lead_events} + g, ${base.leads} + ${lead}, 'twilio', CASE WHEN g % 3 = 0 THEN 'call' ELSE 'sms' END,
            CASE WHEN g % 3 = 0 THEN 'Outbound call, 4 min' ELSE 'SMS sent: thanks for your enquiry, when suits you for a call?' END,
            ${sql.ago(eventAgo)}, 'Sales Assistant', 'https://assist.dealerdemo.com.au/leads/' || (${base.leads} + ${lead}) || '/stop', ${sql.ago(eventAgo)}
          FROM ${s.from}`;
      }),
    );
  }

  // ── API keys: restricted to 1–20 dealerships, a few listing every one, a few with none ──
  {
    const A = counts.api_keys;
    const s = sql.series([['g', 1, A]]);
    await step('api_keys', () =>
      run(`${s.with} INSERT INTO api_keys (id, name, created_at, updated_at)
        SELECT ${base.api_keys} + g, 'Platform integration ' || ${sql.pad('g', 4)}, ${sql.ago(`(${A} - g) * ${Math.round((700 * DAY) / A)} + ${DAY}`)}, ${sql.ago('(g % 30) * 60')}
        FROM ${s.from}`),
    );
    // No one holds these secrets: the hash is random, so the keys only shape the tables.
    await step('api_key_secrets', () =>
      run(`${s.with} INSERT INTO api_key_secrets (id, api_key_id, lookup_id, secret_hash, created_at)
        SELECT ${base.api_key_secrets} + g, ${base.api_keys} + g, 'platform' || ${sql.pad(`${base.api_keys} + g`, 8)}, ${sql.randomHex()}, ${sql.ago(`(${A} - g) * ${Math.round((700 * DAY) / A)} + ${DAY}`)}
        FROM ${s.from}`),
    );
    const permissions = [
      'read:car',
      'read:lead',
      'read:contact',
      'index:dealership',
      'index:offer',
      'search:location',
      'create:lead',
      'read:personal_data',
    ];
    const permissionRows = permissions.map((permission) => `SELECT ${text(permission)} AS permission`).join(' UNION ALL ');
    await step('api_key_permissions', () =>
      run(`${s.with} INSERT INTO api_key_permissions (api_key_id, permission)
        SELECT ${base.api_keys} + g, p.permission FROM ${s.from} CROSS JOIN (${permissionRows}) AS p WHERE g % 3 = 0 OR p.permission <> 'read:personal_data'`),
    );
    const everyDealership = KEYS_LISTING_EVERY_DEALERSHIP;
    const restrictedFrom = everyDealership + KEYS_WITHOUT_DEALERSHIPS + 1;
    const r = sql.series([
      ['g', restrictedFrom, A],
      ['j', 0, MOST_DEALERSHIPS_OF_A_RESTRICTED_KEY - 1],
    ]);
    const keyStep = coprimeStep(D, 101);
    await step('api_key_dealerships', async () => {
      await run(`INSERT INTO api_key_dealerships (api_key_id, dealership_id)
        SELECT k.id, d.id FROM api_keys k CROSS JOIN dealerships d WHERE k.id BETWEEN ${base.api_keys + 1} AND ${base.api_keys + everyDealership}`);
      // Key g lists 1 + (g·7 mod 20) dealerships, distinct positions (g·37 + j·step) mod D.
      await run(`${r.with} INSERT INTO api_key_dealerships (api_key_id, dealership_id)
        SELECT ${base.api_keys} + g, ${base.dealerships + 1} + (g * 37 + j * ${keyStep}) % ${D}
        FROM ${r.from} WHERE j < 1 + (g * 7) % ${Math.min(MOST_DEALERSHIPS_OF_A_RESTRICTED_KEY, D)}`);
    });
  }

  // ── offers: Toyota's on every Toyota dealership, and two of each website's own ──
  {
    const descriptions = OFFER_DESCRIPTIONS;
    const sanitized = await Promise.all(descriptions.map((description) => sanitizeDescription(description)));
    const M = counts.manufacturer_offers;
    const W = counts.website_offers;
    const m = sql.series([['g', 1, M]]);
    const toyotaModel = `(SELECT MIN(id) FROM models WHERE manufacturer_id = ${toyota.id})`;
    await step('offers', async () => {
      await run(`${m.with} INSERT INTO offers (id, kind, manufacturer_id, model_id, name, disclaimer, expires_at, description, sanitized_description, image_url, image_thumb_url, created_at, updated_at)
        SELECT ${base.offers} + g, ${sql.enumValue("'manufacturer'", 'offer_kind')}, ${toyota.id}, ${toyotaModel}, 'Toyota national offer ' || g, 'Conditions apply.',
          ${sql.ago(`-${DAY} * (30 + g)`)}, ${choose(`(g % ${descriptions.length})`, descriptions)}, ${choose(`(g % ${descriptions.length})`, sanitized)},
          'https://cdn.dealerdemo.com.au/offers/platform-' || g || '.jpg', 'https://cdn.dealerdemo.com.au/offers/platform-' || g || '-thumb.jpg',
          ${sql.ago(`${DAY} * (g % 20 + 1)`)}, ${sql.ago(`${DAY} * (g % 20)`)}
        FROM ${m.from}`);
      const w = sql.series([['g', 1, W]]);
      // Website offer g is of website position (g-1) % D, for the manufacturer that dealership sells first.
      const pos = `((g - 1) % ${D})`;
      const manufacturer = `CASE WHEN ${pos} % 20 < 11 THEN ${toyota.id} ELSE CAST(${choose(
        `(${pos} % ${others.length})`,
        others.map((o) => String(o.id)),
      )} AS INTEGER) END`;
      await run(`${w.with} INSERT INTO offers (id, kind, manufacturer_id, website_id, model_id, name, expires_at, description, sanitized_description, created_at, updated_at)
        SELECT ${base.offers + M} + g, ${sql.enumValue("'website'", 'offer_kind')}, mf, ${base.websites + 1} + ${pos},
          (SELECT MIN(id) FROM models WHERE manufacturer_id = mf), 'Dealer offer ' || g, ${sql.ago(`-${DAY} * (10 + g % 60)`)},
          ${choose(`(g % ${descriptions.length})`, descriptions)}, ${choose(`(g % ${descriptions.length})`, sanitized)},
          ${sql.ago(`${DAY} * (g % 30 + 1)`)}, ${sql.ago(`${DAY} * (g % 30)`)}
        FROM (SELECT g, ${manufacturer} AS mf FROM ${w.from}) AS rows_`);
    });
    await step('offer_dealerships', async () => {
      await run(`INSERT INTO offer_dealerships (offer_id, dealership_id)
        SELECT o.id, dm.dealership_id FROM offers o JOIN dealership_manufacturers dm ON dm.manufacturer_id = o.manufacturer_id
        WHERE o.id > ${base.offers} AND o.kind = 'manufacturer'`);
      await run(`INSERT INTO offer_dealerships (offer_id, dealership_id)
        SELECT o.id, w.dealership_id FROM offers o JOIN websites w ON w.id = o.website_id WHERE o.id > ${base.offers} AND o.kind = 'website'`);
    });
  }

  await step('(secondary indexes)', () => rebuildSecondaryIndexes(db, sql.engine), false);
  await dropWorkTables(db);
  if (sql.engine === 'postgresql') {
    // Explicit ids do not move SERIAL sequences; without this the next insert would collide.
    for (const table of Object.keys(base)) {
      await db.$queryRawUnsafe(`SELECT setval(pg_get_serial_sequence('"${table}"', 'id'), COALESCE((SELECT MAX(id) FROM "${table}"), 1))`);
    }
  }
  const analyzeStarted = performance.now();
  // On PostgreSQL also VACUUM, as autovacuum does to a live platform's tables: until the freshly written
  // pages are marked all-visible, the planner prices an index-only scan (a capped count along
  // (dealership_id, id)) as heap reads and takes the primary key's order with a filter instead.
  const maintenance = sql.engine === 'postgresql' ? 'VACUUM ANALYZE' : 'ANALYZE';
  await run(maintenance);
  log(`${maintenance.padEnd(26)} ${''.padStart(10)}       ${((performance.now() - analyzeStarted) / 1000).toFixed(1).padStart(6)} s`);
  return { made: true, fraction: options.fraction, counts: made, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

async function currentMaxIds(db: Db): Promise<Bases> {
  const tables: (keyof Bases)[] = [
    'dealerships',
    'websites',
    'locations',
    'location_addresses',
    'location_contact_details',
    'users',
    'cars',
    'car_photos',
    'contacts',
    'leads',
    'lead_events',
    'api_keys',
    'api_key_secrets',
    'offers',
  ];
  const bases = {} as Bases;
  for (const table of tables) {
    const rows = await db.$queryRawUnsafe<{ n: unknown }[]>(`SELECT COALESCE(MAX(id), 0) AS n FROM "${table}"`);
    bases[table] = Number(rows[0]?.n ?? 0);
  }
  return bases;
}

async function leftoverWorkTable(db: Db, engine: Engine): Promise<string | null> {
  const rows =
    engine === 'postgresql'
      ? await db.$queryRawUnsafe<{ name: string }[]>(`SELECT tablename AS name FROM pg_tables WHERE tablename LIKE 'seed\\_platform\\_%'`)
      : await db.$queryRawUnsafe<{ name: string }[]>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'seed\\_platform\\_%' ESCAPE '\\'`,
        );
  return rows[0]?.name ?? null;
}

/**
 * Keeps the definitions of BULK_TABLES' secondary indexes (unique ones too: building them again checks
 * the generated rows) in seed_platform_indexes, then drops the indexes. Primary keys and the indexes of
 * constraints stay.
 */
async function dropSecondaryIndexes(db: Db, engine: Engine): Promise<void> {
  const tables = BULK_TABLES.map((table) => `'${table}'`).join(', ');
  const indexes =
    engine === 'postgresql'
      ? await db.$queryRawUnsafe<{ name: string; definition: string }[]>(
          `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
           FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
           WHERE t.relname IN (${tables}) AND t.relnamespace = current_schema()::regnamespace AND NOT x.indisprimary
             AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
        )
      : await db.$queryRawUnsafe<{ name: string; definition: string }[]>(
          `SELECT name, sql AS definition FROM sqlite_master WHERE type = 'index' AND tbl_name IN (${tables}) AND sql IS NOT NULL`,
        );
  await db.$executeRawUnsafe('CREATE TABLE seed_platform_indexes (name TEXT PRIMARY KEY, definition TEXT NOT NULL)');
  for (const { name, definition } of indexes) {
    await db.$executeRaw`INSERT INTO seed_platform_indexes (name, definition) VALUES (${name}, ${definition})`;
    await db.$executeRawUnsafe(`DROP INDEX "${name}"`);
  }
}

/** One index of millions of rows takes seconds to a minute; a busy machine, more. */
const INDEX_BUILD_TIMEOUT_MS = 30 * 60_000;

async function rebuildSecondaryIndexes(db: Db, engine: Engine): Promise<void> {
  const indexes = await db.$queryRawUnsafe<{ definition: string }[]>('SELECT definition FROM seed_platform_indexes ORDER BY name');
  for (const { definition } of indexes) {
    if (engine === 'postgresql')
      // One sort in memory per index rather than runs spilled to disk (the default is 64 MB).
      await db.$transaction(
        async (transaction) => {
          await transaction.$executeRawUnsafe("SET LOCAL maintenance_work_mem = '512MB'");
          await transaction.$executeRawUnsafe(definition);
        },
        { timeout: INDEX_BUILD_TIMEOUT_MS },
      );
    else await db.$executeRawUnsafe(definition);
  }
}

async function dropWorkTables(db: Db): Promise<void> {
  for (const table of WORK_TABLES) await db.$executeRawUnsafe(`DROP TABLE IF EXISTS ${table}`);
}

interface PostcodePlace {
  postcode: number;
  locality: string;
  state: string;
  lat: number;
  long: number;
}

/** Every postcode of the bundled data set the geocoder reads: its first locality, and the centre of its localities. */
async function australianPostcodes(): Promise<PostcodePlace[]> {
  const rows = JSON.parse(await readFile(bundledPostcodeFile(), 'utf8')) as {
    postcode?: unknown;
    locality?: unknown;
    state?: unknown;
    lat?: unknown;
    long?: unknown;
  }[];
  const places = new Map<string, PostcodePlace & { count: number }>();
  for (const row of rows) {
    const { postcode, locality, state, lat, long } = row;
    if (typeof postcode !== 'string' || !/^\d{4}$/.test(postcode) || typeof locality !== 'string' || typeof state !== 'string') continue;
    if (typeof lat !== 'number' || typeof long !== 'number' || !Number.isFinite(lat) || !Number.isFinite(long) || (lat === 0 && long === 0))
      continue;
    const place = places.get(postcode);
    if (place) {
      place.lat += lat;
      place.long += long;
      place.count += 1;
    } else {
      places.set(postcode, { postcode: Number(postcode), locality: titleCase(locality), state, lat, long, count: 1 });
    }
  }
  return [...places.values()].map(({ count, ...place }) => ({ ...place, lat: place.lat / count, long: place.long / count }));
}

function titleCase(name: string): string {
  return name.toLowerCase().replace(/\b\p{L}/gu, (letter) => letter.toUpperCase());
}
