// Spec 4.19 and the reserved-flag rows of section 3 on both doors: PUT /api/v1/cars/{id}/reserve and
// Mutation.reserve_car. Reserve, refuse a second reservation, release, the boolean spellings, the
// not-found and cross-dealership answers, the access matrix and concurrent reservations.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';

const RESERVE = `mutation Reserve($id: String!, $reserved: Boolean!) {
  reserve_car(id: $id, reserved: $reserved) { id: databaseId slug stocknum reserved reserved_at }
}`;

let app: TestApp;
let north: { id: number };
let south: { id: number };
/** reserve:car for north. */
let reserver: string;
/** Everything about cars except reserve:car. */
let noPermission: string;
/** reserve:car for south only. */
let southReserver: string;

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  reserver = (await makeKey(app.db, { permissions: ['reserve:car'], dealershipIds: [north.id] })).key;
  noPermission = (await makeKey(app.db, { permissions: ['read:car', 'update:car'], dealershipIds: [north.id] })).key;
  southReserver = (await makeKey(app.db, { permissions: ['reserve:car'], dealershipIds: [south.id] })).key;
});

/** PUT /api/v1/cars/:id/reserve with the raw query (null: no Authorization header). */
function reserve(id: number | string, query: string, key: string | null = reserver): Promise<Response> {
  return app.request(`/api/v1/cars/${encodeURIComponent(String(id))}/reserve${query}`, { method: 'PUT', key: key ?? undefined });
}

function stored(id: number) {
  return app.db.car.findUniqueOrThrow({ where: { id }, select: { reserved: true, reserved_at: true, updated_at: true } });
}

const alreadyReserved = { error: 'car_already_reserved', message: 'The car is already reserved.' };
const carNotFound = { error: 'car_not_found', message: 'No car with that identifier.' };

describe('PUT /api/v1/cars/:id/reserve', () => {
  it('reserves a free car and answers its id, slug, stocknum and reservation', async () => {
    const car = await makeCar(app.db, north.id, { stocknum: 'R-1' });
    app.clock.advance(60_000);
    const now = app.clock.now();
    const response = await reserve(car.id, '?reserved=true');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: car.id, slug: car.slug, stocknum: 'R-1', reserved: true, reserved_at: now.toISOString() });
    expect(await stored(car.id)).toEqual({ reserved: true, reserved_at: now, updated_at: now });
  });

  it('finds the car by slug or custom slug as well as by id', async () => {
    const bySlug = await makeCar(app.db, north.id);
    const byCustom = await makeCar(app.db, north.id, { custom_slug: 'the-red-one' });
    expect((await reserve(bySlug.slug, '?reserved=true')).status).toBe(200);
    const response = await reserve('the-red-one', '?reserved=true');
    expect(response.status).toBe(200);
    expect((await response.json()).id).toBe(byCustom.id);
    expect((await stored(bySlug.id)).reserved).toBe(true);
    expect((await stored(byCustom.id)).reserved).toBe(true);
  });

  it('refuses to reserve a reserved car with 409 car_already_reserved, leaving the reservation as it was', async () => {
    const reservedAt = new Date('2026-11-01T10:00:00.000Z');
    const car = await makeCar(app.db, north.id, { reserved: true, reserved_at: reservedAt });
    const before = await stored(car.id);
    app.clock.advance(60_000);
    const response = await reserve(car.id, '?reserved=true');
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual(alreadyReserved);
    expect(await stored(car.id)).toEqual(before);
    expect(before.reserved_at).toEqual(reservedAt);
  });

  it('releases a reservation with reserved=false', async () => {
    const car = await makeCar(app.db, north.id, { reserved: true, reserved_at: new Date('2026-11-01T10:00:00.000Z') });
    app.clock.advance(60_000);
    const response = await reserve(car.id, '?reserved=false');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: car.id, reserved: false, reserved_at: null });
    expect(await stored(car.id)).toEqual({ reserved: false, reserved_at: null, updated_at: app.clock.now() });
    // Released, it can be reserved again.
    expect((await reserve(car.id, '?reserved=true')).status).toBe(200);
  });

  it('answers 200 to reserved=false on a free car and writes nothing', async () => {
    const car = await makeCar(app.db, north.id);
    const before = await stored(car.id);
    app.clock.advance(60_000);
    const response = await reserve(car.id, '?reserved=false');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: car.id, slug: car.slug, stocknum: car.stocknum, reserved: false, reserved_at: null });
    expect(await stored(car.id)).toEqual(before);
  });

  it.each([
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['On', true],
    ['y', true],
    ['False', false],
    ['0', false],
    ['no', false],
    ['off', false],
    ['N', false],
  ])('reads reserved=%s as %s', async (spelling, expected) => {
    const car = await makeCar(app.db, north.id, {
      reserved: !expected,
      reserved_at: expected ? null : new Date('2026-11-01T00:00:00.000Z'),
    });
    const response = await reserve(car.id, `?reserved=${spelling}`);
    expect(response.status).toBe(200);
    expect((await response.json()).reserved).toBe(expected);
    expect((await stored(car.id)).reserved).toBe(expected);
  });

  it.each([['?reserved=maybe'], ['?reserved=2'], ['?reserved='], ['?reserved=truee']])(
    'answers %s with a 422 naming reserved',
    async (query) => {
      const car = await makeCar(app.db, north.id);
      const before = await stored(car.id);
      const response = await reserve(car.id, query);
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({
        error: 'invalid_input',
        field: 'reserved',
        message: expect.stringMatching(/^reserved: must be true or false/),
      });
      expect(await stored(car.id)).toEqual(before);
    },
  );

  it('answers a missing reserved with a 422 naming it, on both doors', async () => {
    const car = await makeCar(app.db, north.id);
    const before = await stored(car.id);
    const response = await reserve(car.id, '');
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field: 'reserved', message: 'reserved: is required' });
    const graph = await app.graphql(RESERVE, { id: String(car.id) }, reserver);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reserved' });
    expect(await stored(car.id)).toEqual(before);
  });

  it('is 404 car_not_found for an unknown car, and 403 invalid_dealership for a car of a dealership the key cannot reach', async () => {
    const invalidDealership = { error: 'invalid_dealership', message: 'The car belongs to a dealership this API key cannot use.' };
    const foreign = await makeCar(app.db, north.id);
    const before = await stored(foreign.id);
    for (const id of ['999999', 'no-such-slug']) {
      const response = await reserve(id, '?reserved=true', southReserver);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(carNotFound);
    }
    for (const id of [String(foreign.id), foreign.slug]) {
      const response = await reserve(id, '?reserved=true', southReserver);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual(invalidDealership);
      const released = await reserve(id, '?reserved=false', southReserver);
      expect(released.status).toBe(403);
    }
    const graph = await app.graphql(RESERVE, { id: foreign.slug, reserved: true }, southReserver);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'invalid_dealership' });
    expect(await stored(foreign.id)).toEqual(before);
  });
});

