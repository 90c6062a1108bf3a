// Spec 4.7 on both doors: the shape, the scoping of dealerships, the guarded e-mail, the 401 cases.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeLocation, makeUser } from './support/fixtures.ts';

const PATH = '/api/v1/apikeys/apikey_details.json';
// The graph names the stored integer databaseId; aliased as the REST door's id, the two answers compare as they are.
const QUERY = `{ apikey_details { id: databaseId permissions dealerships { id: databaseId name slug locations { id: databaseId name location_type } users { id: databaseId name email } } dealerships_truncated } }`;

let app: TestApp;
let north: { id: number; name: string; slug: string };
let south: { id: number };
let restricted: { id: number; key: string };
let unrestricted: { id: number; key: string };
let userEmail: string;

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db, { name: 'Northside Motors', slug: 'northside-motors' });
  south = await makeDealership(app.db);
  await makeLocation(app.db, north.id, { name: 'Northside Service', location_type: 'service' });
  await makeLocation(app.db, north.id, { name: 'Northside Sales', location_type: 'sales' });
  await makeLocation(app.db, south.id);
  const user = await makeUser(app.db, [north.id], { name: 'Priya Shah', email: 'Priya.Shah@northside.example.com' });
  userEmail = user.email;
  restricted = await makeKey(app.db, { permissions: ['read:car', 'read:personal_data'], dealershipIds: [north.id] });
  unrestricted = await makeKey(app.db, { permissions: ['read:car'] });
});

describe('GET /api/v1/apikeys/apikey_details.json', () => {
  it('answers the key id, its permissions and its dealerships with locations and users', async () => {
    const response = await app.request(PATH, { key: restricted.key });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = await response.json();
    expect(body).toEqual({
      id: restricted.id,
      permissions: ['read:car', 'read:personal_data'],
      dealerships: [
        {
          id: north.id,
          name: 'Northside Motors',
          slug: 'northside-motors',
          locations: [
            { id: expect.any(Number), name: 'Northside Service', location_type: 'service' },
            { id: expect.any(Number), name: 'Northside Sales', location_type: 'sales' },
          ],
          users: [{ id: expect.any(Number), name: 'Priya Shah', email: userEmail }],
        },
      ],
      dealerships_truncated: false,
    });
  });

  it("lists every dealership for a key with no restriction, with its staff's e-mails also without read:personal_data", async () => {
    const response = await app.request(PATH, { key: unrestricted.key });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.dealerships.map((d: { id: number }) => d.id)).toEqual([north.id, south.id]);
    expect(body.dealerships[0].users).toEqual([{ id: expect.any(Number), name: 'Priya Shah', email: 'Priya.Shah@northside.example.com' }]);
  });

  it('returns the same values through GraphQL', async () => {
    const rest = await (await app.request(PATH, { key: restricted.key })).json();
    const graph = await app.graphql(QUERY, {}, restricted.key);
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.apikey_details).toEqual(rest);
  });

  it('records when the key was last used', async () => {
    const before = await app.db.apiKey.findUniqueOrThrow({ where: { id: unrestricted.id } });
    app.clock.advance(5 * 60_000);
    await app.request(PATH, { key: unrestricted.key });
    const after = await app.db.apiKey.findUniqueOrThrow({ where: { id: unrestricted.id } });
    expect(after.last_used_at?.toISOString()).toBe(app.clock.now().toISOString());
    expect(after.last_used_at).not.toEqual(before.last_used_at);
  });
});

describe('a call without a valid key', () => {
  const cases: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['a non-bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['a key with a bad checksum', { authorization: 'Bearer dlr_AAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBCCCCCC' }],
  ];

  it.each(cases)('is 401 with the one unauthorized body: %s', async (_label, headers) => {
    const response = await app.request(PATH, { headers });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'A valid API key is required: send "Authorization: Bearer <key>".',
    });
  });

  it('is UNAUTHENTICATED on GraphQL', async () => {
    const result = await app.graphql(QUERY);
    expect(result.status).toBe(200);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
