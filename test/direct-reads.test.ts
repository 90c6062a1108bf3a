// The key details' dealerships are read straight through the driver adapter (src/db/direct-reads.ts,
// src/domain/key-dealerships.ts) when the selection asks only what the fixed plan reads. That is only
// sound if it answers exactly what Prisma answers: the same records (every column, every value type)
// from the same SQL statements, for every reach a key can have and every selection the plan takes,
// and Prisma's own answer for any other selection or client. Run on both engines.
import { beforeAll, describe, expect, it } from 'vitest';
import { forDealerships, reachOf, type ScopedDb } from '../src/db/scoped.ts';
import { keyDealerships } from '../src/domain/key-dealerships.ts';
import { createDemoApp } from './support/demo.ts';
import type { TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';

let app: TestApp;
let key: string;
let emptyDealershipId: number;

const LOCATIONS = { orderBy: { id: 'asc' } };
const STAFF = { orderBy: { user_id: 'asc' }, select: { user: true } };
/** Every query the fixed plan answers: what Pothos asks for each selection of the key details' dealerships. */
const FIXED_QUERIES: Record<string, Record<string, unknown>> = {
  'scalars only': {},
  locations: { include: { locations: LOCATIONS } },
  staff: { include: { users: STAFF } },
  'locations and staff': { include: { locations: LOCATIONS, users: STAFF } },
  'staff and locations, asked in the other order': { include: { users: STAFF, locations: LOCATIONS } },
};

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  // A dealership without locations or staff, and a user on two dealerships (two links, one user).
  emptyDealershipId = (await makeDealership(app.db)).id;
  await makeUser(app.db, [1, 2]);
});

/** What `read` answers and the statements it sends. */
async function run<T>(read: () => Promise<T>): Promise<{ answer: T; statements: string[] }> {
  app.queries.length = 0;
  const answer = await read();
  return { answer, statements: app.queries.splice(0).sort() };
}

describe('the key details dealerships read directly', () => {
  it('answers the records and statements Prisma does, for every fixed selection and every reach', async () => {
    const reaches: [string, number[] | null][] = [
      ['every dealership', null],
      ['one dealership', [2]],
      ['several, one without locations or staff', [1, 3, emptyDealershipId]],
      ['a dealership that does not exist', [999_999]],
    ];
    let compared = 0;
    for (const [reachName, ids] of reaches) {
      const client = forDealerships(app.db, ids);
      for (const [queryName, query] of Object.entries(FIXED_QUERIES)) {
        const label = `${reachName}, ${queryName}`;
        const direct = await run(() => keyDealerships(client, query));
        const prisma = await run(() => client.dealership.findMany({ ...query, orderBy: { id: 'asc' } }));
        expect(direct.answer, label).toEqual(prisma.answer);
        expect(direct.statements, label).toEqual(prisma.statements);
        compared += 1;
      }
    }
    expect(compared).toBe(20);
  });

  it('reads the demo data with dates, enums and empty columns as Prisma types them', async () => {
    const direct = await keyDealerships(app.db as ScopedDb, FIXED_QUERIES['locations and staff'] as Record<string, unknown>);
    const first = direct[0] as unknown as { created_at: unknown; locations: { location_type: unknown; created_at: unknown }[] };
    expect(first.created_at).toBeInstanceOf(Date);
    expect(first.locations[0]?.created_at).toBeInstanceOf(Date);
    expect(typeof first.locations[0]?.location_type).toBe('string');
    // Some location has an empty (null) column, as the demo data has.
    const locations = (direct as unknown as { locations: Record<string, unknown>[] }[]).flatMap((dealership) => dealership.locations);
    expect(locations.some((location) => Object.values(location).includes(null))).toBe(true);
  });

  it('reads a date written in any form the engine keeps as Prisma reads it', async () => {
    // Written by another writer than Prisma: without a zone, with a space, date only, with an offset.
    const forms = ['2024-06-11 05:35:46', '2024-06-11T05:35:46.5', '2024-06-11', '2024-06-11T05:35:46+10:00', '2024-06-11 05:35:46.123Z'];
    const ids: number[] = [];
    for (const form of forms) {
      const dealership = await makeDealership(app.db);
      await app.db.$executeRawUnsafe(`UPDATE dealerships SET created_at = '${form}' WHERE id = ${dealership.id}`);
      ids.push(dealership.id);
    }
    const client = forDealerships(app.db, ids);
    const direct = await run(() => keyDealerships(client, {}));
    const prisma = await run(() => client.dealership.findMany({ orderBy: { id: 'asc' } }));
    expect(direct.answer).toEqual(prisma.answer);
    expect(direct.answer.map((dealership) => dealership.created_at.getTime()).every(Number.isFinite)).toBe(true);
  });

  it('leaves any other selection to Prisma: a location address is read with its own statement', async () => {
    const { answer, statements } = await run(() =>
      app.graphql<{ apikey_details: { dealerships: { locations: { address: { city: string } | null }[] }[] } }>(
        '{ apikey_details { dealerships { locations { name address { city } } } } }',
        {},
        key,
      ),
    );
    expect(answer.status).toBe(200);
    expect(statements.some((sql) => /location_addresses/.test(sql))).toBe(true);
    const cities = answer.data?.apikey_details.dealerships.flatMap((dealership) =>
      dealership.locations.map((location) => location.address?.city),
    );
    expect(cities?.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('answers both doors the same whichever way the rows were read', async () => {
    const restricted = await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [2, emptyDealershipId] });
    for (const caller of [key, restricted.key]) {
      const rest = await app.request('/api/v1/apikeys/apikey_details.json', { key: caller });
      expect(rest.status).toBe(200);
      const body = (await rest.json()) as { dealerships: { id: number; users: unknown[]; locations: unknown[] }[] };
      const graph = await app.graphql<{ apikey_details: { dealerships: { id: number; users: unknown[]; locations: unknown[] }[] } }>(
        '{ apikey_details { dealerships { id: databaseId name slug users { id: databaseId name email } locations { id: databaseId name location_type } } } }',
        {},
        caller,
      );
      expect(graph.data?.apikey_details.dealerships).toEqual(body.dealerships);
      expect(body.dealerships.length).toBeGreaterThan(0);
    }
  });

  it('vouches only for the clients it made and the reaches a direct read takes: a transaction client, no dealership or too many go through Prisma', async () => {
    expect(reachOf(app.db as ScopedDb)).toEqual({ db: app.db, dealershipIds: null });
    expect(reachOf(forDealerships(app.db, [3, 1]))).toEqual({ db: app.db, dealershipIds: [1, 3] });
    // No dealership, and more than one list of values holds: left to the client itself.
    expect(reachOf(forDealerships(app.db, []))).toBeUndefined();
    expect(
      reachOf(
        forDealerships(
          app.db,
          Array.from({ length: 501 }, (_, index) => index + 1),
        ),
      ),
    ).toBeUndefined();
    const insideTransaction = await app.db.$transaction(async (tx) => reachOf(tx as unknown as ScopedDb));
    expect(insideTransaction).toBeUndefined();
  });
});
