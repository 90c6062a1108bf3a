// Idempotency-Key on every write, on both doors: each REST write route of the route table and each
// GraphQL mutation of the schema is sent twice with one Idempotency-Key, the clock moved between the
// two, and the second answer must be the first (status and body) while the database holds exactly
// what it held after the first (no duplicate row, no row written again). The same key with another
// request is 422 idempotency_key_reused and writes nothing. The one write that takes no key (the
// keyless sign-on handoff, whose token is single-use) is walked too: its second call changes nothing.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDatamodel } from '../src/generated/pothos-types.ts';
import { restRoutes, routeTakesIdempotencyKey } from '../src/rest/routes.ts';
import { mutationsKeyedInTheirTransaction, mutationsNotKeyed } from '../src/schema/idempotent-writes.ts';
import { getSchema } from '../src/schema/index.ts';
import { open } from '../src/config/secrets.ts';
import { requestHash } from '../src/domain/leads/idempotency.ts';
import { createTestApp, testKeyring, type TestApp } from './support/app.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeFailedDelivery, makeLead, makePartnerToken, makeWebhookSubscription } from './support/fixtures-events.ts';
import { graphLead, makeStoredLead, samplePayload } from './support/fixtures-leads.ts';
import { makeCar, makeDealership, makeKey, makeUser, makeWritersWorld, uniqueNumber } from './support/fixtures.ts';

let app: TestApp;
let dealership: { id: number };
let user: { id: number; email: string };
let key: string;
let apiKeyId: number;
let trackingNumber: string;

beforeAll(async () => {
  app = await createTestApp();
  // Subscribing to an event type, and redelivering one, needs its record's read permission.
  ({ dealership, user, trackingNumber, key, apiKeyId } = await makeWritersWorld(app.db, ['read:lead', 'read:car']));
});

const makeHook = () => makeWebhookSubscription(app.db, { apiKeyId, events: ['car.updated'], at: app.clock.now() });

