// The graph for normalising clients: mutations hand back the graph record they changed (`node`, with
// its global id) so a client cache updates the Car or Lead it holds, while the REST bodies of the same
// root fields stay the spec's shapes; every connection of the graph tells its totalCount, counted
// among the rows the key reaches.
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeGlobalID } from '@pothos/plugin-relay';
import { allPermissions } from '../src/auth/permissions.ts';
import { forDealerships } from '../src/db/scoped.ts';
import type { TestApp } from './support/app.ts';
import { createDemoApp } from './support/demo.ts';
import { carInput } from './support/fixtures-cars.ts';
import { graphLead, samplePayload } from './support/fixtures-leads.ts';
import { makeKey } from './support/fixtures.ts';

let app: TestApp;
let key: string;
let firstDealershipKey: string;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  firstDealershipKey = (await makeKey(app.db, { permissions: allPermissions, dealershipIds: [1] })).key;
}, 120_000);

describe('mutation payloads', () => {
  it('update_car hands back the graph’s Car, which the REST body does not show', async () => {
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: 1 }, orderBy: { id: 'asc' } });
    const input = carInput(1, { stocknum: car.stocknum, odometer: 12345 });
    const graph = await app.graphql<{
      update_car: { car: { databaseId: number }; node: { __typename: string; id: string; databaseId: number; odometer: number } };
    }>(
      `mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { car { databaseId } node { __typename id databaseId odometer } } }`,
      { id: car.id, car: input },
      key,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data!.update_car.node).toEqual({
      __typename: 'Car',
      id: encodeGlobalID('Car', car.id),
      databaseId: car.id,
      odometer: 12345,
    });

    const rest = await app.request(`/api/cars/${car.id}`, { method: 'PUT', key, json: { car: { ...input, odometer: 23456 } } });
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['car', 'skipped_fields']);
    expect(JSON.stringify(body)).not.toContain('node_id');
  });

  it('reserve_car hands back the graph’s Car; null without read:car', async () => {
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: 1, reserved: false }, orderBy: { id: 'desc' } });
    const mutation = `mutation ($id: String!, $reserved: Boolean!) { reserve_car(id: $id, reserved: $reserved) { reserved node { __typename id reserved } } }`;
    const reserved = await app.graphql<{ reserve_car: { reserved: boolean; node: unknown } }>(
      mutation,
      { id: String(car.id), reserved: true },
      key,
    );
    expect(reserved.errors).toBeUndefined();
    expect(reserved.data!.reserve_car).toEqual({
      reserved: true,
      node: { __typename: 'Car', id: encodeGlobalID('Car', car.id), reserved: true },
    });
    const writer = await makeKey(app.db, { permissions: ['reserve:car'] });
    const released = await app.graphql<{ reserve_car: { reserved: boolean; node: unknown } }>(
      mutation,
      { id: String(car.id), reserved: false },
      writer.key,
    );
    expect(released.errors).toBeUndefined();
    expect(released.data!.reserve_car).toEqual({ reserved: false, node: null });
    const rest = await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key });
    expect(rest.status).toBe(200);
    expect(Object.keys((await rest.json()) as object).sort()).toEqual(['id', 'reserved', 'reserved_at', 'slug', 'stocknum']);
  });

  it('create_lead and update_lead hand back the graph’s Lead, which the REST body does not show', async () => {
    const created = await app.graphql<{
      create_lead: { lead: { databaseId: number }; node: { __typename: string; id: string; databaseId: number; lead_state: string } };
    }>(
      `mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { databaseId } node { __typename id databaseId lead_state } } }`,
      { lead: graphLead(samplePayload(1, { email: 'payload.buyer@example.com' })) },
      key,
    );
    expect(created.errors).toBeUndefined();
    const { databaseId: id } = created.data!.create_lead.lead;
    expect(created.data!.create_lead.node).toMatchObject({ __typename: 'Lead', id: encodeGlobalID('Lead', id), databaseId: id });
    const updated = await app.graphql<{ update_lead: { node: { databaseId: number; message: string } } }>(
      `mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { node { databaseId message } } }`,
      { id, lead: { message: 'Still keen' } },
      key,
    );
    expect(updated.errors).toBeUndefined();
    expect(updated.data!.update_lead.node).toEqual({ databaseId: id, message: 'Still keen' });

    const rest = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      json: { lead: samplePayload(1, { email: 'payload.rest@example.com' }) },
    });
    expect(rest.status).toBe(201);
    const body = (await rest.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['lead']);
    expect(JSON.stringify(body)).not.toContain('node_id');
  });
});

