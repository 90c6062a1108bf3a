// Spec 4.12 and 4.13 on both doors: the two shapes (model vs raw_model), personal data guarded,
// dealership scoping, paging and its 422s, the auth matrix and a constant query count.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeContact, makeDealership, makeKey } from './support/fixtures.ts';
import { makeContactVehicle } from './support/fixtures-dealership.ts';

const SHOW = `query ($dealership_id: Int!, $id: Int!) {
  contact(dealership_id: $dealership_id, id: $id) { id: databaseId dealership_id first_name postcode vehicles { id: databaseId make model year rego } }
}`;
const LIST = `query ($dealership_id: Int!, $page: Int, $per_page: Int) {
  contacts(dealership_id: $dealership_id, page: $page, per_page: $per_page) { id: databaseId dealership_id first_name postcode vehicles { id: databaseId make raw_model year rego } }
}`;

const unauthorized = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const forbidden = { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' };
const dealershipNotFound = { error: 'dealership_not_found', message: 'No dealership with that identifier.' };
const contactNotFound = { error: 'contact_not_found', message: 'No contact with that identifier.' };

let app: TestApp;
let north: { id: number };
let south: { id: number };
let paged: { id: number };
let olivia: { id: number };
let noah: { id: number };
let southContact: { id: number };
let cx5: { id: number };
let hilux: { id: number };
let full: { key: string };
let withoutPersonal: { key: string };
let southOnly: { key: string };
let northOnly: { key: string };
let withoutPermission: { key: string };
let pagedIds: number[];

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  paged = await makeDealership(app.db);
  olivia = await makeContact(app.db, north.id, {
    first_name: 'Olivia',
    last_name: 'Nguyen',
    postcode: '0800',
    email: 'olivia@example.com',
  });
  cx5 = await makeContactVehicle(app.db, olivia.id, { make: 'Mazda', model: 'CX-5', year: 2019, rego: 'ABC123' });
  hilux = await makeContactVehicle(app.db, olivia.id, { make: 'Toyota', model: 'Hilux', year: 2022, rego: '1XY2ZZ' });
  noah = await makeContact(app.db, north.id, { first_name: 'Noah', postcode: null });
  southContact = await makeContact(app.db, south.id, { first_name: 'Sam', postcode: '2000' });
  await makeContactVehicle(app.db, southContact.id, { make: 'Ford', model: 'Ranger', year: 2021, rego: 'SOUTH1' });
  await app.db.contact.createMany({
    data: Array.from({ length: 230 }, (_, index) => ({ dealership_id: paged.id, first_name: `Paged ${index + 1}` })),
  });
  pagedIds = (await app.db.contact.findMany({ where: { dealership_id: paged.id }, select: { id: true }, orderBy: { id: 'asc' } })).map(
    (row) => row.id,
  );
  full = await makeKey(app.db, { permissions: ['read:contact', 'read:personal_data'] });
  withoutPersonal = await makeKey(app.db, { permissions: ['read:contact'] });
  southOnly = await makeKey(app.db, { permissions: ['read:contact', 'read:personal_data'], dealershipIds: [south.id] });
  northOnly = await makeKey(app.db, { permissions: ['read:contact', 'read:personal_data'], dealershipIds: [north.id] });
  withoutPermission = await makeKey(app.db, { permissions: ['read:car', 'read:personal_data', 'index:dealership'] });
});

/**
 * Olivia as the show (model name under `model`) or the list (under `raw_model`) answers her; without
 * read:personal_data her postcode (which the record may leave null) is null, while her first name and
 * regos, which the record always has, are there for every key that may read contacts.
 */
function oliviaAnswer(modelKey: 'model' | 'raw_model', { personalData }: { personalData: boolean }) {
  const personal = <T>(value: T): T | null => (personalData ? value : null);
  return {
    id: olivia.id,
    dealership_id: north.id,
    first_name: 'Olivia',
    postcode: personal('0800'),
    vehicles: [
      { id: cx5.id, make: 'Mazda', [modelKey]: 'CX-5', year: 2019, rego: 'ABC123' },
      { id: hilux.id, make: 'Toyota', [modelKey]: 'Hilux', year: 2022, rego: '1XY2ZZ' },
    ],
  };
}