/** One write, ready to send on either door. */
interface WriteCall {
  method: string;
  /** The REST path with its query. */
  path: string;
  json?: Record<string, unknown>;
  graphql: { query: string; variables: Record<string, unknown> };
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A fresh write of each root field (a new record each time, so each call can succeed once). */
const writes: Record<string, () => Promise<WriteCall>> = {
  'Mutation.create_lead': async () => {
    const lead = samplePayload(dealership.id, { email: `retry.${uniqueNumber()}@example.com` });
    return {
      method: 'POST',
      path: '/api/v1/leads',
      json: { lead },
      graphql: {
        query: 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { databaseId updated_at } } }',
        variables: { lead: graphLead(lead) },
      },
    };
  },
  'Mutation.update_lead': async () => {
    const lead = await makeStoredLead(app.db, dealership.id, { created_at: app.clock.now() });
    const message = `Changed ${uniqueNumber()}`;
    return {
      method: 'PUT',
      path: `/api/v1/leads/${lead.id}`,
      json: { lead: { message } },
      graphql: {
        query: 'mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { lead { databaseId updated_at } } }',
        variables: { id: lead.id, lead: { message } },
      },
    };
  },
  'Mutation.update_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    const input = carInput(dealership.id, { stocknum: `R${uniqueNumber()}`, build_date: '2024-03-01' });
    return {
      method: 'PUT',
      path: `/api/cars/${car.id}`,
      json: { car: input },
      graphql: {
        query: 'mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { car { databaseId updated_at build_date } } }',
        variables: { id: car.id, car: input },
      },
    };
  },
  'Mutation.reserve_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    return {
      method: 'PUT',
      path: `/api/v1/cars/${car.id}/reserve?reserved=true`,
      graphql: {
        query: 'mutation ($id: String!) { reserve_car(id: $id, reserved: true) { databaseId reserved reserved_at } }',
        variables: { id: String(car.id) },
      },
    };
  },
  'Mutation.create_partner_token': async () => {
    const { email } = await makeUser(app.db, [dealership.id], { email: `retry.partner.${uniqueNumber()}@example.com` });
    return {
      method: 'POST',
      path: '/api/v1/partner/tokens',
      json: { email },
      graphql: {
        query: 'mutation ($email: String) { create_partner_token(email: $email) { redirect_url expires_at } }',
        variables: { email },
      },
    };
  },
  'Mutation.create_lead_event': async () => {
    const lead = await makeLead(app.db, dealership.id);
    const data = { leadId: lead.id, messageDetail: { sentBy: 'Ana', description: `Booked ${uniqueNumber()}` } };
    return {
      method: 'POST',
      path: `/api/v1/lead_events/sms/create?data=${encodeURIComponent(JSON.stringify(data))}`,
      graphql: {
        query: 'mutation ($data: LeadEventData!) { create_lead_event(service: "sms", data: $data) { databaseId created_at } }',
        variables: { data },
      },
    };
  },
  'Mutation.phone_call_webhook': async () => {
    const caller = `+61412${String(10_000_000 + uniqueNumber()).slice(-6)}`;
    return {
      method: 'POST',
      path: '/api/v1/webhooks/phone_calls_webhooks/generic',
      json: { called_number: trackingNumber, caller_number: caller },
      graphql: {
        query:
          'mutation ($called: String!, $caller: String!) { phone_call_webhook(called_number: $called, caller_number: $caller) { databaseId status } }',
        variables: { called: trackingNumber, caller },
      },
    };
  },
  'Mutation.create_webhook_subscription': async () => {
    const own = await makeDealership(app.db);
    const subscription = { url: `https://hooks.example/${uniqueNumber()}`, events: ['car.updated', 'lead.created'], dealership_id: own.id };
    return {
      method: 'POST',
      path: '/api/v1/webhook_subscriptions',
      json: { subscription },
      graphql: {
        query:
          'mutation ($s: WebhookSubscriptionInput!) { create_webhook_subscription(subscription: $s) { secret subscription { databaseId created_at } } }',
        variables: { s: subscription },
      },
    };
  },
  'Mutation.rotate_webhook_secret': async () => {
    const hook = await makeHook();
    return {
      method: 'POST',
      path: `/api/v1/webhook_subscriptions/${hook.id}/rotate_secret`,
      graphql: {
        query: 'mutation ($id: Int!) { rotate_webhook_secret(id: $id) { secret subscription { previous_secret_expires_at } } }',
        variables: { id: hook.id },
      },
    };
  },
  'Mutation.disable_webhook_subscription': async () => {
    const hook = await makeHook();
    return {
      method: 'POST',
      path: `/api/v1/webhook_subscriptions/${hook.id}/disable`,
      graphql: {
        query: 'mutation ($id: Int!) { disable_webhook_subscription(id: $id) { enabled disabled_at } }',
        variables: { id: hook.id },
      },
    };
  },
  'Mutation.enable_webhook_subscription': async () => {
    const hook = await makeHook();
    await app.db.webhookSubscription.update({
      where: { id: hook.id },
      data: { enabled: false, disabled_reason: 'paused', disabled_at: app.clock.now() },
    });
    return {
      method: 'POST',
      path: `/api/v1/webhook_subscriptions/${hook.id}/enable`,
      graphql: {
        query: 'mutation ($id: Int!) { enable_webhook_subscription(id: $id) { enabled updated_at } }',
        variables: { id: hook.id },
      },
    };
  },
  'Mutation.delete_webhook_subscription': async () => {
    const hook = await makeHook();
    return {
      method: 'DELETE',
      path: `/api/v1/webhook_subscriptions/${hook.id}`,
      graphql: {
        query: 'mutation ($id: Int!) { delete_webhook_subscription(id: $id) { databaseId deleted } }',
        variables: { id: hook.id },
      },
    };
  },
  'Mutation.redeliver_webhook': async () => {
    const hook = await makeHook();
    const delivery = await makeFailedDelivery(app.db, hook, 'car.updated', app.clock.now());
    return {
      method: 'POST',
      path: `/api/v1/webhook_subscriptions/${hook.id}/deliveries/${delivery.id}/redeliver`,
      graphql: {
        query: 'mutation ($id: Int!, $delivery: Int!) { redeliver_webhook(id: $id, delivery_id: $delivery) { status next_attempt_at } }',
        variables: { id: hook.id, delivery: delivery.id },
      },
    };
  },
  'Mutation.redeem_partner_token': async () => {
    const token = createHash('sha256').update(`retry token ${uniqueNumber()}`).digest('base64url');
    await makePartnerToken(app.db, user.id, token, { expires_at: new Date(app.clock.now().getTime() + 10 * 60_000) });
    return {
      method: 'GET',
      path: `/api/v1/partner/sign_on?token=${token}`,
      graphql: { query: 'mutation ($token: String) { redeem_partner_token(token: $token) { location } }', variables: { token } },
    };
  },
};

