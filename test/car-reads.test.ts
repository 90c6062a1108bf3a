// Spec 4.2 (car performance) and 4.3 (payment processors) on both doors, and the Car graph
// (car, cars) for front-end teams: shapes, computed figures, scoping, permissions, query counts.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, expectAnswer, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation, makeManufacturer, makeWebsite } from './support/fixtures.ts';
import {
  daysAfter,
  makeCarLead,
  makeModel,
  makePaymentProcessor,
  makePhoneCall,
  makePhotos,
  makePriceChange,
  makeVariant,
  makeViewDay,
} from './support/fixtures-catalogue.ts';

const PERFORMANCE_QUERY = `query ($id: String!, $lookup_by: CarLookupBy) {
  car_performance(id: $id, lookup_by: $lookup_by) {
    id: databaseId days_old leads_count photos_count phone_calls price_changes_count days_to_twenty_photos views
    car_type status make model vin stocknum slug last_price_change sold_date price_type
    created_at updated_at start_price
    leads { id: databaseId created_at source lead_status lead_state } leads_truncated
    price_changes { updated_at dapprice egcprice }
  }
}`;

const PROCESSORS_QUERY = `query ($id: String!, $website: String) {
  car_payment_processors(id: $id, website: $website) {
    payment_processors {
      id: databaseId authorization_type authorization_key merchant_id google_merchant_id
      supports_all_types apple_pay_enabled google_pay_enabled types deposit_amount
    }
  }
}`;

const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const FORBIDDEN = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const CAR_NOT_FOUND = { error: 'car_not_found', message: 'No car with that identifier.' };
const INVALID_DEALERSHIP = { error: 'invalid_dealership', message: 'The car belongs to a dealership this API key cannot use.' };
const WEBSITE_NOT_FOUND = { error: 'website_not_found', message: 'No website with that identifier.' };

let app: TestApp;
let now: Date;
let north: { id: number; name: string; slug: string };
let south: { id: number };
/** The car with every kind of fact. */
let listed: { id: number; slug: string; created_at: Date; updated_at: Date };
let sold: { id: number; slug: string };
let southCar: { id: number; slug: string };
let leadIds: number[];
let changeDates: Date[];
let keys: Record<'all' | 'north' | 'south' | 'noPermission' | 'processors' | 'secrets' | 'northProcessors', { id: number; key: string }>;

