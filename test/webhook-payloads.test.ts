// A webhook's `data` is the REST door's body of the same record: for every event type, the write is
// made through the REST door, the delivery is rendered by the worker as it sends it, and its `data`
// is compared with the record's REST body (the write's own answer: no REST path reads these records
// back by id), field by field and value text by value text (a lead's category is "Test Drive
// Booking" on both, never the graph's TEST_DRIVE_BOOKING).
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECORD_EVENT_TYPES, type RecordEventType } from '../src/domain/record-events.ts';
import { createPayloadRenderer } from '../src/gateway/webhook-payloads.ts';
import { webhookPayloadShape } from '../src/rest/webhook-payload-shape.ts';
import type { WebhookPost } from '../src/notifications/webhook-sender.ts';
import { deliverDueWebhooks } from '../src/notifications/webhook-worker.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeLead } from './support/fixtures-events.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { makeCar, makeDealership, makeKey, makeLocation, uniqueNumber } from './support/fixtures.ts';

let app: TestApp;
let dealership: { id: number };
let writer: string;
let trackingNumber: string;
const sent: WebhookPost[] = [];

beforeAll(async () => {
  app = await createTestApp();
  dealership = await makeDealership(app.db);
  trackingNumber = `+612${String(10_000_000 + uniqueNumber()).slice(-8)}`;
  await makeLocation(app.db, dealership.id, { tracking_phone: trackingNumber });
  const permissions = [
    'create:lead',
    'update:lead',
    'update:car',
    'reserve:car',
    'create:lead_event',
    'create:phone_call',
    'manage:webhook',
    'read:lead',
    'read:car',
    'read:personal_data',
  ] as const;
  writer = (await makeKey(app.db, { permissions, dealershipIds: [dealership.id] })).key;
  const subscribed = await app.request('/api/v1/webhook_subscriptions', {
    method: 'POST',
    key: writer,
    json: { subscription: { url: 'https://hooks.example/payloads', events: [...RECORD_EVENT_TYPES] } },
  });
  expect(subscribed.status).toBe(201);
});

/** One round of the worker, as a service runs it, keeping what it would POST. */
async function deliveredData(type: RecordEventType): Promise<Record<string, unknown>> {
  sent.length = 0;
  const deps = instanceDeps({ config: app.config, db: app.db, now: () => app.clock.now() });
  await deliverDueWebhooks({
    db: app.db,
    config: app.config,
    logger: pino({ level: 'silent' }),
    now: () => app.clock.now(),
    render: createPayloadRenderer(deps, getSchema()),
    send: async (post) => {
      sent.push(post);
      return { status: 204, body: '' };
    },
  });
  const payloads = sent.map((post) => JSON.parse(post.body) as { type: string; data: Record<string, unknown> });
  const payload = payloads.find((item) => item.type === type);
  if (!payload) throw new Error(`no ${type} delivery among ${payloads.map((item) => item.type).join(', ')}`);
  return payload.data;
}

async function restBody(path: string, init: { method: string; json?: unknown }, status: number): Promise<Record<string, unknown>> {
  const response = await app.request(path, { ...init, key: writer });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(status);
  return body;
}

/** Each event type's write through the REST door, and the REST body of the record it changed. */
const writes: Record<RecordEventType, () => Promise<Record<string, unknown>>> = {
  'lead.created': async () => {
    const lead = samplePayload(dealership.id, { email: `payload.${uniqueNumber()}@example.com`, category: 'Test Drive Booking' });
    return (await restBody('/api/v1/leads', { method: 'POST', json: { lead } }, 201)).lead as Record<string, unknown>;
  },
  'lead.updated': async () => {
    const lead = samplePayload(dealership.id, { email: `payload.${uniqueNumber()}@example.com`, category: 'Test Drive Booking' });
    const { id } = (await restBody('/api/v1/leads', { method: 'POST', json: { lead } }, 201)).lead as { id: number };
    await deliveredData('lead.created');
    return (await restBody(`/api/v1/leads/${id}`, { method: 'PUT', json: { lead: { message: 'Tuesday suits' } } }, 200)).lead as Record<
      string,
      unknown
    >;
  },
  'lead_event.created': async () => {
    const lead = await makeLead(app.db, dealership.id);
    const data = { leadId: lead.id, messageDetail: { sentBy: 'Ana', description: 'Test drive booked' } };
    return restBody(`/api/v1/lead_events/sms/create?data=${encodeURIComponent(JSON.stringify(data))}`, { method: 'POST' }, 201);
  },
  'car.updated': async () => {
    const car = await makeCar(app.db, dealership.id);
    const input = carInput(dealership.id, { stocknum: `P${uniqueNumber()}` });
    return (await restBody(`/api/cars/${car.id}`, { method: 'PUT', json: { car: input } }, 200)).car as Record<string, unknown>;
  },
  'car.reserved': async () => {
    const car = await makeCar(app.db, dealership.id);
    return restBody(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT' }, 200);
  },
  'car.released': async () => {
    const car = await makeCar(app.db, dealership.id, { reserved: true, reserved_at: app.clock.now() });
    return restBody(`/api/v1/cars/${car.id}/reserve?reserved=false`, { method: 'PUT' }, 200);
  },
  'phone_call.created': async () => {
    const caller = `+61412${String(10_000_000 + uniqueNumber()).slice(-6)}`;
    return restBody(
      '/api/v1/webhooks/phone_calls_webhooks/generic',
      { method: 'POST', json: { called_number: trackingNumber, caller_number: caller } },
      202,
    );
  },
};

/**
 * What the REST body of a record holds beyond the payload, by event type, with the reason: a payload
 * is flat (the record's plain values, docs/webhooks.md "Payloads"), so a REST body's nested parts are
 * not in it, and the reservation and call answers are receipts of the write rather than the record.
 */
const ONLY_IN_THE_REST_BODY: Readonly<Record<RecordEventType, readonly string[]>> = {
  'lead.created': ['address', 'files', 'payment'],
  'lead.updated': ['address', 'files', 'payment'],
  'lead_event.created': [],
  'car.updated': ['custom_attributes', 'images'],
  'car.reserved': [],
  'car.released': [],
  'phone_call.created': ['status'],
};

describe('every event type’s data', () => {
  for (const type of RECORD_EVENT_TYPES) {
    it(`${type}: is the REST door’s body of the record, field by field and value text by value text`, async () => {
      const rest = await writes[type]();
      const data = await deliveredData(type);
      // The payload's fields are the shape the OpenAPI document describes.
      expect(Object.keys(data).sort()).toEqual(
        webhookPayloadShape(getSchema(), type)
          .fields.map((field) => field.name)
          .sort(),
      );
      const shared = Object.keys(rest).filter((name) => name in data);
      expect(shared).toContain('id');
      for (const name of shared) expect(data[name], `${type}: ${name}`).toEqual(rest[name]);
      expect(
        Object.keys(rest)
          .filter((name) => !(name in data))
          .sort(),
      ).toEqual([...ONLY_IN_THE_REST_BODY[type]].sort());
      if (type.startsWith('lead.')) expect(data.category).toBe('Test Drive Booking');
    });
  }
});
