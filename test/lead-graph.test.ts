// The lead in the graph (GraphQL only): Query.lead, Query.leads, Car.leads. Scoped to the key's
// dealerships, read:lead required, personal data and the linked contact and car behind their own
// permissions, and no N+1 across a page of leads.
import { getNamedType, isObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeContact, makeDealership, makeKey } from './support/fixtures.ts';
import { makeStoredLead } from './support/fixtures-leads.ts';

const LEAD = `query ($id: Int!) { lead(id: $id) {
  id: databaseId dealership_id category source lead_state name email phone dob tags fields charge_breakdown created_at
  contact { id: databaseId first_name } car { id: databaseId stocknum } payment { amount } address { city postcode } files { file_type byte_size }
} }`;

let app: TestApp;
let north: { id: number };
let south: { id: number };
let car: { id: number };
let lead: { id: number };
let southLead: { id: number };
let contact: { id: number };
let full: { key: string };
let plain: { key: string };
let northOnly: { key: string };
let noRead: { key: string };

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  car = await makeCar(app.db, north.id, { stocknum: 'G1' });
  contact = await makeContact(app.db, north.id, { first_name: 'Jo' });
  lead = await makeStoredLead(app.db, north.id, {
    name: 'Jo Citizen',
    email: 'jo@example.com',
    phone: '+61412345678',
    dob: new Date('1990-02-28T00:00:00.000Z'),
    tags: ['hot'],
    fields: { document_type: 'ppsr' },
    charge_breakdown: { total: { amount: 10 } },
    contact_id: contact.id,
    car_id: car.id,
    created_at: new Date('2026-11-20T00:00:00.000Z'),
    payment: { create: { amount: 12.5 } },
    address: { create: { city: 'Hobart', postcode: 7000 } },
    files: { create: { file_type: 'resume', storage_key: 'leads/test/graph-1', byte_size: 3, sha256: 'abc' } },
  });
  southLead = await makeStoredLead(app.db, south.id);
  full = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data', 'read:contact', 'read:car'] });
  plain = await makeKey(app.db, { permissions: ['read:lead'] });
  northOnly = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'], dealershipIds: [north.id] });
  noRead = await makeKey(app.db, { permissions: ['create:lead', 'read:car'] });
});

