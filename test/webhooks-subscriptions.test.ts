// Webhook subscriptions on both doors (docs/webhooks.md): create (the secret once, encrypted at
// rest), list, rotate, disable and enable, delete, the delivery log and redelivery; manage:webhook;
// a key never sees or manages another dealership's subscriptions; URLs that are refused; every event
// type's read permission, walked over subscribing, the delivery, the delivery log and redelivery.
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, type Permission } from '../src/auth/permissions.ts';
import { open } from '../src/config/secrets.ts';
import { RECORD_EVENT_TYPES, type RecordEventType } from '../src/domain/record-events.ts';
import { readPermissionOfEvent } from '../src/domain/webhooks.ts';
import { deliverDueWebhooks } from '../src/notifications/webhook-worker.ts';
import { createTestApp, testKeyring, type TestApp } from './support/app.ts';
import { makeFailedDelivery, makeWebhookSubscription } from './support/fixtures-events.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let north: { id: number };
let south: { id: number };
let manager: string;
let southManager: string;
let noPermission: string;
let everywhere: string;

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  manager = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead', 'read:car'], dealershipIds: [north.id] })).key;
  southManager = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead', 'read:car'], dealershipIds: [south.id] })).key;
  noPermission = (await makeKey(app.db, { permissions: ['read:lead'], dealershipIds: [north.id] })).key;
  everywhere = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:car'] })).key;
});

const subscription = (overrides: Record<string, unknown> = {}) => ({
  url: 'https://crm.example/hooks',
  events: ['lead.created', 'car.updated'],
  ...overrides,
});

type JsonSchema = { $ref?: string; properties?: Record<string, JsonSchema>; pattern?: string };

/** The pattern the served OpenAPI document gives the body's `subscription.url`. */
async function documentedUrlPattern(): Promise<RegExp> {
  const document = (await (await app.request('/openapi.json')).json()) as {
    paths: Record<string, { post: { requestBody: { content: Record<string, { schema: JsonSchema }> } } }>;
    components: { schemas: Record<string, JsonSchema> };
  };
  const resolve = (schema: JsonSchema | undefined): JsonSchema => {
    if (!schema) throw new Error('no such schema in the document');
    return schema.$ref ? resolve(document.components.schemas[schema.$ref.split('/').pop() ?? '']) : schema;
  };
  const body = resolve(document.paths['/api/v1/webhook_subscriptions']?.post.requestBody.content['application/json']?.schema);
  const url = resolve(resolve(body.properties?.subscription).properties?.url);
  if (!url.pattern) throw new Error('subscription.url has no pattern');
  return new RegExp(url.pattern, 'u');
}

async function create(key: string, body: Record<string, unknown> = subscription()): Promise<Response> {
  return app.request('/api/v1/webhook_subscriptions', { method: 'POST', key, json: { subscription: body } });
}

