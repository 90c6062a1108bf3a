// A dealership's lists in the graph are Relay connections with totalCount (locations, websites, users,
// contacts, cars), like the graph's root lists: paged by cursor, counted among the rows the key
// reaches, guarded by the permission of the records they hold, and a constant number of statements
// for a page of dealerships however many it holds. The REST door keeps the contact list's
// page/per_page array (test/contacts.test.ts).
import { encodeGlobalID } from '@pothos/plugin-relay';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeContact, makeDealership, makeKey, makeLocation, makeUser, makeWebsite } from './support/fixtures.ts';

type Page<Node> = {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { cursor: string; node: Node }[];
};
type Lists = {
  id: number;
  locations: Page<{ id: number; dealership_id: number }>;
  websites: Page<{ id: number }>;
  users: Page<{ id: number }>;
  contacts: Page<{ id: number; dealership_id: number }> | null;
};

const LISTS = `id: databaseId
  locations { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id: databaseId dealership_id } } }
  websites { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id: databaseId } } }
  users { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id: databaseId } } }
  contacts { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id: databaseId dealership_id } } }`;

let app: TestApp;
let home: { id: number };
let away: { id: number };
const rows = {
  home: { locations: [] as number[], websites: [] as number[], users: [] as number[], contacts: [] as number[] },
  away: { locations: [] as number[], websites: [] as number[], users: [] as number[], contacts: [] as number[] },
};
let homeKey: string;
let allKey: string;
let withoutContacts: string;

beforeAll(async () => {
  app = await createTestApp();
  home = await makeDealership(app.db, { name: 'Home Lists' });
  away = await makeDealership(app.db, { name: 'Away Lists' });
  // Different numbers of each at each dealership, so a count of the other's rows cannot pass.
  for (const [dealership, side, count] of [
    [home, 'home', 3],
    [away, 'away', 2],
  ] as const) {
    for (let index = 0; index < count; index += 1) {
      rows[side].locations.push((await makeLocation(app.db, dealership.id)).id);
      rows[side].websites.push((await makeWebsite(app.db, dealership.id)).id);
      rows[side].users.push((await makeUser(app.db, [dealership.id])).id);
      rows[side].contacts.push((await makeContact(app.db, dealership.id)).id);
    }
  }
  // A user of both dealerships is staff of each, and counted at each.
  const shared = (await makeUser(app.db, [home.id, away.id])).id;
  rows.home.users.push(shared);
  rows.away.users.push(shared);
  const permissions = ['index:dealership', 'read:contact'] as const;
  homeKey = (await makeKey(app.db, { permissions: [...permissions], dealershipIds: [home.id] })).key;
  allKey = (await makeKey(app.db, { permissions: [...permissions] })).key;
  withoutContacts = (await makeKey(app.db, { permissions: ['index:dealership'] })).key;
});

const ids = (page: Page<{ id: number }>) => page.edges.map((edge) => edge.node.id);

function expectLists(lists: Lists, side: 'home' | 'away'): void {
  for (const name of ['locations', 'websites', 'users', 'contacts'] as const) {
    const page = lists[name]!;
    expect(ids(page), `${side} ${name}`).toEqual([...rows[side][name]].sort((a, b) => a - b));
    expect(page.totalCount, `${side} ${name}`).toBe(rows[side][name].length);
    expect(page.pageInfo.hasNextPage, `${side} ${name}`).toBe(false);
  }
}