/**
 * What a request changes whatever it does: the key-call log counts every call, and a key records when
 * it was last used. Everything else of the data model is compared whole.
 */
const LOGGED_PER_REQUEST = new Set(['ApiKeyCall']);
const USED_PER_REQUEST: Readonly<Record<string, readonly string[]>> = { ApiKey: ['last_used_at', 'updated_at'] };

/** Every row of every table of the data model (but the request log), as JSON. */
async function everyRow(): Promise<Record<string, unknown[]>> {
  const rows: Record<string, unknown[]> = {};
  const client = app.db as unknown as Record<string, { findMany(args: object): Promise<unknown[]> }>;
  for (const model of Object.keys(getDatamodel().datamodel.models)) {
    if (LOGGED_PER_REQUEST.has(model)) continue;
    const delegate = client[model.charAt(0).toLowerCase() + model.slice(1)];
    if (!delegate) throw new Error(`no client for ${model}`);
    const found = JSON.parse(JSON.stringify(await delegate.findMany({}))) as Record<string, unknown>[];
    const used = USED_PER_REQUEST[model] ?? [];
    rows[model] = found.map((row) => Object.fromEntries(Object.entries(row).filter(([column]) => !used.includes(column))));
  }
  return rows;
}

type Door = 'REST' | 'GraphQL';

async function send(
  door: Door,
  call: WriteCall,
  idempotencyKey: string | undefined,
  withKey = true,
): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
  const auth = withKey ? { key } : {};
  const response =
    door === 'REST'
      ? await app.request(call.path, { method: call.method, ...auth, headers, ...(call.json ? { json: call.json } : {}) })
      : await app.request('/graphql', { method: 'POST', ...auth, headers, json: call.graphql });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

const mutations = Object.keys(getSchema().getMutationType()?.getFields() ?? {});
const restWrites = restRoutes.filter((route) => route.field.startsWith('Mutation.'));

describe('the walk', () => {
  it('has a write for every mutation, and every REST write route answers one', () => {
    expect(Object.keys(writes).sort()).toEqual(mutations.map((name) => `Mutation.${name}`).sort());
    for (const route of restWrites) expect(writes[route.field], route.path).toBeDefined();
  });

  it('documents the header on every REST write route but the keyless one, and on no read', async () => {
    const document = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    for (const route of restRoutes) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      const documented = (operation?.parameters ?? []).some(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
      const expected = route.field.startsWith('Mutation.') && !(route.field.slice('Mutation.'.length) in mutationsNotKeyed);
      expect(documented, `${route.method} ${route.path}`).toBe(expected);
      expect(routeTakesIdempotencyKey(route)).toBe(expected);
    }
  });
});