describe('Query.lead', () => {
  it('answers the lead with its contact, car, payment, address and files', async () => {
    const result = await app.graphql(LEAD, { id: lead.id }, full.key);
    expect(result.errors).toBeUndefined();
    expect(result.data?.lead).toEqual({
      id: lead.id,
      dealership_id: north.id,
      category: 'GENERAL_ENQUIRY',
      source: 'Website',
      lead_state: 'new',
      name: 'Jo Citizen',
      email: 'jo@example.com',
      phone: '+61412345678',
      dob: '1990-02-28',
      tags: ['hot'],
      fields: { document_type: 'ppsr' },
      charge_breakdown: { total: { amount: 10 } },
      created_at: '2026-11-20T00:00:00.000Z',
      contact: { id: contact.id, first_name: 'Jo' },
      car: { id: car.id, stocknum: 'G1' },
      payment: { amount: 12.5 },
      address: { city: 'Hobart', postcode: 7000 },
      files: [{ file_type: 'RESUME', byte_size: 3 }],
    });
  });

  it('answers its payment, address and files in the types the write answer uses, dates from the rows', async () => {
    const schema = getSchema();
    const partType = (type: string, field: string) => {
      const object = schema.getType(type);
      return isObjectType(object) ? getNamedType(object.getFields()[field]!.type).name : null;
    };
    for (const part of ['payment', 'address', 'files']) expect(partType('LeadRecord', part), part).toBe(partType('Lead', part));
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: lead.id }, include: { payment: true, files: true } });
    const result = await app.graphql(
      `query ($id: Int!) { lead(id: $id) { payment { __typename id: databaseId created_at } address { __typename } files { __typename id: databaseId created_at } } }`,
      { id: lead.id },
      full.key,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data?.lead).toEqual({
      payment: { __typename: 'LeadPayment', id: stored.payment!.id, created_at: stored.payment!.created_at.toISOString() },
      address: { __typename: 'LeadAddress' },
      files: [{ __typename: 'LeadFile', id: stored.files[0]!.id, created_at: stored.files[0]!.created_at.toISOString() }],
    });
  });

  it('nulls personal data, the contact and the car for a key with read:lead alone', async () => {
    const result = await app.graphql(LEAD, { id: lead.id }, plain.key);
    expect(result.errors).toBeUndefined();
    expect(result.data?.lead).toMatchObject({
      name: null,
      email: null,
      phone: null,
      dob: null,
      address: null,
      contact: null,
      car: null,
      payment: { amount: 12.5 },
    });
  });

  it('answers another dealership’s lead exactly like a missing one: null, without failing the rest of the answer', async () => {
    const foreign = await app.graphql(LEAD, { id: southLead.id }, northOnly.key);
    const missing = await app.graphql(LEAD, { id: 999_999 }, northOnly.key);
    expect(foreign).toEqual({ status: 200, data: { lead: null } });
    expect(missing).toEqual(foreign);
    const both = await app.graphql<{ found: { id: number } | null; gone: unknown }>(
      `query ($found: Int!, $gone: Int!) { found: lead(id: $found) { id: databaseId } gone: lead(id: $gone) { id: databaseId } }`,
      { found: lead.id, gone: 999_999 },
      plain.key,
    );
    expect(both.errors).toBeUndefined();
    expect(both.data).toEqual({ found: { id: lead.id }, gone: null });
  });

  it('is FORBIDDEN without read:lead and UNAUTHENTICATED without a key', async () => {
    expect((await app.graphql(LEAD, { id: lead.id }, noRead.key)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await app.graphql(LEAD, { id: lead.id })).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});

describe('Query.leads', () => {
  const LEADS = `query ($dealership_id: Int, $first: Int, $after: String) {
    leads(dealership_id: $dealership_id, first: $first, after: $after) {
      edges { node { id: databaseId dealership_id contact { id: databaseId } payment { amount } files { byte_size } } }
      pageInfo { hasNextPage endCursor }
    } }`;

  it('lists the key’s dealerships’ leads, newest first, in pages', async () => {
    const extra = [];
    for (let i = 0; i < 3; i += 1) extra.push(await makeStoredLead(app.db, north.id));
    const first = await app.graphql<{
      leads: { edges: { node: { id: number } }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    }>(LEADS, { first: 2 }, northOnly.key);
    expect(first.errors).toBeUndefined();
    expect(first.data?.leads.edges.map((edge) => edge.node.id)).toEqual([extra[2]?.id, extra[1]?.id]);
    expect(first.data?.leads.pageInfo.hasNextPage).toBe(true);
    const rest = await app.graphql<{ leads: { edges: { node: { id: number; dealership_id: number } }[] } }>(
      LEADS,
      { first: 10, after: first.data?.leads.pageInfo.endCursor },
      northOnly.key,
    );
    expect(rest.data?.leads.edges.map((edge) => edge.node.id)).toEqual([extra[0]?.id, lead.id]);
    // The unrestricted key sees south's lead too; the filter narrows it.
    const all = await app.graphql<{ leads: { edges: { node: { id: number } }[] } }>(LEADS, { first: 50 }, full.key);
    expect(all.data?.leads.edges.map((edge) => edge.node.id)).toContain(southLead.id);
    const southOnly = await app.graphql<{ leads: { edges: { node: { id: number } }[] } }>(LEADS, { dealership_id: south.id }, full.key);
    expect(southOnly.data?.leads.edges.map((edge) => edge.node.id)).toEqual([southLead.id]);
  });

  it('answers a dealership the key cannot read like a missing one', async () => {
    const result = await app.graphql(LEADS, { dealership_id: south.id }, northOnly.key);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', error: 'dealership_not_found' });
  });

  it('loads a page of leads with their relations in a fixed number of queries', async () => {
    for (let i = 0; i < 12; i += 1) {
      const person = await makeContact(app.db, north.id);
      await makeStoredLead(app.db, north.id, { contact_id: person.id, payment: { create: { amount: i } } });
    }
    app.queries.length = 0;
    const small = await app.graphql(LEADS, { first: 2 }, full.key);
    expect(small.errors).toBeUndefined();
    const fewQueries = app.queries.length;
    app.queries.length = 0;
    const big = await app.graphql(LEADS, { first: 15 }, full.key);
    expect(big.errors).toBeUndefined();
    expect(app.queries.length).toBe(fewQueries);
  });
});

describe('Car.leads', () => {
  const CAR = `query ($id: String!) { car(id: $id) { id: databaseId leads { totalCount edges { node { id: databaseId } } } } }`;

  it('lists the car’s leads for a key with read:lead, and is null without it', async () => {
    const withLeads = await app.graphql<{ car: { leads: unknown } }>(CAR, { id: String(car.id) }, full.key);
    expect(withLeads.errors).toBeUndefined();
    expect(withLeads.data?.car.leads).toEqual({ totalCount: 1, edges: [{ node: { id: lead.id } }] });
    const without = await app.graphql<{ car: { leads: unknown } }>(CAR, { id: String(car.id) }, noRead.key);
    expect(without.errors).toBeUndefined();
    expect(without.data?.car.leads).toBeNull();
  });
});