describe('a payload’s graph record without the read permission', () => {
  it('is null on every mutation payload, and the mutation still answers (the REST door is unaffected)', async () => {
    const car = await app.db.car.findFirstOrThrow({ where: { dealership_id: 1 }, orderBy: { id: 'asc' } });
    const carWriter = (await makeKey(app.db, { permissions: ['update:car'] })).key;
    const updated = await app.graphql<{ update_car: { car: { databaseId: number }; node: unknown } }>(
      `mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { car { databaseId } node { id } } }`,
      { id: car.id, car: carInput(1, { stocknum: car.stocknum }) },
      carWriter,
    );
    expect(updated.errors).toBeUndefined();
    expect(updated.data!.update_car).toEqual({ car: { databaseId: car.id }, node: null });

    const leadWriter = (await makeKey(app.db, { permissions: ['create:lead'] })).key;
    const created = await app.graphql<{ create_lead: { lead: { databaseId: number }; node: unknown } }>(
      `mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { databaseId } node { id } } }`,
      { lead: graphLead(samplePayload(1, { email: 'payload.noread@example.com' })) },
      leadWriter,
    );
    expect(created.errors).toBeUndefined();
    expect(created.data!.create_lead.node).toBeNull();
    expect(created.data!.create_lead.lead.databaseId).toEqual(expect.any(Number));
  });
});

describe('connections', () => {
  it('tell their totalCount, among the rows the key reaches', async () => {
    const query = `{
      cars(first: 2) { totalCount edges { node { id } } }
      leads(first: 2) { totalCount }
      dealerships(first: 1) { totalCount edges { node { databaseId cars(first: 1) { totalCount } } } }
    }`;
    type Counts = {
      cars: { totalCount: number; edges: unknown[] };
      leads: { totalCount: number };
      dealerships: { totalCount: number; edges: { node: { databaseId: number; cars: { totalCount: number } } }[] };
    };
    for (const [caller, dealershipIds] of [
      [key, null],
      [firstDealershipKey, [1]],
    ] as const) {
      const scoped = forDealerships(app.db, dealershipIds);
      const answer = await app.graphql<Counts>(query, {}, caller);
      expect(answer.errors).toBeUndefined();
      const counts = answer.data!;
      expect(counts.cars.edges).toHaveLength(2);
      expect(counts.cars.totalCount).toBe(await scoped.car.count());
      expect(counts.leads.totalCount).toBe(await scoped.lead.count());
      expect(counts.dealerships.totalCount).toBe(await scoped.dealership.count());
      const first = counts.dealerships.edges[0]!.node;
      expect(first.cars.totalCount).toBe(await scoped.car.count({ where: { dealership_id: first.databaseId } }));
    }
    // The restricted key's counts are its own, not the whole database's.
    expect(await forDealerships(app.db, [1]).car.count()).toBeLessThan(await app.db.car.count());
  });

  it('count what their filters select', async () => {
    const answer = await app.graphql<{ cars: { totalCount: number } }>(`{ cars(dealership_id: 2, first: 1) { totalCount } }`, {}, key);
    expect(answer.data!.cars.totalCount).toBe(await app.db.car.count({ where: { dealership_id: 2 } }));
  });
});
