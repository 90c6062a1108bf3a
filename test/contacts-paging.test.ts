// Spec 4.13's list at depth, on both doors: keyset pages (`after_id`) walk a dealership's contacts
// with no gap and no repeat, agree with page/per_page, and are one range of the index whatever the
// depth; `page` answers any page, a deep one by reading its ids first (along the index) and then its rows;
// the graph's connection pages by cursor (its SQL has no OFFSET) and walks the same contacts.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { KEYS_FIRST_SKIP } from '../src/db/bounded-relations.ts';
import { forDealerships } from '../src/db/scoped.ts';

const LIST = `query ($dealership_id: Int!, $page: Int, $per_page: Int, $after_id: Int) {
  contacts(dealership_id: $dealership_id, page: $page, per_page: $per_page, after_id: $after_id) { id: databaseId dealership_id }
}`;

let app: TestApp;
let big: { id: number };
let other: { id: number };
let bigIds: number[];
let full: { key: string };
let otherOnly: { key: string };

/** The statement that reads a page of contacts, on either engine's quoting. */
const CONTACT_LIST = /FROM [`"]?(\w+[`"]?\.)?[`"]?contacts[`"]? [\s\S]*ORDER BY/;
/** Its keyset condition: the contacts after the cursor's id. */
const KEYSET_CONDITION = /[`"]contacts[`"]\.[`"]id[`"] >=? /;

const listPath = (dealershipId: number, query = '') => `/dealerships/${dealershipId}/contacts${query}`;

beforeAll(async () => {
  app = await createTestApp();
  big = await makeDealership(app.db);
  other = await makeDealership(app.db);
  // Ids interleaved across two dealerships, as on a live platform: the big one's ids have gaps.
  await app.db.contact.createMany({
    data: Array.from({ length: 500 }, (_, index) => ({
      dealership_id: index % 3 === 1 ? other.id : big.id,
      first_name: `Contact ${index + 1}`,
    })),
  });
  bigIds = (await app.db.contact.findMany({ where: { dealership_id: big.id }, select: { id: true }, orderBy: { id: 'asc' } })).map(
    (row) => row.id,
  );
  full = await makeKey(app.db, { permissions: ['read:contact'] });
  otherOnly = await makeKey(app.db, { permissions: ['read:contact'], dealershipIds: [other.id] });
});

async function restIds(query: string, key = full.key): Promise<number[]> {
  const response = await app.request(listPath(big.id, query), { key });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { id: number; dealership_id: number }[];
  expect(body.every((contact) => contact.dealership_id === big.id)).toBe(true);
  return body.map((contact) => contact.id);
}

describe('GET /dealerships/{dealership_id}/contacts with after_id', () => {
  it('walks every contact of the dealership by keyset, no gap and no repeat, the same pages as page/per_page', async () => {
    expect(bigIds.length).toBeGreaterThan(300);
    for (const perPage of [7, 50, 200]) {
      const walked: number[] = [];
      let query = `?per_page=${perPage}`;
      for (let page = 1; ; page += 1) {
        const ids = await restIds(query);
        if (ids.length === 0) break;
        expect(ids).toEqual(await restIds(`?page=${page}&per_page=${perPage}`));
        walked.push(...ids);
        query = `?per_page=${perPage}&after_id=${ids.at(-1)}`;
      }
      expect(walked).toEqual(bigIds);
    }
  });

  it('answers the contacts after any id, even one that is not the dealership’s (or no contact’s)', async () => {
    const otherContact = await app.db.contact.findFirstOrThrow({ where: { dealership_id: other.id, id: { gt: bigIds[10] as number } } });
    expect(await restIds(`?after_id=${otherContact.id}&per_page=5`)).toEqual(bigIds.filter((id) => id > otherContact.id).slice(0, 5));
    expect(await restIds('?after_id=0&per_page=3')).toEqual(bigIds.slice(0, 3));
    expect(await restIds(`?after_id=${bigIds.at(-1)}`)).toEqual([]);
    expect(await restIds('?after_id=5&page=1&per_page=2')).toEqual(bigIds.filter((id) => id > 5).slice(0, 2));
  });

  it('is the same on GraphQL', async () => {
    const after = bigIds[99] as number;
    const graph = await app.graphql<{ contacts: { id: number }[] }>(
      LIST,
      { dealership_id: big.id, per_page: 20, after_id: after },
      full.key,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data?.contacts.map((contact) => contact.id)).toEqual(bigIds.slice(100, 120));
    expect(graph.data?.contacts.map((contact) => contact.id)).toEqual(await restIds(`?per_page=20&after_id=${after}`));
  });

  it('reads one range of the index by keyset (id > the cursor), whatever the depth; page reads by offset', async () => {
    app.queries.length = 0;
    await restIds(`?per_page=10&after_id=${bigIds[200]}`);
    const keyset = app.queries.find((sql) => CONTACT_LIST.test(sql));
    expect(keyset).toMatch(KEYSET_CONDITION);
    app.queries.length = 0;
    await restIds('?page=3&per_page=10');
    const byPage = app.queries.find((sql) => CONTACT_LIST.test(sql));
    expect(byPage).toBeDefined();
    expect(byPage).not.toMatch(KEYSET_CONDITION);
  });

  it.each([
    ['?after_id=-1', 'after_id', 'after_id: must be 0 or more'],
    ['?after_id=abc', 'after_id', 'after_id: must be a whole number, got "abc"'],
  ])('refuses %s with a 422 naming %s', async (query, field, message) => {
    const response = await app.request(listPath(big.id, query), { key: full.key });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', field, message });
  });

  it('keeps a restricted key to its dealerships whatever the cursor', async () => {
    const response = await app.request(listPath(big.id, `?after_id=${bigIds[0]}`), { key: otherOnly.key });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: 'dealership_not_found' });
  });
});