beforeAll(async () => {
  app = await createTestApp();
  now = app.clock.now();
  north = await makeDealership(app.db, { name: 'Northside Motors', slug: 'northside-motors' });
  south = await makeDealership(app.db);
  const createdAt = daysAfter(now, -30.5);
  const car = await makeCar(app.db, north.id, {
    vin: 'JM0KF4W7A00123456',
    stocknum: 'N100',
    slug: '2021-mazda-cx-5-n100',
    custom_slug: 'northside-cx5',
    make: 'Mazda',
    model: 'CX-5',
    dapprice: 30990,
    egcprice: 28990,
    created_at: createdAt,
  });
  listed = car;
  const otherCar = await makeCar(app.db, north.id);
  leadIds = [
    (
      await makeCarLead(app.db, north.id, car.id, {
        created_at: daysAfter(createdAt, 3),
        source: 'Website',
        lead_status: 'open',
        lead_state: 'new',
      })
    ).id,
    (
      await makeCarLead(app.db, north.id, car.id, {
        created_at: daysAfter(createdAt, 12),
        source: 'Phone Call',
        lead_status: 'won',
        lead_state: 'sold',
      })
    ).id,
  ];
  await makeCarLead(app.db, north.id, otherCar.id);
  // 25 photos from day 2, one every half day: the 20th arrives on day 2 + 9.5 = 11.5.
  await makePhotos(app.db, car.id, 25, daysAfter(createdAt, 2), 0.5);
  await makePhotos(app.db, otherCar.id, 3, createdAt);
  await makePhoneCall(app.db, car.id);
  await makePhoneCall(app.db, car.id);
  await makePhoneCall(app.db, car.id);
  await makePhoneCall(app.db, otherCar.id);
  await makePhoneCall(app.db, null);
  changeDates = [daysAfter(createdAt, 10), daysAfter(createdAt, 20)];
  await makePriceChange(app.db, car.id, { dapprice: 32990, egcprice: null, created_at: createdAt });
  await makePriceChange(app.db, car.id, { dapprice: 31990, egcprice: null, created_at: changeDates[0] });
  await makePriceChange(app.db, car.id, { dapprice: 30990, egcprice: 28990, created_at: changeDates[1] });
  await makePriceChange(app.db, otherCar.id, { dapprice: 1, created_at: createdAt });
  await makeViewDay(app.db, car.id, new Date('2026-11-01T00:00:00.000Z'), 10);
  await makeViewDay(app.db, car.id, new Date('2026-11-02T00:00:00.000Z'), 25);
  await makeViewDay(app.db, car.id, new Date('2026-11-03T00:00:00.000Z'), 7);
  await makeViewDay(app.db, otherCar.id, new Date('2026-11-03T00:00:00.000Z'), 1000);

  sold = await makeCar(app.db, north.id, {
    vin: null,
    egcprice: 19990,
    status: 'sold',
    created_at: new Date('2026-08-13T00:00:00.000Z'),
    sold_date: new Date('2026-10-12T00:00:00.000Z'),
  });
  await makePhotos(app.db, sold.id, 5, daysAfter(now, -99));
  southCar = await makeCar(app.db, south.id, { vin: 'SOUTH0000000000001' });

  keys = {
    all: await makeKey(app.db, { permissions: ['read:car'] }),
    // index:dealership: Car.dealership is dealership data, null without it (src/auth/record-access.ts).
    north: await makeKey(app.db, { permissions: ['read:car', 'show:payment_processor', 'index:dealership'], dealershipIds: [north.id] }),
    south: await makeKey(app.db, { permissions: ['read:car', 'show:payment_processor'], dealershipIds: [south.id] }),
    noPermission: await makeKey(app.db, { permissions: ['update:car', 'index:offer'] }),
    processors: await makeKey(app.db, { permissions: ['show:payment_processor'] }),
    secrets: await makeKey(app.db, { permissions: ['show:payment_processor', 'show:payment_processor_secret'] }),
    northProcessors: await makeKey(app.db, {
      permissions: ['show:payment_processor', 'show:payment_processor_secret'],
      dealershipIds: [north.id],
    }),
  };
});

const performancePath = (id: string | number, query = '') => `/api/v1/cars/${encodeURIComponent(String(id))}/performance.json${query}`;