describe('POST /api/v1/webhook_subscriptions', () => {
  it('creates a subscription for the key’s one dealership, answers the secret once and stores it encrypted', async () => {
    const response = await create(manager);
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(body.subscription).toMatchObject({
      id: expect.any(Number),
      dealership_id: north.id,
      url: 'https://crm.example/hooks',
      events: ['lead.created', 'car.updated'],
      enabled: true,
      disabled_reason: null,
      previous_secret_expires_at: null,
    });
    const row = await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: body.subscription.id } });
    expect(row.secret).not.toContain(body.secret.slice(6));
    expect(open(testKeyring, 'WebhookSubscription.secret', row.secret)).toBe(body.secret);
    const list = await (await app.request('/api/v1/webhook_subscriptions', { key: manager })).json();
    expect(list.map((item: { id: number }) => item.id)).toContain(body.subscription.id);
    expect(JSON.stringify(list)).not.toContain(body.secret);
  });

  it('refuses bad input naming the field', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [subscription({ url: 'http://crm.example/hooks' }), 'subscription.url', 'must be an https URL'],
      [subscription({ url: 'not a url' }), 'subscription.url', 'must be an absolute URL'],
      [subscription({ url: 'https://user:pw@crm.example/' }), 'subscription.url', 'must not carry credentials'],
      [
        subscription({ url: 'https://127.0.0.1/hooks' }),
        'subscription.url',
        'must not point at 127.0.0.1, which is a private, loopback, link-local or reserved address',
      ],
      [
        subscription({ url: 'https://[::ffff:10.0.0.1]/hooks' }),
        'subscription.url',
        'must not point at ::ffff:a00:1, which is a private, loopback, link-local or reserved address',
      ],
      [subscription({ url: 'https://localhost:8443/' }), 'subscription.url', 'must not be a loopback host'],
      [subscription({ events: [] }), 'subscription.events', 'must have at least 1 items'],
      [
        subscription({ events: ['lead.deleted'] }),
        'subscription.events[0]',
        'must be one of: lead.created, lead.updated, lead_event.created, car.updated, car.reserved, car.released, phone_call.created',
      ],
    ];
    for (const [body, field, message] of cases) {
      const response = await create(manager, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect(await response.json(), JSON.stringify(body)).toMatchObject({
        error: 'invalid_input',
        field,
        message: expect.stringContaining(message),
      });
    }
    const unnamed = await create(everywhere, subscription({ events: ['car.updated'] }));
    expect(await unnamed.json()).toMatchObject({ field: 'subscription.dealership_id' });
    const foreign = await create(manager, subscription({ dealership_id: south.id }));
    expect(await foreign.json()).toMatchObject({
      field: 'subscription.dealership_id',
      message: expect.stringContaining('is not a dealership this API key can access'),
    });
  });

  it('documents the URLs every deployment accepts: the OpenAPI pattern of `url` matches these, and each is accepted', async () => {
    const pattern = await documentedUrlPattern();
    const accepted = [
      'https://crm.example/hooks',
      'https://Hooks.Partner-CRM.io:8443/in/webhooks?tenant=42&kind=lead#latest',
      'https://a.b.c.example.org',
      'https://crm-1.example.com.au/webhooks/',
    ];
    for (const url of accepted) {
      expect(pattern.test(url), url).toBe(true);
      expect((await create(manager, subscription({ url }))).status, url).toBe(201);
    }
    // Refused for their form, which the pattern states (localhost is refused for where it points, beyond any form).
    for (const url of [
      'http://crm.example/hooks',
      'not a url',
      'https://user:pw@crm.example/',
      'https://127.0.0.1/hooks',
      'https://[::ffff:10.0.0.1]/hooks',
    ]) {
      expect(pattern.test(url), url).toBe(false);
    }
  });

  it('keeps a dealership at 20 subscriptions, also when creates arrive at once: the rest are 409 and not stored', async () => {
    const full = await makeDealership(app.db);
    const key = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead'], dealershipIds: [full.id] })).key;
    const answers = await Promise.all(Array.from({ length: 24 }, () => create(key, subscription({ events: ['lead.created'] }))));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(20).fill(201), ...Array<number>(4).fill(409)]);
    const refused = answers.find((answer) => answer.status === 409);
    expect(await refused?.json()).toMatchObject({ error: 'too_many_webhook_subscriptions' });
    expect(await app.db.webhookSubscription.count({ where: { dealership_id: full.id } })).toBe(20);
  });

  it('needs manage:webhook (403 without it, 401 without a key)', async () => {
    expect((await create(noPermission)).status).toBe(403);
    expect((await app.request('/api/v1/webhook_subscriptions', { method: 'POST', json: { subscription: subscription() } })).status).toBe(
      401,
    );
    expect((await app.request('/api/v1/webhook_subscriptions', { key: noPermission })).status).toBe(403);
  });
});

describe('managing a subscription', () => {
  it('rotates the secret (the old one signs until the grace period ends), disables, enables and deletes', async () => {
    const made = await (await create(manager)).json();
    const id = made.subscription.id as number;
    const now = app.clock.now();
    const rotated = await app.request(`/api/v1/webhook_subscriptions/${id}/rotate_secret`, { method: 'POST', key: manager });
    expect(rotated.status).toBe(200);
    const rotatedBody = await rotated.json();
    expect(rotatedBody.secret).not.toBe(made.secret);
    expect(rotatedBody.subscription.previous_secret_expires_at).toBe(new Date(now.getTime() + 24 * 3_600_000).toISOString());
    const row = await app.db.webhookSubscription.findUniqueOrThrow({ where: { id } });
    expect(open(testKeyring, 'WebhookSubscription.previous_secret', row.previous_secret ?? '')).toBe(made.secret);
    expect(open(testKeyring, 'WebhookSubscription.secret', row.secret)).toBe(rotatedBody.secret);

    const disabled = await (await app.request(`/api/v1/webhook_subscriptions/${id}/disable`, { method: 'POST', key: manager })).json();
    expect(disabled).toMatchObject({ id, enabled: false, disabled_reason: 'disabled by its owner' });
    const enabled = await (await app.request(`/api/v1/webhook_subscriptions/${id}/enable`, { method: 'POST', key: manager })).json();
    expect(enabled).toMatchObject({ id, enabled: true, disabled_reason: null });

    const graph = await app.graphql<{ webhook_deliveries: unknown[] }>(
      'query ($id: Int!) { webhook_deliveries(id: $id) { databaseId } }',
      { id },
      manager,
    );
    expect(graph.data?.webhook_deliveries).toEqual([]);

    const deleted = await app.request(`/api/v1/webhook_subscriptions/${id}`, { method: 'DELETE', key: manager });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({ id, deleted: true });
    expect(await app.db.webhookSubscription.count({ where: { id } })).toBe(0);
  });

  it("never shows or changes another dealership's subscription: it answers like one that does not exist", async () => {
    const made = await (await create(manager)).json();
    const id = made.subscription.id as number;
    const list = await (await app.request('/api/v1/webhook_subscriptions', { key: southManager })).json();
    expect(list).toEqual([]);
    const notFound = { error: 'webhook_subscription_not_found', message: 'No webhook subscription with that identifier.' };
    for (const [method, path] of [
      ['POST', `/api/v1/webhook_subscriptions/${id}/rotate_secret`],
      ['POST', `/api/v1/webhook_subscriptions/${id}/disable`],
      ['DELETE', `/api/v1/webhook_subscriptions/${id}`],
      ['GET', `/api/v1/webhook_subscriptions/${id}/deliveries`],
      ['GET', `/api/v1/webhook_subscriptions/${id + 100_000}/deliveries`],
    ] as const) {
      const response = await app.request(path, { method, key: southManager });
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toEqual(notFound);
    }
    const graph = await app.graphql('mutation ($id: Int!) { disable_webhook_subscription(id: $id) { enabled } }', { id }, southManager);
    expect(graph.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await app.db.webhookSubscription.findUniqueOrThrow({ where: { id } })).enabled).toBe(true);
  });
});

