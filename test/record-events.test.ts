// Every write that changes a record other systems are told about (src/domain/record-events.ts), on
// both doors: the event row is stored in the change's transaction, a webhook delivery is enqueued
// for each subscription of the dealership to its type, and the committed event is handed to the
// live publisher once. A refused write stores and publishes nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { RECORD_EVENT_TYPES, type RecordEvent, type RecordEventType } from '../src/domain/record-events.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation, uniqueNumber } from './support/fixtures.ts';
import { graphLead, makeStoredLead, samplePayload } from './support/fixtures-leads.ts';

type Door = 'REST' | 'GraphQL';

let app: TestApp;
const published: RecordEvent[] = [];
let dealership: { id: number };
let key: string;
let subscriptionId: number;

beforeAll(async () => {
  app = await createTestApp({}, { events: { publish: (event) => published.push(event) } });
  dealership = await makeDealership(app.db);
  await makeLocation(app.db, dealership.id, { tracking_phone: '+61293744000' });
  key = (
    await makeKey(app.db, {
      permissions: [
        'create:lead',
        'update:lead',
        'create:lead_event',
        'update:car',
        'reserve:car',
        'create:phone_call',
        'read:lead',
        'read:car',
      ],
      dealershipIds: [dealership.id],
    })
  ).key;
  const keyRow = await app.db.apiKey.findFirstOrThrow({ orderBy: { id: 'desc' } });
  const subscription = await app.db.webhookSubscription.create({
    data: {
      dealership_id: dealership.id,
      api_key_id: keyRow.id,
      url: 'https://receiver.example/hooks',
      events: [...RECORD_EVENT_TYPES],
      secret: 'unused-here',
      created_at: app.clock.now(),
      updated_at: app.clock.now(),
    },
  });
  subscriptionId = subscription.id;
});

async function ok(response: Response): Promise<Record<string, unknown>> {
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBeLessThan(300);
  return body;
}

async function graph(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await app.graphql(query, variables, key);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data as Record<string, unknown>;
}