describe('page with after_id', () => {
  it('counts pages from after_id, and answers any page (empty past the end)', async () => {
    expect(await restIds(`?after_id=${bigIds[10]}&page=2&per_page=5`)).toEqual(bigIds.slice(16, 21));
    expect(await restIds('?page=1000000&per_page=200')).toEqual([]);
  });
});

describe('Dealership.contacts, the connection', () => {
  const CONNECTION = `query ($id: Int!, $after: String) {
    dealership(id: $id) { contacts(first: 100, after: $after) { edges { node { databaseId } } pageInfo { hasNextPage endCursor } } }
  }`;

  it('walks the same contacts by cursor, each page after the first read after its cursor’s id', async () => {
    const graphKey = await makeKey(app.db, { permissions: ['read:contact', 'index:dealership'] });
    const walked: number[] = [];
    let after: string | null = null;
    for (;;) {
      app.queries.length = 0;
      const page: {
        data?: {
          dealership: { contacts: { edges: { node: { databaseId: number } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } };
        };
        errors?: unknown;
      } = await app.graphql(CONNECTION, { id: big.id, after }, graphKey.key);
      expect(page.errors).toBeUndefined();
      const statement = app.queries.find((sql) => CONTACT_LIST.test(sql));
      expect(statement).toBeDefined();
      if (after) expect(statement).toMatch(KEYSET_CONDITION);
      const connection = page.data?.dealership.contacts;
      walked.push(...(connection?.edges ?? []).map((edge) => edge.node.databaseId));
      if (!connection?.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(walked).toEqual(bigIds);
  });
});

describe('a deep page by page/per_page', () => {
  let deep: { id: number };
  let deepIds: number[];
  const OFFSET = /\bOFFSET\b/i;
  const BY_IDS = /[`"]contacts[`"]\.[`"]id[`"] IN \(/;
  const NAME_COLUMN = /[`"]first_name[`"]/;

  beforeAll(async () => {
    deep = await makeDealership(app.db);
    await app.db.contact.createMany({
      data: Array.from({ length: KEYS_FIRST_SKIP * 1.5 + 200 }, (_, index) => ({
        dealership_id: index % 4 === 1 ? other.id : deep.id,
        first_name: `Deep ${index % 7}`,
      })),
    });
    deepIds = (await app.db.contact.findMany({ where: { dealership_id: deep.id }, select: { id: true }, orderBy: { id: 'asc' } })).map(
      (row) => row.id,
    );
    expect(deepIds.length).toBeGreaterThan(KEYS_FIRST_SKIP + 50);
  });

  const pageIds = async (query: string): Promise<number[]> => {
    const response = await app.request(listPath(deep.id, query), { key: full.key });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: number; dealership_id: number; first_name: string }[];
    expect(body.every((contact) => contact.dealership_id === deep.id && contact.first_name.startsWith('Deep '))).toBe(true);
    return body.map((contact) => contact.id);
  };

  it('answers the same contacts at every depth, on both doors, the deep ones in two statements', async () => {
    const perPage = 50;
    const last = Math.ceil(deepIds.length / perPage);
    for (const page of [KEYS_FIRST_SKIP / perPage, KEYS_FIRST_SKIP / perPage + 1, last, last + 1]) {
      app.queries.length = 0;
      const ids = await pageIds(`?page=${page}&per_page=${perPage}`);
      expect(ids).toEqual(deepIds.slice((page - 1) * perPage, page * perPage));
      const reads = app.queries.filter((sql) => CONTACT_LIST.test(sql));
      if ((page - 1) * perPage < KEYS_FIRST_SKIP) {
        expect(reads).toHaveLength(1);
        expect(reads[0]).toMatch(NAME_COLUMN);
        continue;
      }
      // The ids along the index, with the OFFSET and no other column; then the rows of those ids alone.
      const [keys, rows] = reads;
      expect(keys).toMatch(OFFSET);
      expect(keys).not.toMatch(NAME_COLUMN);
      expect(keys).toMatch(/dealership_id/);
      expect(keys).not.toMatch(BY_IDS);
      if (ids.length > 0) {
        expect(rows).toMatch(NAME_COLUMN);
        expect(rows).toMatch(BY_IDS);
        expect(rows).toMatch(/dealership_id/);
      }
      const graph = await app.graphql<{ contacts: { id: number }[] }>(LIST, { dealership_id: deep.id, page, per_page: perPage }, full.key);
      expect(graph.errors).toBeUndefined();
      expect(graph.data?.contacts.map((contact) => contact.id)).toEqual(ids);
    }
    expect(await pageIds(`?after_id=${deepIds[10]}&page=${KEYS_FIRST_SKIP / 20 + 1}&per_page=20`)).toEqual(
      deepIds.slice(11 + KEYS_FIRST_SKIP, 31 + KEYS_FIRST_SKIP),
    );
  });

  it('reads both statements through the scoped client: a restricted client skips and answers only its dealership’s rows', async () => {
    const scoped = forDealerships(app.db, [deep.id]);
    // No dealership in the query's own conditions: only the scope keeps the other dealerships' ids out of the first statement.
    const page = await scoped.contact.findMany({ orderBy: { id: 'asc' }, skip: KEYS_FIRST_SKIP, take: 30, select: { id: true } });
    expect(page.map((row) => row.id)).toEqual(deepIds.slice(KEYS_FIRST_SKIP, KEYS_FIRST_SKIP + 30));
  });

  it('keeps any order and selection of a deep findMany, the id left out when it was not selected', async () => {
    const orderBy = [{ first_name: 'desc' as const }, { id: 'asc' as const }];
    const where = { dealership_id: deep.id };
    const all = await app.db.contact.findMany({ where, orderBy, select: { id: true, first_name: true } });
    const skip = KEYS_FIRST_SKIP + 3;
    const page = await app.db.contact.findMany({ where, orderBy, skip, take: 40, select: { first_name: true, vehicles: true } });
    expect(page).toEqual(all.slice(skip, skip + 40).map(({ first_name }) => ({ first_name, vehicles: [] })));
    const backwards = await app.db.contact.findMany({ where, orderBy, skip, take: -5, select: { id: true } });
    expect(backwards.map((row) => row.id)).toEqual(all.slice(all.length - skip - 5, all.length - skip).map((row) => row.id));
  });
});