describe('each event type’s read permission', () => {
  it('is the one docs/webhooks.md names for its record: read:lead for leads, their events and calls, read:car for cars', () => {
    expect(Object.fromEntries(RECORD_EVENT_TYPES.map((type) => [type, readPermissionOfEvent(type)]))).toEqual({
      'lead.created': 'read:lead',
      'lead.updated': 'read:lead',
      'lead_event.created': 'read:lead',
      'phone_call.created': 'read:lead',
      'car.updated': 'read:car',
      'car.reserved': 'read:car',
      'car.released': 'read:car',
    });
  });

  /** A dealership of its own, a subscription to `type` made by `apiKeyId`, and one failed delivery of that type. */
  async function hookWithDelivery(type: RecordEventType, apiKeyId: number) {
    const at = app.clock.now();
    const hook = await makeWebhookSubscription(app.db, { apiKeyId, events: [type], at });
    const delivery = await makeFailedDelivery(app.db, hook, type, at);
    return { dealershipId: hook.dealership_id, hookId: hook.id, deliveryId: delivery.id };
  }

  for (const type of RECORD_EVENT_TYPES) {
    const permission = readPermissionOfEvent(type);
    for (const holds of [true, false]) {
      it(`${type}, a key ${holds ? 'with' : 'without'} ${permission}: subscribing, the delivery, the delivery log and redelivery`, async () => {
        const permissions: Permission[] = allPermissions.filter((held) => holds || held !== permission);
        const own = await makeDealership(app.db);
        const caller = await makeKey(app.db, { permissions, dealershipIds: [own.id] });
        const { hookId, deliveryId, dealershipId } = await hookWithDelivery(type, caller.id);
        await app.db.apiKeyDealership.create({ data: { api_key_id: caller.id, dealership_id: dealershipId } });

        // Subscribing: refused naming the entry and the permission it needs.
        const created = await create(caller.key, subscription({ events: [type], dealership_id: own.id }));
        if (holds) expect(created.status).toBe(201);
        else {
          expect(created.status).toBe(422);
          expect(await created.json()).toMatchObject({
            error: 'invalid_input',
            field: 'subscription.events[0]',
            message: `subscription.events[0]: ${type} needs ${permission}, which this API key does not hold`,
          });
        }

        // The delivery log: a delivery names the record and when it changed, so it is listed only to a key that reads it.
        const log = await app.request(`/api/v1/webhook_subscriptions/${hookId}/deliveries`, { key: caller.key });
        expect(log.status).toBe(200);
        const listed = ((await log.json()) as { id: number }[]).map((delivery) => delivery.id);
        expect(listed).toEqual(holds ? [deliveryId] : []);
        const graphLog = await app.graphql<{ webhook_deliveries: { databaseId: number }[] }>(
          'query ($id: Int!) { webhook_deliveries(id: $id) { databaseId record_id } }',
          { id: hookId },
          caller.key,
        );
        expect(graphLog.data?.webhook_deliveries.map((delivery) => delivery.databaseId)).toEqual(holds ? [deliveryId] : []);

        // Redelivery: not found without it, as the log does not list it; nothing changes.
        const redelivered = await app.request(`/api/v1/webhook_subscriptions/${hookId}/deliveries/${deliveryId}/redeliver`, {
          method: 'POST',
          key: caller.key,
        });
        expect(redelivered.status).toBe(holds ? 200 : 404);
        if (!holds) expect((await redelivered.json()).error).toBe('webhook_delivery_not_found');
        const row = await app.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
        expect(row.status).toBe(holds ? 'pending' : 'failed');

        // The delivery: sent as the subscribing key, which must read the record; skipped otherwise, never sent.
        if (!holds) {
          await app.db.webhookDelivery.update({ where: { id: deliveryId }, data: { status: 'pending', due_at: app.clock.now() } });
        }
        const posted: string[] = [];
        await deliverDueWebhooks({
          db: app.db,
          config: app.config,
          logger: pino({ level: 'silent' }),
          now: () => app.clock.now(),
          render: async () => ({ id: 1 }),
          send: async (post) => {
            posted.push(post.body);
            return { status: 204, body: '' };
          },
        });
        const after = await app.db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
        expect(after.status).toBe(holds ? 'delivered' : 'skipped');
        expect(posted.some((body) => body.includes(`"type":"${type}"`))).toBe(holds);
      });
    }
  }
});
