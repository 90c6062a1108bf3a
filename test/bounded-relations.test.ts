// Every connection of the graph that offers totalCount, found in the built schema (a new one is walked
// too), read through yoga.fetch on the demo data with a key restricted to one dealership and with a key
// of every dealership: the count equals the records the key pages through, and no statement counts a
// child table beyond the page's parents (src/db/bounded-relations.ts) or a root list beyond the cap
// (TOTAL_COUNT_CAP). Every list relation of the datamodel, paged under
// several parents: each parent's own page, and no statement that reads the children of all of them.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { getNamedType, isInterfaceType, isObjectType, isNonNullType, type GraphQLField, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { listRelations, PAGE_ROWS_AT_LEAST } from '../src/db/bounded-relations.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { forDealerships } from '../src/db/scoped.ts';
import { getSchema } from '../src/schema/index.ts';
import { TOTAL_COUNT_CAP } from '../src/schema/record-plugin.ts';
import type { TestApp } from './support/app.ts';
import { createDemoApp } from './support/demo.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { makeLead } from './support/fixtures-events.ts';

const schema: GraphQLSchema = getSchema();
const nodeInterface = schema.getType('Node');
const nodeTypes = new Set(
  nodeInterface && isInterfaceType(nodeInterface) ? schema.getPossibleTypes(nodeInterface).map((type) => type.name) : [],
);

interface CountedConnection {
  parent: string;
  field: string;
}

/** Every field of the schema whose type is a connection with totalCount. */
function countedConnections(): CountedConnection[] {
  const found: CountedConnection[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
      const target = getNamedType(field.type);
      if (isObjectType(target) && target.getFields().totalCount && target.getFields().edges)
        found.push({ parent: type.name, field: field.name });
    }
  }
  return found;
}

const connections = countedConnections();
const PAGE = 100;

let app: TestApp;
let everyDealershipKey: string;
let oneDealershipKey: string;

beforeAll(async () => {
  const demo = await createDemoApp();
  app = demo.app;
  everyDealershipKey = demo.key;
  oneDealershipKey = (await makeKey(app.db, { permissions: allPermissions, dealershipIds: [1] })).key;
}, 180_000);