for (const door of ['REST', 'GraphQL'] as const) {
  const names = door === 'REST' ? restWrites.map((route) => route.field) : mutations.map((name) => `Mutation.${name}`);
  describe(`${door}: the same request twice with one Idempotency-Key`, () => {
    for (const field of names) {
      const name = field.slice('Mutation.'.length);
      if (name in mutationsNotKeyed) continue;
      it(`${field}: answers the first answer again and writes nothing more`, async () => {
        const call = await writes[field]!();
        const idempotencyKey = `retry-${door}-${name}-${uniqueNumber()}`;
        const first = await send(door, call, idempotencyKey);
        expect(first.status, JSON.stringify(first.body)).toBeLessThan(300);
        if (door === 'GraphQL') expect((first.body as { errors?: unknown }).errors, JSON.stringify(first.body)).toBeUndefined();
        const afterFirst = await everyRow();
        app.clock.advance(60_000);
        const retry = await send(door, call, idempotencyKey);
        expect(retry).toEqual(first);
        expect(await everyRow()).toEqual(afterFirst);
      });

      it(`${field}: the same key with another request is 422 idempotency_key_reused and writes nothing`, async () => {
        const idempotencyKey = `reuse-${door}-${name}-${uniqueNumber()}`;
        const first = await send(door, await writes[field]!(), idempotencyKey);
        expect(first.status).toBeLessThan(300);
        const other = await writes[field]!();
        const before = await everyRow();
        const reused = await send(door, other, idempotencyKey);
        const error =
          door === 'REST'
            ? (reused.body as { error?: string }).error
            : (reused.body as { errors?: { extensions: { error: string } }[] }).errors?.[0]?.extensions.error;
        expect(error, JSON.stringify(reused.body)).toBe('idempotency_key_reused');
        if (door === 'REST') expect(reused.status).toBe(422);
        expect(await everyRow()).toEqual(before);
      });
    }
  });
}

describe('the writes that take no key', () => {
  it('are listed with their reason, and name mutations of the schema', () => {
    for (const [name, reason] of Object.entries({ ...mutationsNotKeyed, ...mutationsKeyedInTheirTransaction })) {
      expect(mutations).toContain(name);
      expect(reason.length).toBeGreaterThan(20);
    }
  });

  it('the sign-on handoff: a second call with the same key and token changes nothing and answers 410 token_used', async () => {
    const call = await writes['Mutation.redeem_partner_token']!();
    const first = await send('REST', call, 'sign-on-once', false);
    expect(first.status).toBe(302);
    const afterFirst = await everyRow();
    const token = new URL(call.path, 'http://localhost').searchParams.get('token') ?? '';
    expect(await app.db.partnerToken.count({ where: { token_hash: sha256(token), used_at: { not: null } } })).toBe(1);
    app.clock.advance(60_000);
    const second = await send('REST', call, 'sign-on-once', false);
    expect(second.status).toBe(410);
    expect((second.body as { error: string }).error).toBe('token_used');
    expect(await everyRow()).toEqual(afterFirst);
  });
});

describe('a webhook signing secret under an Idempotency-Key', () => {
  it('is answered again to the retry, and stored only encrypted', async () => {
    const call = await writes['Mutation.create_webhook_subscription']!();
    const first = await send('REST', call, 'hook-secret-once');
    const { secret } = first.body as { secret: string };
    expect(secret).toMatch(/^whsec_/);
    expect((await send('REST', call, 'hook-secret-once')).body).toEqual(first.body);
    const record = await app.db.idempotencyRecord.findUniqueOrThrow({
      where: { api_key_id_key: { api_key_id: apiKeyId, key: 'hook-secret-once' } },
    });
    expect(record.response_body).not.toContain(secret.slice('whsec_'.length));
    expect(record.response_body).toMatch(/^v1\./);
    expect(open(testKeyring, 'IdempotencyRecord.response_body', record.response_body)).toContain(secret);
    // Another API key never gets it: its key names another record.
    const other = await makeKey(app.db, { permissions: ['manage:webhook', 'read:car', 'read:lead'] });
    const foreign = await app.request(call.path, {
      method: 'POST',
      key: other.key,
      headers: { 'idempotency-key': 'hook-secret-once' },
      json: call.json,
    });
    expect(foreign.status).toBe(201);
    expect(((await foreign.json()) as { secret: string }).secret).not.toBe(secret);
  });
});