describe('GET /api/v1/cars/{id}/performance.json', () => {
  it('answers the 2.2 record, every figure computed from the stored facts', async () => {
    const response = await app.request(performancePath(listed.id), { key: keys.all.key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({
      id: listed.id,
      days_old: 30,
      leads_count: 2,
      photos_count: 25,
      phone_calls: 3,
      price_changes_count: 2,
      days_to_twenty_photos: 11,
      views: 42,
      car_type: 'used',
      status: 'available',
      make: 'Mazda',
      model: 'CX-5',
      vin: 'JM0KF4W7A00123456',
      stocknum: 'N100',
      slug: '2021-mazda-cx-5-n100',
      last_price_change: changeDates[1]?.toISOString(),
      sold_date: null,
      price_type: 'dapprice',
      created_at: listed.created_at.toISOString(),
      updated_at: listed.updated_at.toISOString(),
      start_price: 32990,
      leads: [
        {
          id: leadIds[0],
          created_at: daysAfter(listed.created_at, 3).toISOString(),
          source: 'Website',
          lead_status: 'open',
          lead_state: 'new',
        },
        {
          id: leadIds[1],
          created_at: daysAfter(listed.created_at, 12).toISOString(),
          source: 'Phone Call',
          lead_status: 'won',
          lead_state: 'sold',
        },
      ],
      leads_truncated: false,
      price_changes: [
        // No price of that kind at the change: 0 (docs/decisions.md, "Fields that are never null").
        { updated_at: changeDates[0]?.toISOString(), dapprice: 31990, egcprice: 0 },
        { updated_at: changeDates[1]?.toISOString(), dapprice: 30990, egcprice: 28990 },
      ],
    });
  });

  it('answers a sold car: ageing stops at the sold date, no price rows, fewer than 20 photos', async () => {
    const body = await (await app.request(performancePath(sold.id), { key: keys.all.key })).json();
    expect(body).toMatchObject({
      id: sold.id,
      status: 'sold',
      vin: '',
      days_old: 60,
      sold_date: '2026-10-12',
      photos_count: 5,
      days_to_twenty_photos: null,
      price_changes_count: 0,
      last_price_change: null,
      price_changes: [],
      leads: [],
      leads_count: 0,
      phone_calls: 0,
      views: 0,
      start_price: 19990,
      price_type: 'egcprice',
    });
  });

  it('finds the car by slug, by custom slug and by VIN with lookup_by=vin', async () => {
    const expected = await (await app.request(performancePath(listed.id), { key: keys.all.key })).json();
    for (const path of [
      performancePath(listed.slug),
      performancePath('northside-cx5'),
      performancePath('JM0KF4W7A00123456', '?lookup_by=vin'),
      performancePath('jm0kf4w7a00123456', '?lookup_by=vin'),
    ]) {
      await expectAnswer(await app.request(path, { key: keys.all.key }), 200, expected, path);
    }
  });

  it('does not treat a VIN as an id without lookup_by=vin', async () => {
    await expectAnswer(await app.request(performancePath('JM0KF4W7A00123456'), { key: keys.all.key }), 404, CAR_NOT_FOUND);
  });

  it('recomputes when the facts change and as time passes', async () => {
    const extra = await makeCar(app.db, north.id, { created_at: now });
    const before = await (await app.request(performancePath(extra.id), { key: keys.all.key })).json();
    expect(before).toMatchObject({ leads_count: 0, days_old: 0, views: 0, start_price: 0, price_type: 'dapprice' });
    await makeCarLead(app.db, north.id, extra.id);
    await makeViewDay(app.db, extra.id, now, 4);
    await makePriceChange(app.db, extra.id, { egcprice: 15000, created_at: now });
    app.clock.advance(3 * 86_400_000);
    try {
      const after = await (await app.request(performancePath(extra.id), { key: keys.all.key })).json();
      expect(after).toMatchObject({ leads_count: 1, days_old: 3, views: 4, start_price: 15000, price_changes_count: 0 });
    } finally {
      app.clock.set(now);
    }
  });

  it('answers a 422 naming lookup_by for a value other than vin', async () => {
    const response = await app.request(performancePath(listed.id, '?lookup_by=stocknum'), { key: keys.all.key });
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(body).toEqual({ error: 'invalid_input', message: 'lookup_by: must be one of: vin', field: 'lookup_by' });
  });

  it('answers 404 car_not_found for a car that does not exist', async () => {
    await expectAnswer(await app.request(performancePath(999_999), { key: keys.all.key }), 404, CAR_NOT_FOUND);
  });

  it('answers a car of another dealership with 403 invalid_dealership, not like a missing car, by id, slug or VIN', async () => {
    for (const path of [
      performancePath(southCar.id),
      performancePath(southCar.slug),
      performancePath('SOUTH0000000000001', '?lookup_by=vin'),
    ]) {
      await expectAnswer(await app.request(path, { key: keys.north.key }), 403, INVALID_DEALERSHIP, path);
    }
    expect((await app.request(performancePath(southCar.id), { key: keys.south.key })).status).toBe(200);
  });

  it('answers 403 for a key without read:car, 401 without a valid key', async () => {
    await expectAnswer(await app.request(performancePath(listed.id), { key: keys.noPermission.key }), 403, FORBIDDEN);
    await expectAnswer(await app.request(performancePath(listed.id)), 401, UNAUTHORIZED);
    await expectAnswer(await app.request(performancePath(listed.id), { headers: { authorization: 'Bearer dlr_nope' } }), 401, UNAUTHORIZED);
  });

  it('costs the same number of queries whatever the number of facts', async () => {
    app.queries.length = 0;
    await app.request(performancePath(sold.id), { key: keys.all.key });
    const few = app.queries.filter((sql) => !/api_key/.test(sql)).length;
    app.queries.length = 0;
    await app.request(performancePath(listed.id), { key: keys.all.key });
    const many = app.queries.filter((sql) => !/api_key/.test(sql)).length;
    expect(many).toBe(few);
    expect(many).toBeLessThanOrEqual(7);
  });
});

describe('Query.car_performance on GraphQL', () => {
  it('answers exactly the REST body', async () => {
    for (const [variables, path] of [
      [{ id: String(listed.id) }, performancePath(listed.id)],
      [{ id: 'jm0kf4w7a00123456', lookup_by: 'vin' }, performancePath('jm0kf4w7a00123456', '?lookup_by=vin')],
      [{ id: String(sold.id) }, performancePath(sold.id)],
    ] as const) {
      const rest = await (await app.request(path, { key: keys.all.key })).json();
      const graph = await app.graphql(PERFORMANCE_QUERY, variables, keys.all.key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.car_performance).toEqual(rest);
    }
  });

  it('is FORBIDDEN invalid_dealership for another dealership, FORBIDDEN without read:car, UNAUTHENTICATED without a key', async () => {
    const hidden = await app.graphql(PERFORMANCE_QUERY, { id: String(southCar.id) }, keys.north.key);
    expect(hidden.data).toBeNull();
    expect(hidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'invalid_dealership' });
    const forbidden = await app.graphql(PERFORMANCE_QUERY, { id: String(listed.id) }, keys.noPermission.key);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'forbidden' });
    const anonymous = await app.graphql(PERFORMANCE_QUERY, { id: String(listed.id) });
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', error: 'unauthorized' });
  });

  it('refuses a lookup_by other than vin with BAD_USER_INPUT naming lookup_by', async () => {
    const result = await app.graphql(PERFORMANCE_QUERY, { id: String(listed.id), lookup_by: 'stocknum' }, keys.all.key);
    // A variable GraphQL cannot coerce stops the request before execution: there is no data at all.
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'lookup_by' });
  });
});