const showPath = (dealershipId: number | string, id: number | string) => `/dealerships/${dealershipId}/contacts/${id}`;
const listPath = (dealershipId: number | string, query = '') => `/dealerships/${dealershipId}/contacts${query}`;

describe('GET /dealerships/{dealership_id}/contacts/{id}', () => {
  it('answers the contact with its vehicles, the model name under `model`', async () => {
    const response = await app.request(showPath(north.id, olivia.id), { key: full.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(oliviaAnswer('model', { personalData: true }));
  });

  it('answers null postcode and no vehicles as such', async () => {
    const response = await app.request(showPath(north.id, noah.id), { key: full.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ id: noah.id, dealership_id: north.id, first_name: 'Noah', postcode: null, vehicles: [] });
  });

  it('hides the postcode, but not first_name and regos, without read:personal_data', async () => {
    const response = await app.request(showPath(north.id, olivia.id), { key: withoutPersonal.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(oliviaAnswer('model', { personalData: false }));
  });

  it('answers the same through GraphQL, for each key', async () => {
    for (const key of [full.key, withoutPersonal.key, northOnly.key]) {
      const rest = await (await app.request(showPath(north.id, olivia.id), { key })).json();
      const graph = await app.graphql(SHOW, { dealership_id: north.id, id: olivia.id }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.contact).toEqual(rest);
    }
  });

  it('is 404 contact_not_found for a contact of another dealership, and for an unknown contact', async () => {
    for (const id of [southContact.id, 999_999]) {
      const response = await app.request(showPath(north.id, id), { key: full.key });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(contactNotFound);
    }
    const graph = await app.graphql(SHOW, { dealership_id: north.id, id: southContact.id }, full.key);
    expect(graph.data).toBeNull();
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'contact_not_found' });
  });

  it('is 404 dealership_not_found for an unknown dealership', async () => {
    const response = await app.request(showPath(999_999, olivia.id), { key: full.key });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual(dealershipNotFound);
  });

  it('answers a key restricted to another dealership exactly like an unknown dealership', async () => {
    const outside = await app.request(showPath(north.id, olivia.id), { key: southOnly.key });
    const unknown = await app.request(showPath(999_999, olivia.id), { key: southOnly.key });
    expect(outside.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(await outside.json()).toEqual(await unknown.json());
    const graph = await app.graphql(SHOW, { dealership_id: north.id, id: olivia.id }, southOnly.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
    // The key still reads its own dealership.
    expect((await app.request(showPath(south.id, southContact.id), { key: southOnly.key })).status).toBe(200);
  });

  it('is 403 without read:contact, on both doors', async () => {
    const response = await app.request(showPath(north.id, olivia.id), { key: withoutPermission.key });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual(forbidden);
    const graph = await app.graphql(SHOW, { dealership_id: north.id, id: olivia.id }, withoutPermission.key);
    expect(graph.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('is 401 without a key or with a bad one, on both doors', async () => {
    for (const headers of [{}, { authorization: 'Bearer dlr_nope' }] as Record<string, string>[]) {
      const response = await app.request(showPath(north.id, olivia.id), { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(unauthorized);
    }
    const graph = await app.graphql(SHOW, { dealership_id: north.id, id: olivia.id });
    expect(graph.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('is 422 naming a path parameter that is not a whole number', async () => {
    const response = await app.request(showPath('north', olivia.id), { key: full.key });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field: 'dealership_id' });
    const byId = await app.request(showPath(north.id, 'x1'), { key: full.key });
    expect(byId.status).toBe(422);
    expect(await byId.json()).toMatchObject({ error: 'invalid_input', field: 'id' });
  });
});

describe('GET /dealerships/{dealership_id}/contacts', () => {
  it("answers an array of the dealership's contacts by id, the model name under `raw_model`", async () => {
    const response = await app.request(listPath(north.id), { key: full.key });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      oliviaAnswer('raw_model', { personalData: true }),
      { id: noah.id, dealership_id: north.id, first_name: 'Noah', postcode: null, vehicles: [] },
    ]);
  });

  it('never lists another dealership’s contacts', async () => {
    const body = (await (await app.request(listPath(south.id), { key: full.key })).json()) as { id: number; dealership_id: number }[];
    expect(body.map((contact) => contact.id)).toEqual([southContact.id]);
    expect(body.every((contact) => contact.dealership_id === south.id)).toBe(true);
  });

  it('hides the postcode without read:personal_data, and only that', async () => {
    const body = await (await app.request(listPath(north.id), { key: withoutPersonal.key })).json();
    expect(body[0]).toEqual(oliviaAnswer('raw_model', { personalData: false }));
  });

  it('answers the same through GraphQL', async () => {
    for (const key of [full.key, withoutPersonal.key]) {
      const rest = await (await app.request(listPath(north.id, '?page=1&per_page=10'), { key })).json();
      const graph = await app.graphql(LIST, { dealership_id: north.id, page: 1, per_page: 10 }, key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.contacts).toEqual(rest);
    }
  });

  it('pages: 50 by default, page and per_page choose the slice, past the end is empty', async () => {
    const ids = async (query: string) =>
      ((await (await app.request(listPath(paged.id, query), { key: full.key })).json()) as { id: number }[]).map((c) => c.id);
    expect(await ids('')).toEqual(pagedIds.slice(0, 50));
    expect(await ids('?page=2')).toEqual(pagedIds.slice(50, 100));
    expect(await ids('?page=5')).toEqual(pagedIds.slice(200, 230));
    expect(await ids('?page=2&per_page=7')).toEqual(pagedIds.slice(7, 14));
    expect(await ids('?per_page=200')).toEqual(pagedIds.slice(0, 200));
    expect(await ids('?page=2&per_page=200')).toEqual(pagedIds.slice(200));
    expect(await ids('?page=6')).toEqual([]);
    const graph = await app.graphql<{ contacts: { id: number }[] }>(LIST, { dealership_id: paged.id, page: 3, per_page: 4 }, full.key);
    expect(graph.data?.contacts.map((c) => c.id)).toEqual(pagedIds.slice(8, 12));
  });

  it.each([
    ['?page=0', 'page'],
    ['?page=-1', 'page'],
    ['?per_page=0', 'per_page'],
    ['?per_page=201', 'per_page'],
    ['?page=two', 'page'],
    ['?per_page=1.5', 'per_page'],
  ])('is 422 naming the parameter for %s', async (query, field) => {
    const response = await app.request(listPath(paged.id, query), { key: full.key });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: 'invalid_input', field });
  });

  it('states the range in the 422 message, and GraphQL names the argument too', async () => {
    const response = await app.request(listPath(paged.id, '?per_page=500'), { key: full.key });
    expect(await response.json()).toEqual({ error: 'invalid_input', message: 'per_page: must be from 1 to 200', field: 'per_page' });
    const graph = await app.graphql(LIST, { dealership_id: paged.id, page: 0 }, full.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'page' });
  });

  it('is 404 dealership_not_found for an unknown dealership and for one outside the key', async () => {
    for (const [dealershipId, key] of [
      [999_999, full.key],
      [north.id, southOnly.key],
    ] as const) {
      const response = await app.request(listPath(dealershipId), { key });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual(dealershipNotFound);
    }
    const graph = await app.graphql(LIST, { dealership_id: north.id }, southOnly.key);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
  });

  it('is 403 without read:contact and 401 without a valid key', async () => {
    const denied = await app.request(listPath(north.id), { key: withoutPermission.key });
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual(forbidden);
    const anonymous = await app.request(listPath(north.id));
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(unauthorized);
    expect((await app.graphql(LIST, { dealership_id: north.id }, withoutPermission.key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.graphql(LIST, { dealership_id: north.id })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('costs the same number of SQL statements for 2 contacts with vehicles as for 40', async () => {
    const many = await makeDealership(app.db);
    for (let index = 0; index < 40; index += 1) {
      const contact = await makeContact(app.db, many.id);
      await makeContactVehicle(app.db, contact.id);
      await makeContactVehicle(app.db, contact.id);
    }
    const count = async (perPage: number) => {
      app.queries.length = 0;
      const response = await app.request(listPath(many.id, `?per_page=${perPage}`), { key: full.key });
      const body = (await response.json()) as { vehicles: unknown[] }[];
      expect(body).toHaveLength(perPage);
      expect(body.every((contact) => contact.vehicles.length === 2)).toBe(true);
      return app.queries.filter((sql) => !/api_key/i.test(sql)).length;
    };
    const forTwo = await count(2);
    // The dealership check, the contacts, their vehicles: one statement each, whatever the page size.
    expect(forTwo).toBe(3);
    expect(await count(40)).toBe(forTwo);
  });
});