describe('concurrent duplicates', () => {
  it('make one subscription, and both are answered the same', async () => {
    const call = await writes['Mutation.create_webhook_subscription']!();
    const before = await app.db.webhookSubscription.count();
    const answers = await Promise.all([
      send('REST', call, 'hook-at-once'),
      send('REST', call, 'hook-at-once'),
      send('GraphQL', call, 'hook-at-once-graph'),
    ]);
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]!.status).toBe(201);
    expect(await app.db.webhookSubscription.count()).toBe(before + 2);
  });
});

describe('a key whose first request has not answered', () => {
  it('is 409 idempotency_key_in_progress to a retry after its wait, and taken over once the claim is abandoned', async () => {
    const hook = await makeHook();
    const claim = { api_key_id: apiKeyId, key: 'cut-off', request_hash: requestHash('rotate_webhook_secret', { id: hook.id }) };
    // A claim as a request leaves it that was cut off while its write ran.
    const pending = await app.db.idempotencyRecord.create({
      data: { ...claim, response_status: 0, response_body: '', created_at: app.clock.now() },
    });
    const path = `/api/v1/webhook_subscriptions/${hook.id}/rotate_secret`;
    const waited = await app.request(path, { method: 'POST', key, headers: { 'idempotency-key': 'cut-off' } });
    expect(waited.status).toBe(409);
    expect((await waited.json()).error).toBe('idempotency_key_in_progress');
    expect((await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: hook.id } })).previous_secret).toBeNull();

    app.clock.advance(3 * 60_000);
    const taken = await app.request(path, { method: 'POST', key, headers: { 'idempotency-key': 'cut-off' } });
    expect(taken.status).toBe(200);
    expect((await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: hook.id } })).previous_secret).not.toBeNull();
    const record = await app.db.idempotencyRecord.findUniqueOrThrow({
      where: { api_key_id_key: { api_key_id: apiKeyId, key: 'cut-off' } },
    });
    expect(record.id).not.toBe(pending.id);
    expect(record.response_status).toBe(200);
  }, 180_000);

  it('is freed when the write fails, so the same key can be sent again', async () => {
    const path = '/api/v1/webhook_subscriptions/2000000000/rotate_secret';
    const failed = await app.request(path, { method: 'POST', key, headers: { 'idempotency-key': 'failed-once' } });
    expect(failed.status).toBe(404);
    expect(await app.db.idempotencyRecord.count({ where: { api_key_id: apiKeyId, key: 'failed-once' } })).toBe(0);
  });
});

describe('one key, one write', () => {
  it('refuses a GraphQL document of more than one mutation under one key, naming the header, and writes nothing', async () => {
    const first = await makeHook();
    const second = await makeHook();
    const before = await everyRow();
    const response = await app.request('/graphql', {
      method: 'POST',
      key,
      headers: { 'idempotency-key': 'two-writes' },
      json: {
        query:
          'mutation ($a: Int!, $b: Int!) { a: disable_webhook_subscription(id: $a) { enabled } b: disable_webhook_subscription(id: $b) { enabled } }',
        variables: { a: first.id, b: second.id },
      },
    });
    const body = (await response.json()) as { errors?: { message: string; extensions: { error: string; field?: string } }[] };
    // Mutations run in turn: the first one's refusal ends the document (its field is non-null).
    expect(body.errors?.length).toBeGreaterThan(0);
    for (const error of body.errors ?? []) expect(error.extensions).toMatchObject({ error: 'invalid_input', field: 'Idempotency-Key' });
    expect(body.errors?.[0]?.message).toContain('covers one write');
    expect(await everyRow()).toEqual(before);
  });
});
