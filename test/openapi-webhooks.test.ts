// The OpenAPI document's `webhooks` (OAS 3.1): one entry per event type the service sends (walked
// from the event-type list in code), each with the Standard Webhooks headers and the payload's
// schema written from the fields the delivery reads; and the payloads the service really sends, one
// of each event type, made by real writes and delivered by the worker, match their entry, headers
// and body, with and without `read:personal_data`.
import { Validator } from '@seriousme/openapi-schema-validator';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { RECORD_EVENT_TYPES } from '../src/domain/record-events.ts';
import { createPayloadRenderer } from '../src/gateway/webhook-payloads.ts';
import type { WebhookPost } from '../src/notifications/webhook-sender.ts';
import { deliverDueWebhooks } from '../src/notifications/webhook-worker.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { openApiDocument, validationErrors } from './support/contract.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeCar, makeDealership, makeKey, makeLocation } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';

interface WebhookEntry {
  post: {
    operationId: string;
    parameters: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
    requestBody: { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
    responses: Record<string, unknown>;
  };
}

const webhooks = (): Record<string, WebhookEntry> => (openApiDocument().webhooks ?? {}) as Record<string, WebhookEntry>;
const bodyPointer = (type: string) => `/webhooks/${type}/post/requestBody/content/application~1json/schema`;

describe('the webhooks of the document', () => {
  it('validate as OpenAPI 3.1, with the rest of the document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(openApiDocument()) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(validator.version).toBe('3.1');
  });

  it('are one per event type the service sends, each signed per Standard Webhooks with a JSON body', () => {
    expect(Object.keys(webhooks()).sort()).toEqual([...RECORD_EVENT_TYPES].sort());
    for (const type of RECORD_EVENT_TYPES) {
      const { post } = webhooks()[type] as WebhookEntry;
      expect(
        post.parameters.filter((parameter) => parameter.in === 'header' && parameter.required).map((parameter) => parameter.name),
        type,
      ).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
      expect(post.requestBody.required, type).toBe(true);
      expect(Object.keys(post.requestBody.content), type).toEqual(['application/json']);
      // The body names its own event type, and nothing but it.
      expect(validationErrors(bodyPointer(type), { type: 'not.this', timestamp: new Date().toISOString(), data: {} }), type).not.toBeNull();
    }
  });
});

describe('the payloads the service sends', () => {
  let app: TestApp;
  const sent: WebhookPost[] = [];

  beforeAll(async () => {
    app = await createTestApp({ mode: 'development' });
    const dealership = await makeDealership(app.db);
    const location = await makeLocation(app.db, dealership.id, { tracking_phone: '+61293746000' });
    const car = await makeCar(app.db, dealership.id);
    const writer = (
      await makeKey(app.db, {
        permissions: ['create:lead', 'update:lead', 'create:lead_event', 'update:car', 'reserve:car', 'create:phone_call', 'read:car'],
        dealershipIds: [dealership.id],
      })
    ).key;
    for (const permissions of [
      ['manage:webhook', 'read:lead', 'read:car', 'read:personal_data'],
      ['manage:webhook', 'read:lead', 'read:car'],
    ] as const) {
      const subscriber = (await makeKey(app.db, { permissions: [...permissions], dealershipIds: [dealership.id] })).key;
      const subscribed = await app.request('/api/v1/webhook_subscriptions', {
        method: 'POST',
        key: subscriber,
        json: { subscription: { url: 'https://receiver.example/hooks', events: [...RECORD_EVENT_TYPES] } },
      });
      expect(subscribed.status).toBe(201);
    }
    // One write of each event type.
    const write = async (path: string, method: string, json: unknown, status: number): Promise<Record<string, unknown>> => {
      const response = await app.request(path, { method, key: writer, ...(json === undefined ? {} : { json }) });
      expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(status);
      return (await response.json()) as Record<string, unknown>;
    };
    const created = await write('/api/v1/leads', 'POST', { lead: samplePayload(dealership.id, { category: 'Test Drive Booking' }) }, 201);
    const leadId = (created.lead as { id: number }).id;
    await write(`/api/v1/leads/${leadId}`, 'PUT', { lead: { message: 'Called back.' } }, 200);
    const event = new URLSearchParams({
      'data[leadId]': String(leadId),
      'data[messageDetail][contactType]': 'sms',
      'data[messageDetail][description]': 'Reminder: test drive Saturday',
      'data[messageDetail][sentDate]': '2026-11-21T10:15:00',
    });
    await write(`/api/v1/lead_events/sms/create?${event}`, 'POST', undefined, 201);
    await write(`/api/cars/${car.id}`, 'PUT', { car: carInput(dealership.id, { stocknum: car.stocknum ?? 'WEBHOOK1' }) }, 200);
    await write(`/api/v1/cars/${car.id}/reserve?reserved=true`, 'PUT', undefined, 200);
    await write(`/api/v1/cars/${car.id}/reserve?reserved=false`, 'PUT', undefined, 200);
    await write(
      '/api/v1/webhooks/phone_calls_webhooks/generic',
      'POST',
      { called_number: location.tracking_phone, caller_number: '0412 555 011' },
      202,
    );

    const config = { ...app.config, webhookAllowedAddresses: [] };
    const deps = instanceDeps({ config, db: app.db, now: app.clock.now });
    for (let round = 0; round < 10; round += 1) {
      const report = await deliverDueWebhooks({
        db: app.db,
        config,
        logger: pino({ level: 'silent' }),
        now: app.clock.now,
        render: createPayloadRenderer(deps, getSchema()),
        send: async (post) => {
          sent.push(post);
          return { status: 204, body: '' };
        },
      });
      if (report.delivered + report.retried + report.failed + report.skipped === 0) break;
    }
  }, 120_000);

  it('are one of every event type, for each subscriber', () => {
    const types = sent.map((post) => (JSON.parse(post.body) as { type: string }).type);
    for (const type of RECORD_EVENT_TYPES) expect(types.filter((sentType) => sentType === type).length, type).toBe(2);
  });

  it('match their entry of the document: the body and the signature headers', () => {
    for (const post of sent) {
      const body = JSON.parse(post.body) as { type: string; data: Record<string, unknown> };
      expect(validationErrors(bodyPointer(body.type), body), `${body.type}: ${post.body.slice(0, 400)}`).toBeNull();
      const entry = webhooks()[body.type] as WebhookEntry;
      for (const [index, parameter] of entry.post.parameters.entries()) {
        const value = post.headers[parameter.name];
        expect(value, `${body.type} ${parameter.name}`).toBeDefined();
        expect(
          validationErrors(`/webhooks/${body.type}/post/parameters/${index}/schema`, value),
          `${body.type} ${parameter.name}: ${value}`,
        ).toBeNull();
      }
    }
  });

  it("carry a lead's category as the REST door and the document spell it", () => {
    const lead = sent
      .map((post) => JSON.parse(post.body) as { type: string; data: { category?: string } })
      .find((body) => body.type === 'lead.created');
    expect(lead?.data.category).toBe('Test Drive Booking');
  });
});