/** A statement's relation counts: each `(SELECT fk, COUNT(*) … FROM child … GROUP BY fk)` Prisma writes. */
function relationCountSubqueries(sql: string): string[] {
  return [...sql.matchAll(/\(SELECT [^()]*?COUNT\(\*\) AS [`"]_aggr_count_[^`"]+[`"] FROM (.*?) GROUP BY /g)].map(
    (match) => match[1] ?? '',
  );
}

/** What every statement of a request must hold: counts only of the page's parents, root counts capped. */
function expectBoundedCounts(statements: readonly string[], label: string): void {
  for (const sql of statements) {
    for (const counted of relationCountSubqueries(sql)) {
      expect(counted, `${label}: a relation count restricted to the page's parents\n${sql}`).toMatch(/ IN \(/);
      expect(counted, `${label}\n${sql}`).not.toMatch(/WHERE 1=1/);
    }
    if (/^SELECT COUNT\(\*\)/.test(sql)) expect(sql, `${label}: a root count stops at the cap\n${sql}`).toMatch(/ LIMIT /);
  }
}

interface Page {
  totalCount: number;
  edges: { cursor: string }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

interface Answer {
  data?: { page?: Page | null; node?: { page?: Page | null } | null };
  errors?: unknown[];
}

/** The connection read page by page: its totalCount on the first page, and every record it pages. */
async function readWhole(
  key: string,
  connection: CountedConnection,
  parentId: string | null,
): Promise<{ totalCount: number; paged: number }> {
  const selection = `totalCount edges { cursor } pageInfo { hasNextPage endCursor }`;
  const document =
    connection.parent === 'Query'
      ? `query ($after: String) { page: ${connection.field}(first: ${PAGE}, after: $after) { ${selection} } }`
      : `query ($id: ID!, $after: String) { node(id: $id) { ... on ${connection.parent} { page: ${connection.field}(first: ${PAGE}, after: $after) { ${selection} } } } }`;
  let after: string | null = null;
  let totalCount: number | undefined;
  let paged = 0;
  for (let pages = 0; pages < 50; pages += 1) {
    app.queries.length = 0;
    const answer: Answer = await app.graphql<Answer['data'] & object>(document, { id: parentId, after }, key);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    expectBoundedCounts(app.queries, `${connection.parent}.${connection.field}`);
    const page: Page | null | undefined = connection.parent === 'Query' ? answer.data?.page : answer.data?.node?.page;
    if (!page) return { totalCount: 0, paged: 0 };
    totalCount ??= page.totalCount;
    expect(page.totalCount, 'every page says the same count').toBe(totalCount);
    paged += page.edges.length;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return { totalCount: totalCount ?? 0, paged };
}

/** Parents to read a nested connection under: the first few records of the parent type, of every dealership. */
async function parentIds(typename: string): Promise<number[]> {
  const delegate = (app.db as unknown as Record<string, { findMany(args: unknown): Promise<{ id: number }[]> }>)[
    typename[0]?.toLowerCase() + typename.slice(1)
  ];
  if (!delegate)
    throw new Error(`no Prisma model for ${typename}: a counted connection under a type that is not a model's needs its own case here`);
  const first = await delegate.findMany({ select: { id: true }, orderBy: { id: 'asc' }, take: 3 });
  const last = await delegate.findMany({ select: { id: true }, orderBy: { id: 'desc' }, take: 2 });
  return [...new Set([...first, ...last].map((row) => row.id))];
}

describe('every connection with totalCount', () => {
  it('the schema has them, nested and at the root', () => {
    const names = connections.map(({ parent, field }) => `${parent}.${field}`);
    for (const expected of ['Lead.events', 'Car.leads', 'Dealership.cars', 'Query.leads', 'Query.cars', 'Query.dealerships']) {
      expect(names).toContain(expected);
    }
  });

  for (const connection of connections) {
    it(`${connection.parent}.${connection.field}: counts what each key pages through, with bounded statements`, async () => {
      if (connection.parent !== 'Query' && !nodeTypes.has(connection.parent)) {
        throw new Error(`${connection.parent} is not a Node type: reach its connection another way in this test`);
      }
      const root = connection.parent === 'Query' ? schema.getQueryType()?.getFields()[connection.field] : undefined;
      for (const arg of root?.args ?? []) expect(isNonNullType(arg.type), `${connection.field}(${arg.name}:) is optional`).toBe(false);
      const ids =
        connection.parent === 'Query' ? [null] : (await parentIds(connection.parent)).map((id) => encodeGlobalID(connection.parent, id));
      let counted = 0;
      for (const key of [oneDealershipKey, everyDealershipKey]) {
        for (const id of ids) {
          const { totalCount, paged } = await readWhole(key, connection, id);
          expect(totalCount, `${connection.parent}.${connection.field} of ${id ?? 'the root'}`).toBe(paged);
          counted += totalCount;
        }
      }
      // Dealership.api_keys-style lists may be empty in the demo; most are not, and the sum proves something was counted.
      if (['Lead.events', 'Car.leads', 'Dealership.cars', 'Query.leads'].includes(`${connection.parent}.${connection.field}`)) {
        expect(counted).toBeGreaterThan(0);
      }
    });
  }
});

describe('relation counts of a page', () => {
  it('a dealership’s leads page with events { totalCount }: one count statement for the page, equal to a direct count per lead', async () => {
    const document = `{ leads(dealership_id: 1, first: 20) { edges { node { databaseId events { totalCount } } } } }`;
    for (const key of [oneDealershipKey, everyDealershipKey]) {
      app.queries.length = 0;
      const answer = await app.graphql<{ leads: { edges: { node: { databaseId: number; events: { totalCount: number } } }[] } }>(
        document,
        undefined,
        key,
      );
      expect(answer.errors).toBeUndefined();
      const counts = app.queries.filter((sql) => relationCountSubqueries(sql).length > 0);
      expect(counts).toHaveLength(1);
      expectBoundedCounts(app.queries, 'leads page');
      const edges = answer.data?.leads.edges ?? [];
      expect(edges.length).toBeGreaterThan(0);
      for (const { node } of edges) {
        expect(node.events.totalCount).toBe(await app.db.leadEvent.count({ where: { lead_id: node.databaseId } }));
      }
      expect(edges.some(({ node }) => node.events.totalCount > 0)).toBe(true);
    }
  });

  it('counts two levels down (a dealership page, its cars, their leads) with one statement per counting level', async () => {
    const document = `{ dealerships(first: 3) { edges { node { cars(first: 5) { totalCount edges { node { databaseId leads { totalCount } } } } } } } }`;
    app.queries.length = 0;
    const answer = await app.graphql<{
      dealerships: {
        edges: { node: { cars: { totalCount: number; edges: { node: { databaseId: number; leads: { totalCount: number } } }[] } } }[];
      };
    }>(document, undefined, oneDealershipKey);
    expect(answer.errors).toBeUndefined();
    expectBoundedCounts(app.queries, 'two levels');
    expect(app.queries.filter((sql) => relationCountSubqueries(sql).length > 0)).toHaveLength(2);
    const scoped = forDealerships(app.db, [1]);
    const dealerships = answer.data?.dealerships.edges ?? [];
    expect(dealerships).toHaveLength(1);
    for (const { node } of dealerships) {
      expect(node.cars.totalCount).toBe(await scoped.car.count({ where: { dealership_id: 1 } }));
      for (const { node: car } of node.cars.edges) {
        expect(car.leads.totalCount).toBe(await scoped.lead.count({ where: { car_id: car.databaseId } }));
      }
    }
  });

  it('keeps the tenant boundary: a car’s leads of another dealership are not counted for a restricted key', async () => {
    const other = await makeDealership(app.db);
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: 1 }, select: { id: true } });
    const before = await forDealerships(app.db, [1]).lead.count({ where: { car_id: car.id } });
    await makeLead(app.db, other.id, { car_id: car.id });
    const document = `query ($id: ID!) { node(id: $id) { ... on Car { leads { totalCount } } } }`;
    const read = async (key: string) =>
      (await app.graphql<{ node: { leads: { totalCount: number } } }>(document, { id: encodeGlobalID('Car', car.id) }, key)).data?.node
        .leads.totalCount;
    expect(await read(oneDealershipKey)).toBe(before);
    expect(await read(everyDealershipKey)).toBe(before + 1);
    // Read in the same turn, the two clients' counts are never merged into one read.
    const counted = (client: typeof app.db) =>
      client.car
        .findUniqueOrThrow({ where: { id: car.id }, select: { _count: { select: { leads: true } } } })
        .then((row) => row._count.leads);
    expect(await Promise.all([counted(forDealerships(app.db, [1])), counted(app.db), counted(forDealerships(app.db, [1]))])).toEqual([
      before,
      before + 1,
      before,
    ]);
  });

  it('node lookups of several records count in one statement for all of them', async () => {
    const ids = (await app.db.lead.findMany({ where: { dealership_id: 1 }, select: { id: true }, take: 5, orderBy: { id: 'asc' } })).map(
      (lead) => lead.id,
    );
    const document = `query ($ids: [ID!]!) { nodes(ids: $ids) { ... on Lead { databaseId events { totalCount } } } }`;
    for (const key of [oneDealershipKey, everyDealershipKey]) {
      app.queries.length = 0;
      const answer = await app.graphql<{ nodes: { databaseId: number; events: { totalCount: number } }[] }>(
        document,
        { ids: ids.map((id) => encodeGlobalID('Lead', id)) },
        key,
      );
      expect(answer.errors).toBeUndefined();
      expect(app.queries.filter((sql) => relationCountSubqueries(sql).length > 0)).toHaveLength(1);
      expectBoundedCounts(app.queries, 'nodes');
      expect(answer.data?.nodes).toHaveLength(ids.length);
      for (const node of answer.data?.nodes ?? []) {
        expect(node.events.totalCount).toBe(await app.db.leadEvent.count({ where: { lead_id: node.databaseId } }));
      }
    }
  });

  it('counts inside a transaction see the transaction’s own rows', async () => {
    const lead = await app.db.lead.findFirstOrThrow({ select: { id: true } });
    const committed = await app.db.leadEvent.count({ where: { lead_id: lead.id } });
    const counted = await app.db
      .$transaction(async (tx) => {
        await tx.leadEvent.create({ data: { lead_id: lead.id, service: 'test' } });
        const row = await tx.lead.findUniqueOrThrow({ where: { id: lead.id }, select: { _count: { select: { events: true } } } });
        throw Object.assign(new Error('roll back'), { counted: row._count.events });
      })
      .catch((error: { counted?: number }) => error.counted);
    expect(counted).toBe(committed + 1);
    expect(await app.db.leadEvent.count({ where: { lead_id: lead.id } })).toBe(committed);
  });

  it('answers a count for every row, zero included, with `_count: true` and a count `where`', async () => {
    const dealership = await makeDealership(app.db);
    const rows = await app.db.dealership.findMany({
      where: { id: { in: [1, dealership.id] } },
      orderBy: { id: 'asc' },
      select: { name: true, _count: { select: { cars: { where: { status: 'no such status' } }, leads: true } } },
    });
    expect(rows).toEqual([
      { name: expect.any(String), _count: { cars: 0, leads: await app.db.lead.count({ where: { dealership_id: 1 } }) } },
      { name: dealership.name, _count: { cars: 0, leads: 0 } },
    ]);
    const everything = await app.db.lead.findFirstOrThrow({ where: { id: 1 }, include: { _count: true } });
    expect(everything._count.events).toBe(await app.db.leadEvent.count({ where: { lead_id: 1 } }));
  });
});

type Delegate = { findMany(args: unknown): Promise<Record<string, unknown>[]> };
const delegateOf = (model: string): Delegate =>
  (app.db as unknown as Record<string, Delegate>)[`${model.charAt(0).toLowerCase()}${model.slice(1)}`] as Delegate;

/** Keys are ids or text (a document's hash): numbers by value, text as the database orders ASCII. */
const byKeyValue = (a: unknown, b: unknown): number =>
  typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;

/** The LIMIT a logged statement was sent with (its parameter on either engine), or null without one. */
function limitOf(sql: string, params: readonly unknown[]): number | null {
  const match = /LIMIT (\?|\$(\d+))/.exec(sql);
  if (!match) return null;
  const index = match[2] ? Number(match[2]) - 1 : (sql.slice(0, match.index).match(/\?/g)?.length ?? 0);
  return Number(params[index]);
}

describe('a page of a list relation under several parents', () => {
  const relations = listRelations();
  let withChildren = 0;

  // The demo publishes no client documents: three releases sharing three documents give the registry's relations parents.
  beforeAll(async () => {
    const hashes = ['0a', '1b', '2c'].map((prefix) => prefix.padEnd(64, '0'));
    await app.db.trustedDocument.createMany({ data: hashes.map((hash, n) => ({ hash, body: `query Paged${n} { __typename }` })) });
    for (const [n, version] of ['1.0.0', '1.1.0', '1.2.0'].entries()) {
      await app.db.documentRelease.create({
        data: { app: 'paged', version, documents: { create: hashes.slice(0, n + 1).map((hash) => ({ hash })) } },
      });
    }
  });

  it('the datamodel has them', () => {
    expect(relations.map(({ model, relation }) => `${model}.${relation}`)).toEqual(
      expect.arrayContaining(['Dealership.leads', 'Dealership.contacts', 'Lead.events', 'Car.leads', 'Offer.dealerships']),
    );
  });

  for (const paged of relations) {
    it(`${paged.model}.${paged.relation}: each parent's own page, read per parent`, async () => {
      const parent = delegateOf(paged.model);
      const child = delegateOf(paged.target);
      const withSome = await parent.findMany({
        where: { [paged.relation]: { some: {} } },
        select: { [paged.key]: true },
        orderBy: { [paged.key]: 'asc' },
        take: 3,
      });
      const any = await parent.findMany({ select: { [paged.key]: true }, orderBy: { [paged.key]: 'desc' }, take: 2 });
      const ids = [...new Set([...withSome, ...any].map((row) => row[paged.key]))];
      if (withSome.length > 0) withChildren += 1;
      const byKey = paged.primaryKey.map((column) => ({ [column]: 'asc' }));
      const byKeyDescending = paged.primaryKey.map((column) => ({ [column]: 'desc' }));
      for (const page of [{ take: 2 }, { take: 2, skip: 1, orderBy: byKeyDescending }]) {
        app.statements.length = 0;
        const rows = await delegateOf(paged.model).findMany({
          where: { [paged.key]: { in: ids } },
          orderBy: { [paged.key]: 'asc' },
          select: { [paged.key]: true, [paged.relation]: page },
        });
        expect(rows.map((row) => row[paged.key])).toEqual([...ids].sort(byKeyValue));
        // After the parents' own read, which names the same column where the foreign key is the parent's key (a hash).
        const readsOfChildren = app.statements
          .slice(1)
          .filter(({ sql }) => new RegExp(`[\`"]${paged.foreignKey}[\`"] (IN \\(|= )`).test(sql));
        expect(readsOfChildren.length, 'the children are read').toBeGreaterThan(0);
        for (const { sql, params } of readsOfChildren) {
          const limit = limitOf(sql, params);
          expect(limit, `a LIMIT of at most the pages' rows\n${sql}\n${JSON.stringify(params)}`).toBeGreaterThan(0);
          expect(limit).toBeLessThanOrEqual(Math.max(PAGE_ROWS_AT_LEAST, ids.length * ((page.skip ?? 0) + page.take)));
        }
        for (const row of rows) {
          const own = await child.findMany({
            where: { [paged.foreignKey]: row[paged.key] },
            orderBy: page.orderBy ?? byKey,
            take: page.take,
            skip: page.skip,
          });
          expect(row[paged.relation], `${paged.model} ${String(row[paged.key])}'s own page`).toEqual(own);
        }
      }
    });
  }

  it('reads a parent after one with more children than the shared LIMIT on its own, with its own LIMIT', async () => {
    const large = await makeDealership(app.db);
    const small = await makeDealership(app.db);
    const contacts = (dealershipId: number, count: number) =>
      Array.from({ length: count }, (_, n) => ({ dealership_id: dealershipId, first_name: `Many ${n}` }));
    await app.db.contact.createMany({ data: [...contacts(large.id, PAGE_ROWS_AT_LEAST + 50), ...contacts(small.id, 3)] });
    for (const key of [null, [large.id, small.id]]) {
      app.statements.length = 0;
      const client = key ? forDealerships(app.db, key) : app.db;
      const rows = await client.dealership.findMany({
        where: { id: { in: [large.id, small.id] } },
        orderBy: { id: 'asc' },
        select: { id: true, contacts: { take: 2, orderBy: { id: 'desc' }, select: { first_name: true } } },
      });
      expect(rows).toEqual([
        { id: large.id, contacts: [{ first_name: `Many ${PAGE_ROWS_AT_LEAST + 49}` }, { first_name: `Many ${PAGE_ROWS_AT_LEAST + 48}` }] },
        { id: small.id, contacts: [{ first_name: 'Many 2' }, { first_name: 'Many 1' }] },
      ]);
      const reads = app.statements.filter(({ sql }) => /[`"]dealership_id[`"] (IN \(|= )/.test(sql) && /contacts/.test(sql));
      expect(reads.map(({ sql, params }) => limitOf(sql, params))).toEqual([PAGE_ROWS_AT_LEAST, 2]);
    }
  });

  it('every nested connection of the graph, under several parents (nodes), reads its children with a LIMIT of the pages', async () => {
    const nested: { parent: string; field: string }[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || !nodeTypes.has(type.name)) continue;
      for (const field of Object.values(type.getFields()) as GraphQLField<unknown, unknown>[]) {
        const target = getNamedType(field.type);
        if (isObjectType(target) && target.getFields().edges) nested.push({ parent: type.name, field: field.name });
      }
    }
    expect(nested.length).toBeGreaterThan(5);
    for (const { parent, field } of nested) {
      const paged = relations.find((relation) => relation.model === parent && relation.relation === field);
      if (!paged) throw new Error(`${parent}.${field} is no list relation of the datamodel: reach it another way in this test`);
      const ids = await parentIds(parent);
      app.statements.length = 0;
      const answer = await app.graphql<{ nodes: ({ page?: { edges: unknown[] } } | null)[] }>(
        `query ($ids: [ID!]!) { nodes(ids: $ids) { ... on ${parent} { page: ${field}(first: 2) { edges { cursor } } } } }`,
        { ids: ids.map((id) => encodeGlobalID(parent, id)) },
        everyDealershipKey,
      );
      expect(answer.errors, `${parent}.${field}: ${JSON.stringify(answer.errors)}`).toBeUndefined();
      // The relation counts' reads are bounded by the parents' ids (the count tests above hold them).
      const readsOfChildren = app.statements.filter(
        ({ sql }) => new RegExp(`[\`"]${paged.foreignKey}[\`"] (IN \\(|= )`).test(sql) && !/COUNT\(\*\)/.test(sql),
      );
      expect(readsOfChildren.length, `${parent}.${field}: its children are read`).toBeGreaterThan(0);
      for (const { sql, params } of readsOfChildren) {
        const limit = limitOf(sql, params);
        expect(limit, `${parent}.${field}: a LIMIT of at most the pages' rows\n${sql}`).toBeGreaterThan(0);
        expect(limit).toBeLessThanOrEqual(Math.max(PAGE_ROWS_AT_LEAST, ids.length * 3));
      }
    }
  });

  it('the demo gives most of them children to page', () => {
    expect(withChildren).toBeGreaterThan(relations.length / 2);
  });
});

describe('a root totalCount', () => {
  it(`stops at ${TOTAL_COUNT_CAP} and says so with totalCountCapped`, async () => {
    const dealership = await makeDealership(app.db);
    const key = (await makeKey(app.db, { permissions: allPermissions, dealershipIds: [dealership.id] })).key;
    const cars = Array.from({ length: TOTAL_COUNT_CAP + 1 }, (_, n) => ({
      dealership_id: dealership.id,
      stocknum: `CAP${n}`,
      slug: `cap-${dealership.id}-${n}`,
      make: 'Capped',
      model: 'Corolla',
      year: 2020,
    }));
    await app.db.car.createMany({ data: cars });
    const document = `{ cars(make: "Capped", first: 1) { totalCount totalCountCapped } onlySignal: cars(make: "Capped") { totalCountCapped } }`;
    app.queries.length = 0;
    const capped = await app.graphql<{
      cars: { totalCount: number; totalCountCapped: boolean };
      onlySignal: { totalCountCapped: boolean };
    }>(document, undefined, key);
    expect(capped.errors).toBeUndefined();
    expect(capped.data).toEqual({ cars: { totalCount: TOTAL_COUNT_CAP, totalCountCapped: true }, onlySignal: { totalCountCapped: true } });
    const counts = app.queries.filter((sql) => /^SELECT COUNT\(\*\)/.test(sql));
    expect(counts, 'one count per connection, shared by totalCount and its signal').toHaveLength(2);
    expectBoundedCounts(app.queries, 'capped cars');

    await app.db.car.deleteMany({ where: { dealership_id: dealership.id, stocknum: 'CAP0' } });
    const exact = await app.graphql<{ cars: { totalCount: number; totalCountCapped: boolean } }>(document, undefined, key);
    expect(exact.data?.cars).toEqual({ totalCount: TOTAL_COUNT_CAP, totalCountCapped: false });
    const fewer = await app.graphql<{ leads: { totalCount: number; totalCountCapped: boolean } }>(
      `{ leads(dealership_id: 1) { totalCount totalCountCapped } }`,
      undefined,
      oneDealershipKey,
    );
    expect(fewer.data?.leads).toEqual({ totalCount: await app.db.lead.count({ where: { dealership_id: 1 } }), totalCountCapped: false });
  }, 120_000);
});