describe("a dealership's connections", () => {
  it("answer a restricted key only its dealership's rows and counts, by every way in", async () => {
    const byId = await app.graphql<{ dealership: Lists | null }>(
      `query ($id: Int!) { dealership(id: $id) { ${LISTS} } }`,
      { id: home.id },
      homeKey,
    );
    expect(byId.errors).toBeUndefined();
    expectLists(byId.data!.dealership!, 'home');

    const listed = await app.graphql<{ dealerships: { totalCount: number; edges: { node: Lists }[] } }>(
      `{ dealerships(first: 10) { totalCount edges { node { ${LISTS} } } } }`,
      undefined,
      homeKey,
    );
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.dealerships.edges.map((edge) => edge.node.id)).toEqual([home.id]);
    expect(listed.data!.dealerships.totalCount).toBe(1);
    expectLists(listed.data!.dealerships.edges[0]!.node, 'home');

    const foreign = await app.graphql(
      `query ($id: Int!, $node: ID!) { dealership(id: $id) { ${LISTS} } node(id: $node) { ... on Dealership { ${LISTS} } } }`,
      { id: away.id, node: encodeGlobalID('Dealership', away.id) },
      homeKey,
    );
    expect(foreign.errors).toBeUndefined();
    expect(foreign.data).toEqual({ dealership: null, node: null });
  });

  it('answer an unrestricted key each dealership’s own rows and counts (the test can see a difference)', async () => {
    const result = await app.graphql<{ home: Lists; away: Lists }>(
      `{ home: dealership(id: ${home.id}) { ${LISTS} } away: dealership(id: ${away.id}) { ${LISTS} } }`,
      undefined,
      allKey,
    );
    expect(result.errors).toBeUndefined();
    expectLists(result.data!.home, 'home');
    expectLists(result.data!.away, 'away');
  });

  it('page by cursor, with the count of the whole list on every page', async () => {
    const QUERY = `query ($id: Int!, $afterLocation: String, $afterUser: String) { dealership(id: $id) {
      locations(first: 2, after: $afterLocation) { totalCount pageInfo { hasNextPage endCursor } edges { node { id: databaseId } } }
      users(first: 2, after: $afterUser) { totalCount pageInfo { hasNextPage endCursor } edges { node { id: databaseId } } }
    } }`;
    type Two = { dealership: { locations: Page<{ id: number }>; users: Page<{ id: number }> } };
    const first = await app.graphql<Two>(QUERY, { id: home.id }, homeKey);
    expect(first.errors).toBeUndefined();
    const sortedUsers = [...rows.home.users].sort((a, b) => a - b);
    expect(ids(first.data!.dealership.locations)).toEqual(rows.home.locations.slice(0, 2));
    expect(ids(first.data!.dealership.users)).toEqual(sortedUsers.slice(0, 2));
    expect(first.data!.dealership.users.pageInfo.hasNextPage).toBe(true);
    for (const name of ['locations', 'users'] as const) {
      const after = first.data!.dealership[name].pageInfo.endCursor;
      const next = await app.graphql<Two>(QUERY, { id: home.id, [name === 'users' ? 'afterUser' : 'afterLocation']: after }, homeKey);
      expect(next.errors).toBeUndefined();
      expect(ids(next.data!.dealership[name])).toEqual((name === 'users' ? sortedUsers : rows.home.locations).slice(2, 4));
      expect(next.data!.dealership[name].totalCount).toBe(rows.home[name].length);
    }
  });

  it('answer a count or a page info alone (no node field asked)', async () => {
    const result = await app.graphql<{ dealership: Record<string, { totalCount: number; pageInfo: { hasNextPage: boolean } }> }>(
      `query ($id: Int!) { dealership(id: $id) { ${['locations', 'websites', 'users', 'contacts'].map((name) => `${name} { totalCount pageInfo { hasNextPage } }`).join(' ')} } }`,
      { id: home.id },
      homeKey,
    );
    expect(result.errors).toBeUndefined();
    for (const name of ['locations', 'websites', 'users', 'contacts'] as const) {
      expect(result.data!.dealership[name], name).toEqual({ totalCount: rows.home[name].length, pageInfo: { hasNextPage: false } });
    }
  });

  it('answer contacts only to a key with read:contact (null without, no error)', async () => {
    const result = await app.graphql<{ dealership: Lists }>(
      `query ($id: Int!) { dealership(id: $id) { ${LISTS} } }`,
      { id: home.id },
      withoutContacts,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!.dealership.contacts).toBeNull();
    expect(result.data!.dealership.locations.totalCount).toBe(rows.home.locations.length);
  });

  it('cost the same number of statements for a page of 2 dealerships as for 12', async () => {
    for (let index = 0; index < 10; index += 1) {
      const dealer = await makeDealership(app.db);
      await makeLocation(app.db, dealer.id);
      await makeWebsite(app.db, dealer.id);
      await makeUser(app.db, [dealer.id]);
      await makeContact(app.db, dealer.id);
    }
    const PAGE = `query ($first: Int!, $after: String) { dealerships(first: $first, after: $after) { edges { node {
      locations(first: 3) { totalCount edges { node { id: databaseId } } } websites(first: 3) { totalCount edges { node { id: databaseId } } }
      users(first: 3) { totalCount edges { node { id: databaseId } } } contacts(first: 3) { totalCount edges { node { id: databaseId } } } } } } }`;
    // Start from the first of the two dealerships above, so every dealership of a page has rows.
    const before = await app.db.dealership.count({ where: { id: { lt: home.id } } });
    const start =
      before === 0
        ? null
        : (
            await app.graphql<{ dealerships: { pageInfo: { endCursor: string } } }>(
              `{ dealerships(first: ${before}) { pageInfo { endCursor } } }`,
              undefined,
              allKey,
            )
          ).data!.dealerships.pageInfo.endCursor;
    await app.graphql('{ __typename }', undefined, allKey);
    const statements = async (size: number): Promise<number> => {
      app.queries.length = 0;
      const result = await app.graphql<{ dealerships: { edges: { node: Lists }[] } }>(PAGE, { first: size, after: start }, allKey);
      expect(result.errors).toBeUndefined();
      expect(result.data!.dealerships.edges).toHaveLength(size);
      expect(result.data!.dealerships.edges.every((edge) => edge.node.locations.totalCount > 0 && edge.node.contacts!.totalCount > 0)).toBe(
        true,
      );
      return app.queries.filter((sql) => !/api_key/i.test(sql)).length;
    };
    const small = await statements(2);
    expect(await statements(12)).toBe(small);
  });
});