/** Each event type's write through each door: answers the id of the record the event is about. */
const writes: Record<RecordEventType, (door: Door) => Promise<number>> = {
  'lead.created': async (door) => {
    const lead = samplePayload(dealership.id, { email: `e${uniqueNumber()}@example.com` });
    if (door === 'REST')
      return ((await ok(await app.request('/api/v1/leads', { method: 'POST', key, json: { lead } }))).lead as { id: number }).id;
    const data = await graph('mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }', {
      lead: graphLead(lead),
    });
    return (data.create_lead as { lead: { id: number } }).lead.id;
  },
  'lead.updated': async (door) => {
    const lead = await makeStoredLead(app.db, dealership.id, { created_at: app.clock.now() });
    if (door === 'REST')
      await ok(await app.request(`/api/v1/leads/${lead.id}`, { method: 'PUT', key, json: { lead: { message: 'later' } } }));
    else await graph('mutation ($id: Int!) { update_lead(id: $id, lead: { message: "later" }) { lead { message } } }', { id: lead.id });
    return lead.id;
  },
  'lead_event.created': async (door) => {
    const lead = await makeStoredLead(app.db, dealership.id, { created_at: app.clock.now() });
    const data = { leadId: lead.id, messageDetail: { contactType: 'sms', description: 'hello' } };
    if (door === 'REST') {
      const path = `/api/v1/lead_events/sms/create?data=${encodeURIComponent(JSON.stringify(data))}`;
      return (await ok(await app.request(path, { method: 'POST', key }))).id as number;
    }
    const answer = await graph('mutation ($data: LeadEventData!) { create_lead_event(service: "sms", data: $data) { id: databaseId } }', {
      data,
    });
    return (answer.create_lead_event as { id: number }).id;
  },
  'car.updated': async (door) => {
    const car = await makeCar(app.db, dealership.id);
    const body = { stocknum: car.stocknum, dealership_id: dealership.id, make: 'Toyota', model: 'Corolla', year: 2021 };
    if (door === 'REST') await ok(await app.request(`/api/cars/${car.id}`, { method: 'PUT', key, json: { car: body } }));
    else
      await graph('mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { skipped_fields } }', { id: car.id, car: body });
    return car.id;
  },
  'car.reserved': async (door) => {
    const car = await makeCar(app.db, dealership.id);
    if (door === 'REST') await ok(await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key }));
    else await graph('mutation ($id: String!) { reserve_car(id: $id, reserved: true) { reserved } }', { id: String(car.id) });
    return car.id;
  },
  'car.released': async (door) => {
    const car = await makeCar(app.db, dealership.id, { reserved: true, reserved_at: app.clock.now() });
    if (door === 'REST') await ok(await app.request(`/api/v1/cars/${car.id}/reserve?reserved=false`, { method: 'PUT', key }));
    else await graph('mutation ($id: String!) { reserve_car(id: $id, reserved: false) { reserved } }', { id: String(car.id) });
    return car.id;
  },
  'phone_call.created': async (door) => {
    const caller = `+6141${String(uniqueNumber()).padStart(7, '0').slice(-7)}`;
    const body = { called_number: '+61293744000', caller_number: caller, call_id: `call-${uniqueNumber()}` };
    if (door === 'REST') {
      return (await ok(await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', { method: 'POST', key, json: body })))
        .id as number;
    }
    const answer = await graph(
      'mutation ($called: String!, $caller: String!, $call_id: String) { phone_call_webhook(called_number: $called, caller_number: $caller, call_id: $call_id) { id: databaseId } }',
      { called: body.called_number, caller: body.caller_number, call_id: body.call_id },
    );
    return (answer.phone_call_webhook as { id: number }).id;
  },
};

const subjectOf = (type: RecordEventType) => type.slice(0, type.lastIndexOf('.'));

describe('every event type, through both doors', () => {
  for (const type of RECORD_EVENT_TYPES) {
    for (const door of ['REST', 'GraphQL'] as const) {
      it(`${type} through ${door}: one stored event, one enqueued delivery, one publication`, async () => {
        const before = published.length;
        const recordId = await writes[type](door);
        const rows = await app.db.recordEvent.findMany({ where: { subject: subjectOf(type), record_id: recordId, type } });
        expect(rows).toHaveLength(1);
        const row = rows[0]!;
        expect(row).toMatchObject({ type, dealership_id: dealership.id, subject: subjectOf(type), record_id: recordId });
        expect(row.event_id).toMatch(/^evt_[0-9a-f]{32}$/);
        expect(published.slice(before)).toEqual([
          { id: row.event_id, type, dealershipId: dealership.id, subject: subjectOf(type), recordId, occurredAt: row.occurred_at },
        ]);
        const deliveries = await app.db.webhookDelivery.findMany({ where: { record_event_id: row.id } });
        expect(deliveries).toMatchObject([
          { subscription_id: subscriptionId, status: 'pending', record_key: `${subjectOf(type)}:${recordId}` },
        ]);
      });
    }
  }
});

describe('what is not an event', () => {
  it('a refused reservation, a release of a free car and a repeated phone call store and publish nothing', async () => {
    const reserved = await makeCar(app.db, dealership.id, { reserved: true, reserved_at: app.clock.now() });
    const free = await makeCar(app.db, dealership.id);
    const eventsBefore = await app.db.recordEvent.count();
    const publishedBefore = published.length;
    expect((await app.request(`/api/v1/cars/${reserved.id}/reserve?reserved=true`, { method: 'PUT', key })).status).toBe(409);
    expect((await app.request(`/api/v1/cars/${free.id}/reserve?reserved=false`, { method: 'PUT', key })).status).toBe(200);
    const call = { called_number: '+61293744000', caller_number: '+61412000999', call_id: `again-${uniqueNumber()}` };
    await ok(await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', { method: 'POST', key, json: call }));
    const repeat = await ok(await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', { method: 'POST', key, json: call }));
    expect(repeat.status).toBe('duplicate');
    expect(await app.db.recordEvent.count()).toBe(eventsBefore + 1);
    expect(published.length).toBe(publishedBefore + 1);
  });

  it('a call to a number of no dealership is recorded without an event', async () => {
    const eventsBefore = await app.db.recordEvent.count();
    const call = { called_number: '+61299990000', caller_number: '+61412000998' };
    await ok(await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', { method: 'POST', key, json: call }));
    expect(await app.db.recordEvent.count()).toBe(eventsBefore);
  });

  it('events of one record are ordered by their row id', async () => {
    const car = await makeCar(app.db, dealership.id);
    await writes['car.updated']('REST');
    await ok(await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key }));
    await ok(await app.request(`/api/v1/cars/${car.id}/reserve?reserved=false`, { method: 'PUT', key }));
    const rows = await app.db.recordEvent.findMany({ where: { subject: 'car', record_id: car.id }, orderBy: { id: 'asc' } });
    expect(rows.map((row) => row.type)).toEqual(['car.reserved', 'car.released']);
  });
});