describe('GET /api/v1/cars/{id}/payment_processors.json', () => {
  let processors: {
    dealershipDefault: { id: number };
    siteOwn: { id: number };
    otherDefault: { id: number };
  };
  let ownSite: { id: number; slug: string; custom_slug: string | null };
  let plainSite: { id: number; slug: string };
  let southSite: { id: number; slug: string };
  const path = (id: string | number, query = '') => `/api/v1/cars/${encodeURIComponent(String(id))}/payment_processors.json${query}`;
  /** The north dealership's default processor as stored and as the 2.3 record answers it (but its secret). */
  const DEFAULT_PROCESSOR_COLUMNS = {
    authorization_type: 'bearer',
    merchant_id: 'north-default',
    google_merchant_id: 'g-123',
    supports_all_types: true,
    apple_pay_enabled: true,
    google_pay_enabled: false,
    types: ['deposit', 'full_payment'],
    deposit_amount: 500,
  };

  beforeAll(async () => {
    ownSite = await makeWebsite(app.db, north.id, { custom_slug: 'northside-online' });
    plainSite = await makeWebsite(app.db, north.id);
    southSite = await makeWebsite(app.db, south.id);
    processors = {
      dealershipDefault: await makePaymentProcessor(app.db, north.id, {
        ...DEFAULT_PROCESSOR_COLUMNS,
        authorization_key: 'sk_live_default',
      }),
      siteOwn: await makePaymentProcessor(app.db, north.id, { website_id: ownSite.id, merchant_id: 'north-site', types: ['deposit'] }),
      otherDefault: await makePaymentProcessor(app.db, south.id),
    };
  });

  it('lists every processor of the car dealership by id, each record whole (an empty Google merchant id is "")', async () => {
    const response = await app.request(path(listed.id), { key: keys.secrets.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      payment_processors: [
        { id: processors.dealershipDefault.id, ...DEFAULT_PROCESSOR_COLUMNS, authorization_key: 'sk_live_default' },
        {
          id: processors.siteOwn.id,
          authorization_type: 'api_key',
          authorization_key: expect.stringMatching(/^sk_live_/),
          merchant_id: 'north-site',
          google_merchant_id: '',
          supports_all_types: false,
          apple_pay_enabled: false,
          google_pay_enabled: false,
          types: ['deposit'],
          deposit_amount: 0,
        },
      ],
    });
  });

  it('refuses a key without show:payment_processor_secret (403), since every record carries authorization_key', async () => {
    const refused = await app.request(path(listed.slug), { key: keys.processors.key });
    expect(refused.status).toBe(403);
    const text = await refused.text();
    expect(JSON.parse(text)).toEqual({
      error: 'forbidden',
      message: 'This API key does not have the show:payment_processor_secret permission this operation needs.',
    });
    expect(text).not.toContain('north-default');
    const graph = await app.graphql(PROCESSORS_QUERY, { id: String(listed.id) }, keys.processors.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'forbidden' });
    expect(JSON.stringify(graph.data ?? null)).not.toContain('north-default');
  });

  it("answers the website's own processor for its ID, slug or custom slug", async () => {
    for (const website of [String(ownSite.id), ownSite.slug, 'northside-online']) {
      const response = await app.request(path(listed.id, `?website=${website}`), { key: keys.secrets.key });
      expect(response.status, website).toBe(200);
      const body = await response.json();
      expect(body.payment_processors.map((p: { id: number }) => p.id)).toEqual([processors.siteOwn.id]);
    }
  });

  it('falls back to the dealership default for a website without its own', async () => {
    const body = await (await app.request(path(listed.id, `?website=${plainSite.slug}`), { key: keys.secrets.key })).json();
    expect(body.payment_processors.map((p: { id: number }) => p.id)).toEqual([processors.dealershipDefault.id]);
  });

  it('answers 404 website_not_found for an unknown website or one of another dealership', async () => {
    for (const website of ['no-such-site', String(southSite.id), southSite.slug]) {
      await expectAnswer(
        await app.request(path(listed.id, `?website=${website}`), { key: keys.secrets.key }),
        404,
        WEBSITE_NOT_FOUND,
        website,
      );
    }
  });

  it('answers 404 car_not_found for an unknown car and for a car of another dealership', async () => {
    await expectAnswer(await app.request(path('no-such-car'), { key: keys.secrets.key }), 404, CAR_NOT_FOUND);
    await expectAnswer(await app.request(path(southCar.id), { key: keys.northProcessors.key }), 404, CAR_NOT_FOUND);
    const own = await app.request(path(listed.id), { key: keys.northProcessors.key });
    expect(own.status).toBe(200);
  });

  it('answers 403 without show:payment_processor and 401 without a valid key', async () => {
    await expectAnswer(await app.request(path(listed.id), { key: keys.all.key }), 403, FORBIDDEN);
    await expectAnswer(await app.request(path(listed.id)), 401, UNAUTHORIZED);
  });

  it('answers exactly the same on GraphQL', async () => {
    for (const [key, variables, query] of [
      [keys.secrets.key, { id: String(listed.id) }, ''],
      [keys.secrets.key, { id: listed.slug, website: ownSite.slug }, `?website=${ownSite.slug}`],
    ] as const) {
      const rest = await (await app.request(path(variables.id, query), { key })).json();
      const graph = await app.graphql(PROCESSORS_QUERY, variables, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.car_payment_processors).toEqual(rest);
    }
    const hidden = await app.graphql(PROCESSORS_QUERY, { id: String(southCar.id) }, keys.northProcessors.key);
    expect(hidden.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'car_not_found' });
    const forbidden = await app.graphql(PROCESSORS_QUERY, { id: String(listed.id) }, keys.all.key);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('the Car graph (GraphQL only)', () => {
  const CAR_QUERY = `query ($id: String!) {
    car(id: $id) {
      id: databaseId slug custom_slug stocknum vin make model year dapprice egcprice features locked_fields
      custom_attributes { name value } reserved sold_date created_at
      dealership { id: databaseId name slug }
      location { id: databaseId name location_type }
      model_variant { id: databaseId slug name model { id: databaseId name manufacturer { name } } }
      photos { url position }
      price_changes { dapprice egcprice created_at }
      performance { id: databaseId days_old leads_count photos_count views start_price }
    }
  }`;

  it('answers a car with its relations and its performance figures', async () => {
    const manufacturer = await makeManufacturer(app.db, { name: 'Mazda' });
    const model = await makeModel(app.db, manufacturer.id, { name: 'CX-5' });
    const variant = await makeVariant(app.db, model.id, { slug: 'cx-5-maxx-sport', name: 'Maxx Sport' });
    const location = await makeLocation(app.db, north.id, { name: 'Northside Used', location_type: 'used_cars' });
    const car = await makeCar(app.db, north.id, {
      location_id: location.id,
      model_variant_id: variant.id,
      features: ['Sunroof', 3, 'Tow bar'],
      locked_fields: ['dapprice'],
      custom_attributes: [{ name: 'Warranty', value: '5 years' }],
    });
    await makePhotos(app.db, car.id, 2, now);
    const result = await app.graphql(CAR_QUERY, { id: car.slug }, keys.north.key);
    expect(result.errors).toBeUndefined();
    expect(result.data?.car).toEqual({
      id: car.id,
      slug: car.slug,
      custom_slug: null,
      stocknum: car.stocknum,
      vin: null,
      make: 'Toyota',
      model: 'Corolla',
      year: 2020,
      dapprice: null,
      egcprice: null,
      features: ['Sunroof', 'Tow bar'],
      locked_fields: ['dapprice'],
      custom_attributes: [{ name: 'Warranty', value: '5 years' }],
      reserved: false,
      sold_date: null,
      created_at: car.created_at.toISOString(),
      dealership: { id: north.id, name: 'Northside Motors', slug: 'northside-motors' },
      location: { id: location.id, name: 'Northside Used', location_type: 'used_cars' },
      model_variant: {
        id: variant.id,
        slug: 'cx-5-maxx-sport',
        name: 'Maxx Sport',
        model: { id: model.id, name: 'CX-5', manufacturer: { name: 'Mazda' } },
      },
      photos: [
        { url: `https://img.example.com/${car.id}/1.jpg`, position: 1 },
        { url: `https://img.example.com/${car.id}/2.jpg`, position: 2 },
      ],
      price_changes: [],
      performance: { id: car.id, days_old: expect.any(Number), leads_count: 0, photos_count: 2, views: 0, start_price: 0 },
    });
  });

  it('answers the same performance figures as GET performance.json', async () => {
    const rest = await (await app.request(performancePath(listed.id), { key: keys.all.key })).json();
    const result = await app.graphql(
      `query ($id: String!) { car(id: $id) { performance { id: databaseId days_old leads_count photos_count phone_calls price_changes_count days_to_twenty_photos views start_price last_price_change price_type } } }`,
      { id: String(listed.id) },
      keys.all.key,
    );
    const {
      id,
      days_old,
      leads_count,
      photos_count,
      phone_calls,
      price_changes_count,
      days_to_twenty_photos,
      views,
      start_price,
      last_price_change,
      price_type,
    } = rest;
    expect(result.data?.car).toEqual({
      performance: {
        id,
        days_old,
        leads_count,
        photos_count,
        phone_calls,
        price_changes_count,
        days_to_twenty_photos,
        views,
        start_price,
        last_price_change,
        price_type,
      },
    });
  });

  it('answers null for a car of another dealership and for one that does not exist', async () => {
    const hidden = await app.graphql(
      `query ($id: String!) { car(id: $id) { id: databaseId } }`,
      { id: String(southCar.id) },
      keys.north.key,
    );
    expect(hidden.errors).toBeUndefined();
    expect(hidden.data).toEqual({ car: null });
    const missing = await app.graphql(`query ($id: String!) { car(id: $id) { id: databaseId } }`, { id: '999999' }, keys.all.key);
    expect(missing.data).toEqual({ car: null });
  });

  it('lists the cars of the key dealerships by id, with exact filters', async () => {
    const ids = async (key: string, args = '') => {
      const result = await app.graphql<{ cars: { edges: { node: { id: number } }[] } }>(
        `{ cars(first: 100${args}) { edges { node { id: databaseId dealership_id make status } } } }`,
        {},
        key,
      );
      expect(result.errors).toBeUndefined();
      return result.data?.cars.edges.map((edge) => edge.node.id) ?? [];
    };
    const northIds = (await app.db.car.findMany({ where: { dealership_id: north.id }, orderBy: { id: 'asc' } })).map((car) => car.id);
    expect(await ids(keys.north.key)).toEqual(northIds);
    expect(await ids(keys.north.key, `, dealership_id: ${south.id}`)).toEqual([]);
    expect(await ids(keys.all.key, `, dealership_id: ${south.id}`)).toEqual([southCar.id]);
    expect(await ids(keys.north.key, ', make: "Mazda"')).toEqual([listed.id]);
    expect(await ids(keys.north.key, ', status: "sold"')).toEqual([sold.id]);
    const all = await ids(keys.all.key);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    expect(all).toContain(southCar.id);
  });

  it('pages with first/after', async () => {
    const page = async (after?: string) =>
      app.graphql<{ cars: { pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { id: number } }[] } }>(
        `query ($after: String) { cars(first: 2, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id: databaseId } } } }`,
        { after },
        keys.north.key,
      );
    const first = await page();
    const second = await page(first.data?.cars.pageInfo.endCursor);
    const northIds = (await app.db.car.findMany({ where: { dealership_id: north.id }, orderBy: { id: 'asc' } })).map((car) => car.id);
    expect(first.data?.cars.edges.map((edge) => edge.node.id)).toEqual(northIds.slice(0, 2));
    expect(second.data?.cars.edges.map((edge) => edge.node.id)).toEqual(northIds.slice(2, 4));
    expect(first.data?.cars.pageInfo.hasNextPage).toBe(true);
  });

  it('costs a constant number of SQL queries for a page of N cars with dealership, location and performance', async () => {
    const countFor = async (n: number): Promise<number> => {
      const dealership = await makeDealership(app.db);
      const location = await makeLocation(app.db, dealership.id);
      for (let i = 0; i < n; i += 1) {
        const car = await makeCar(app.db, dealership.id, { location_id: location.id });
        await makeCarLead(app.db, dealership.id, car.id);
        await makePhotos(app.db, car.id, 2, now);
      }
      app.queries.length = 0;
      const result = await app.graphql<{ cars: { edges: unknown[] } }>(
        `query ($d: Int) { cars(first: 100, dealership_id: $d) { edges { node { id: databaseId dealership { name } location { name } photos { url } performance { leads_count photos_count } } } } }`,
        { d: dealership.id },
        keys.all.key,
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.cars.edges).toHaveLength(n);
      return app.queries.length;
    };
    const five = await countFor(5);
    const forty = await countFor(40);
    expect(forty).toBe(five);
  });

  it('is FORBIDDEN without read:car and UNAUTHENTICATED without a key', async () => {
    const forbidden = await app.graphql(`{ cars { edges { node { id: databaseId } } } }`, {}, keys.processors.key);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });
    const anonymous = await app.graphql(`query { car(id: "1") { id: databaseId } }`);
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