describe('Mutation.reserve_car', () => {
  it('answers what the REST door answers', async () => {
    const car = await makeCar(app.db, north.id, { reserved: true, reserved_at: new Date('2026-11-02T00:00:00.000Z') });
    const rest = await (await reserve(car.id, '?reserved=false')).json();
    const graph = await app.graphql(RESERVE, { id: String(car.id), reserved: false }, reserver);
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.reserve_car).toEqual(rest);
  });

  it('reserves, then refuses with CONFLICT car_already_reserved', async () => {
    const car = await makeCar(app.db, north.id, { stocknum: 'G-1' });
    const now = app.clock.now();
    const first = await app.graphql(RESERVE, { id: car.slug, reserved: true }, reserver);
    expect(first.data?.reserve_car).toEqual({
      id: car.id,
      slug: car.slug,
      stocknum: 'G-1',
      reserved: true,
      reserved_at: now.toISOString(),
    });
    const second = await app.graphql(RESERVE, { id: car.slug, reserved: true }, reserver);
    expect(second.data).toBeNull();
    expect(second.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', error: 'car_already_reserved' });
    expect(await stored(car.id)).toMatchObject({ reserved: true, reserved_at: now });
  });
});

describe('access', () => {
  it('is 401 without a key or with a bad one, on both doors', async () => {
    const car = await makeCar(app.db, north.id);
    for (const key of [null, 'dlr_notakey']) {
      const response = await reserve(car.id, '?reserved=true', key);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        error: 'unauthorized',
        message: 'A valid API key is required: send "Authorization: Bearer <key>".',
      });
      const graph = await app.graphql(RESERVE, { id: String(car.id), reserved: true }, key ?? undefined);
      expect(graph.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect((await stored(car.id)).reserved).toBe(false);
  });

  it('is 403 forbidden for a key without reserve:car, on both doors', async () => {
    const car = await makeCar(app.db, north.id);
    const response = await reserve(car.id, '?reserved=true', noPermission);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: 'forbidden',
      message: 'This API key does not have the permission this operation needs.',
    });
    const graph = await app.graphql(RESERVE, { id: String(car.id), reserved: true }, noPermission);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'forbidden' });
    expect((await stored(car.id)).reserved).toBe(false);
  });
});

describe('concurrent reservations', () => {
  it.each([2, 10])('of %i requests leave exactly one winner, the rest 409', async (count) => {
    const car = await makeCar(app.db, north.id);
    app.clock.advance(60_000);
    const responses = await Promise.all(Array.from({ length: count }, () => reserve(car.id, '?reserved=true')));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(count - 1);
    for (const response of responses.filter((candidate) => candidate.status === 409))
      expect(await response.json()).toEqual(alreadyReserved);
    expect(await stored(car.id)).toEqual({ reserved: true, reserved_at: app.clock.now(), updated_at: app.clock.now() });
  });

  it('leave one winner across both doors', async () => {
    const car = await makeCar(app.db, north.id);
    const results = await Promise.all([
      ...Array.from({ length: 3 }, () => reserve(car.id, '?reserved=true').then((response) => response.status === 200)),
      ...Array.from({ length: 3 }, () =>
        app.graphql(RESERVE, { id: String(car.id), reserved: true }, reserver).then((result) => !result.errors),
      ),
    ]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await stored(car.id)).reserved).toBe(true);
  });
});
