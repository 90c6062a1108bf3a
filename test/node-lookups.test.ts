// `node(id:)` and `nodes(ids:)` walked over every type of the graph that implements Node, on the demo
// data: a key fetches back exactly the records its scoped client reaches (src/db/scoped.ts), a key
// without the type's permission gets null, an id the graph did not make is an input error naming the
// argument, and a global id round-trips to the same record with the same integer `databaseId`; the deprecated `node_id` still
// answers the same global id on the types that had it.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { readPermissionOf } from '../src/auth/record-access.ts';
import { forDealerships } from '../src/db/scoped.ts';
import type { Db } from '../src/db/client.ts';
import { getSchema } from '../src/schema/index.ts';
import { createDemoApp } from './support/demo.ts';
import { makeKey } from './support/fixtures.ts';
import type { TestApp } from './support/app.ts';

const schema: GraphQLSchema = getSchema();
const nodeInterface = schema.getType('Node');
const nodeTypes = nodeInterface && isInterfaceType(nodeInterface) ? schema.getPossibleTypes(nodeInterface).map((type) => type.name) : [];

/** The Prisma delegate of a Node type: each is named for its model. */
function idsOf(db: Db, typename: string): Promise<{ id: number }[]> {
  const delegate = (db as unknown as Record<string, { findMany(args: unknown): Promise<{ id: number }[]> }>)[
    typename[0]!.toLowerCase() + typename.slice(1)
  ];
  if (!delegate) throw new Error(`no Prisma model for the Node type ${typename}`);
  return delegate.findMany({ select: { id: true }, orderBy: { id: 'asc' }, take: 400 });
}

const NODE_QUERY = `query ($id: ID!) { node(id: $id) { __typename id ... on Node { id } } }`;

let app: TestApp;
let everything: string;
let firstDealershipKey: string;

beforeAll(async () => {
  const demo = await createDemoApp();
  app = demo.app;
  everything = demo.key;
  firstDealershipKey = (await makeKey(app.db, { permissions: allPermissions, dealershipIds: [1] })).key;
}, 120_000);

describe('node lookups', () => {
  it('the graph has Node types, each with a lookup permission', () => {
    expect(nodeTypes.length).toBeGreaterThan(0);
    for (const typename of nodeTypes) expect(readPermissionOf(typename), typename).toBeDefined();
  });

  it.each(nodeTypes)('%s: the global id round-trips, and a dealership key reaches exactly its scoped rows', async (typename) => {
    const all = await idsOf(app.db, typename);
    expect(all.length, `the demo data has ${typename} records`).toBeGreaterThan(0);
    const reachable = new Set((await idsOf(forDealerships(app.db, [1]), typename)).map((row) => row.id));
    const ids = all.map((row) => encodeGlobalID(typename, row.id));
    // `node_id` is kept only on the types that had it before `id` became the global id.
    const type = schema.getType(typename);
    const keepsNodeId = isObjectType(type) && 'node_id' in type.getFields();
    const query = `query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on ${typename} { databaseId ${keepsNodeId ? 'node_id' : ''} } } }`;
    for (let start = 0; start < ids.length; start += 100) {
      const batch = ids.slice(start, start + 100);
      const unrestricted = await app.graphql<{ nodes: ({ __typename: string; id: string; databaseId: number; node_id: string } | null)[] }>(
        query,
        { ids: batch },
        everything,
      );
      expect(unrestricted.errors, typename).toBeUndefined();
      unrestricted.data!.nodes.forEach((found, index) => {
        expect(found, `${typename} ${batch[index]}`).toEqual({
          __typename: typename,
          id: batch[index],
          databaseId: all[start + index]!.id,
          ...(keepsNodeId ? { node_id: batch[index] } : {}),
        });
      });
      const restricted = await app.graphql<{ nodes: ({ databaseId: number } | null)[] }>(query, { ids: batch }, firstDealershipKey);
      expect(restricted.errors, typename).toBeUndefined();
      restricted.data!.nodes.forEach((found, index) => {
        const id = all[start + index]!.id;
        expect(found === null ? null : found.databaseId, `${typename} ${id} for a key of dealership 1`).toBe(reachable.has(id) ? id : null);
      });
    }
  });

  it.each(nodeTypes)('%s: null without its permission; no key at all is refused', async (typename) => {
    const [first] = await idsOf(app.db, typename);
    const id = encodeGlobalID(typename, first!.id);
    const needed = readPermissionOf(typename);
    const others = allPermissions.filter((permission: Permission) => permission !== needed);
    const { key } = await makeKey(app.db, { permissions: others });
    const denied = await app.graphql<{ node: unknown }>(NODE_QUERY, { id }, key);
    expect(denied).toMatchObject({ status: 200, data: { node: null } });
    expect(denied.errors).toBeUndefined();
    const anonymous = await app.graphql(NODE_QUERY, { id });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('a dealership-scoped record of another dealership is null, as if it did not exist', async () => {
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: { not: 1 } }, select: { id: true } });
    const answer = await app.graphql<{ node: unknown }>(NODE_QUERY, { id: encodeGlobalID('Car', car.id) }, firstDealershipKey);
    expect(answer.data).toEqual({ node: null });
    const missing = await app.graphql<{ node: unknown }>(NODE_QUERY, { id: encodeGlobalID('Car', 2_000_000_000) }, everything);
    expect(missing.data).toEqual({ node: null });
  });

  it.each([
    ['not base64 at all', '!!!'],
    ['no type', Buffer.from(':5').toString('base64')],
    ['a type that is not a Node', Buffer.from('ApiKeyDetails:5').toString('base64')],
    ['a key that is not a positive integer', Buffer.from('Car:abc').toString('base64')],
    ['a key beyond Int', Buffer.from('Car:99999999999').toString('base64')],
    ['an empty id', ''],
  ])('an id the graph did not make (%s) is invalid_input naming the argument', async (_case, id) => {
    const one = await app.graphql(NODE_QUERY, { id }, everything);
    expect(one.status).toBe(200);
    expect(one.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
    const many = await app.graphql(
      `query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
      { ids: [encodeGlobalID('Manufacturer', 1), id] },
      everything,
    );
    expect(many.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ids[1]' });
  });

  it('nodes takes at most 100 ids', async () => {
    const ids = Array.from({ length: 101 }, () => encodeGlobalID('Manufacturer', 1));
    const answer = await app.graphql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids }, everything);
    expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'ids' });
  });

  it('the REST door never shows a global id', async () => {
    const response = await app.request('/manufacturers/1/offers.json', { key: everything });
    expect(response.status).toBe(200);
    const body = JSON.stringify(await response.json());
    expect(body).not.toContain('node_id');
    expect(body).not.toContain('databaseId');
    // Every `id` of the body is the spec's integer, never the graph's global id.
    const ids = [...body.matchAll(/"id":([^,}]+)/g)].map((match) => match[1]);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(id).toMatch(/^\d+$/);
  });
});
