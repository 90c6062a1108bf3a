// The response cache can only ever answer a read (src/gateway/response-cache.ts, `isCacheableRead`): identical
// mutations sent at once, from one key, through either door and with the cache in memory or in Redis,
// each get their own answer: distinct tokens, leads, events and calls, one winner per reservation and
// per single-use token. Every Mutation field of the schema is walked: a new mutation fails the first
// test until it is given a case here.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSchema } from '../src/schema/index.ts';
import { inMemoryReadCache, isCacheableRead, redisReadCache, type ReadCacheOptions } from '../src/gateway/response-cache.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { parse } from 'graphql';
import pino from 'pino';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeCar, makeDealership, makeWritersWorld, uniqueNumber } from './support/fixtures.ts';
import { makeLead, makePartnerToken } from './support/fixtures-events.ts';
import { graphLead, makeStoredLead, samplePayload } from './support/fixtures-leads.ts';

/** How many identical requests are sent at once. */
const AT_ONCE = 8;
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let app: TestApp;
let dealership: { id: number };
let user: { id: number; email: string };
let key: string;
let trackingNumber: string;
let redis: Redis;

beforeAll(async () => {
  app = await createTestApp();
  // Subscribing to an event type, and redelivering one, needs its record's read permission.
  ({ dealership, user, trackingNumber, key } = await makeWritersWorld(app.db, ['read:car', 'read:lead']));
  redis = new Redis(redisUrl, { keyPrefix: `test:concurrent:${uniqueNumber()}:`, lazyConnect: true });
  await redis.connect();
});

afterAll(async () => {
  await redis.quit();
});

type Door = 'REST' | 'GraphQL';

/** One answer, as the checks read it: its status and the record it names (null when refused). */
interface Answer {
  status: number;
  /** What makes this answer its own: a lead's or event's id, a token, a call's id; or the state it reports. */
  identity: string | null;
}

interface Case {
  /** Sends one request of the case on a door. */
  send(yoga: Yoga, door: Door): Promise<Answer>;
  /** What the answers and the database must show once every request is answered. */
  check(answers: Answer[]): Promise<void>;
}

function rest(yoga: Yoga, path: string, init: { method: string; json?: unknown; key?: string | null }): Promise<Response> {
  const headers: Record<string, string> = {};
  if (init.key !== null) headers.authorization = `Bearer ${init.key ?? key}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  return Promise.resolve(
    yoga.fetch(`http://gateway.test${path}`, {
      method: init.method,
      headers,
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
    }),
  );
}

async function graph(
  yoga: Yoga,
  query: string,
  variables: Record<string, unknown>,
  withKey = true,
): Promise<{ status: number; data?: Record<string, unknown> | null; errors?: unknown[] }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (withKey) headers.authorization = `Bearer ${key}`;
  const response = await yoga.fetch('http://gateway.test/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return { status: response.status, ...((await response.json()) as object) };
}

const field = <T>(data: Record<string, unknown> | null | undefined, name: string): T | null => (data?.[name] as T | undefined) ?? null;
const distinct = (answers: Answer[]): number => new Set(answers.map((answer) => answer.identity)).size;
const succeeded = (answers: Answer[]): Answer[] => answers.filter((answer) => answer.status < 300 || answer.status === 302);

/** A subscription to car.reserved, of a dealership of its own, made through the REST door. */
async function makeWebhookSubscription(): Promise<{ id: number; dealershipId: number }> {
  const { id: dealershipId } = await makeDealership(app.db);
  const response = await rest(app.yoga, '/api/v1/webhook_subscriptions', {
    method: 'POST',
    json: { subscription: { url: 'https://crm.example/hooks', events: ['car.reserved'], dealership_id: dealershipId } },
  });
  expect(response.status).toBe(201);
  return { id: ((await response.json()) as { subscription: { id: number } }).subscription.id, dealershipId };
}

/** Disabling (or enabling) at once: each request answers the subscription in the state it asked for. */
async function webhookSwitchCase(enabled: boolean): Promise<Case> {
  const { id } = await makeWebhookSubscription();
  if (enabled) await app.db.webhookSubscription.update({ where: { id }, data: { enabled: false, disabled_reason: 'test' } });
  const verb = enabled ? 'enable' : 'disable';
  return {
    async send(yoga, door) {
      if (door === 'REST') {
        const response = await rest(yoga, `/api/v1/webhook_subscriptions/${id}/${verb}`, { method: 'POST' });
        return { status: response.status, identity: String(((await response.json()) as { enabled?: boolean }).enabled ?? null) };
      }
      const result = await graph(yoga, `mutation ($id: Int!) { ${verb}_webhook_subscription(id: $id) { enabled } }`, { id });
      return {
        status: result.status,
        identity: String(field<{ enabled: boolean }>(result.data, `${verb}_webhook_subscription`)?.enabled ?? null),
      };
    },
    async check(answers) {
      expect(succeeded(answers)).toHaveLength(AT_ONCE);
      expect(answers.map((answer) => answer.identity)).toEqual(Array(AT_ONCE).fill(String(enabled)));
      expect((await app.db.webhookSubscription.findUniqueOrThrow({ where: { id } })).enabled).toBe(enabled);
    },
  };
}

/** A fresh case of each mutation: the AT_ONCE requests of one round are identical. */
const cases: Record<string, () => Promise<Case>> = {
  'Mutation.create_lead': async () => {
    const email = `same.${uniqueNumber()}@example.com`;
    const lead = samplePayload(dealership.id, { email });
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, '/api/v1/leads', { method: 'POST', json: { lead } });
          return { status: response.status, identity: String(((await response.json()) as { lead?: { id: number } }).lead?.id ?? null) };
        }
        const result = await graph(yoga, 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }', {
          lead: graphLead(lead),
        });
        return { status: result.status, identity: String(field<{ lead: { id: number } }>(result.data, 'create_lead')?.lead.id ?? null) };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(distinct(answers)).toBe(AT_ONCE);
        expect(await app.db.lead.count({ where: { email } })).toBe(AT_ONCE);
      },
    };
  },
  'Mutation.update_lead': async () => {
    const lead = await makeStoredLead(app.db, dealership.id, { created_at: app.clock.now() });
    const message = `Same change ${uniqueNumber()}`;
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/leads/${lead.id}`, { method: 'PUT', json: { lead: { message } } });
          return { status: response.status, identity: ((await response.json()) as { lead?: { message: string } }).lead?.message ?? null };
        }
        const result = await graph(
          yoga,
          'mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { lead { message } } }',
          { id: lead.id, lead: { message } },
        );
        return { status: result.status, identity: field<{ lead: { message: string } }>(result.data, 'update_lead')?.lead.message ?? null };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(answers.every((answer) => answer.identity === message)).toBe(true);
        expect((await app.db.lead.findUniqueOrThrow({ where: { id: lead.id } })).message).toBe(message);
      },
    };
  },
  'Mutation.update_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    const stocknum = `SAME${uniqueNumber()}`;
    const input = carInput(dealership.id, { stocknum });
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/cars/${car.id}`, { method: 'PUT', json: { car: input } });
          return { status: response.status, identity: ((await response.json()) as { car?: { stocknum: string } }).car?.stocknum ?? null };
        }
        const result = await graph(yoga, 'mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { car { stocknum } } }', {
          id: car.id,
          car: input,
        });
        return { status: result.status, identity: field<{ car: { stocknum: string } }>(result.data, 'update_car')?.car.stocknum ?? null };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(answers.every((answer) => answer.identity === stocknum)).toBe(true);
        expect((await app.db.car.findUniqueOrThrow({ where: { id: car.id } })).stocknum).toBe(stocknum);
      },
    };
  },
  'Mutation.reserve_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT' });
          return { status: response.status, identity: response.status === 200 ? 'reserved' : null };
        }
        const result = await graph(yoga, 'mutation ($id: String!) { reserve_car(id: $id, reserved: true) { reserved } }', {
          id: String(car.id),
        });
        return { status: result.errors ? 409 : result.status, identity: result.errors ? null : 'reserved' };
      },
      async check(answers) {
        // One request reserved the car; every other was told it was already reserved.
        expect(succeeded(answers)).toHaveLength(1);
        expect(answers.filter((answer) => answer.status === 409)).toHaveLength(AT_ONCE - 1);
        expect((await app.db.car.findUniqueOrThrow({ where: { id: car.id } })).reserved).toBe(true);
      },
    };
  },
  'Mutation.create_partner_token': async () => {
    const before = await app.db.partnerToken.count({ where: { user_id: user.id } });
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, '/api/v1/partner/tokens', { method: 'POST', json: { email: user.email } });
          return { status: response.status, identity: ((await response.json()) as { redirect_url?: string }).redirect_url ?? null };
        }
        const result = await graph(yoga, 'mutation ($email: String) { create_partner_token(email: $email) { redirect_url } }', {
          email: user.email,
        });
        return {
          status: result.status,
          identity: field<{ redirect_url: string }>(result.data, 'create_partner_token')?.redirect_url ?? null,
        };
      },
      async check(answers) {
        // Two clients holding one single-use token is the defect this file exists for.
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(distinct(answers)).toBe(AT_ONCE);
        expect(await app.db.partnerToken.count({ where: { user_id: user.id } })).toBe(before + AT_ONCE);
      },
    };
  },
  'Mutation.create_lead_event': async () => {
    const lead = await makeLead(app.db, dealership.id);
    const data = { leadId: lead.id, messageDetail: { sentBy: 'Ana', description: 'Test drive booked' } };
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/lead_events/sms/create?data=${encodeURIComponent(JSON.stringify(data))}`, {
            method: 'POST',
          });
          return { status: response.status, identity: String(((await response.json()) as { id?: number }).id ?? null) };
        }
        const result = await graph(
          yoga,
          'mutation ($data: LeadEventData!) { create_lead_event(service: "sms", data: $data) { id: databaseId } }',
          { data },
        );
        return { status: result.status, identity: String(field<{ id: number }>(result.data, 'create_lead_event')?.id ?? null) };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(distinct(answers)).toBe(AT_ONCE);
        expect(await app.db.leadEvent.count({ where: { lead_id: lead.id } })).toBe(AT_ONCE);
      },
    };
  },
  'Mutation.phone_call_webhook': async () => {
    const caller = `+61412${String(10_000_000 + uniqueNumber()).slice(-6)}`;
    return {
      // Deliveries of the same two numbers within a minute are one call (src/domain/phone-calls.ts):
      // the first is accepted, each other is answered as a duplicate of it. An answer served from a
      // cache would say "accepted" to all of them.
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, '/api/v1/webhooks/phone_calls_webhooks/generic', {
            method: 'POST',
            json: { called_number: trackingNumber, caller_number: caller },
          });
          const body = (await response.json()) as { id?: number; status?: string };
          return { status: response.status, identity: `${body.status} ${body.id}` };
        }
        const result = await graph(
          yoga,
          'mutation ($called: String!, $caller: String!) { phone_call_webhook(called_number: $called, caller_number: $caller) { id: databaseId status } }',
          {
            called: trackingNumber,
            caller,
          },
        );
        const receipt = field<{ id: number; status: string }>(result.data, 'phone_call_webhook');
        return { status: result.status, identity: `${receipt?.status.toLowerCase()} ${receipt?.id}` };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        const [call] = await app.db.phoneCall.findMany({ where: { caller_number: caller } });
        expect(await app.db.phoneCall.count({ where: { caller_number: caller } })).toBe(1);
        expect(answers.map((answer) => answer.identity).sort()).toEqual([
          `accepted ${call!.id}`,
          ...Array(AT_ONCE - 1).fill(`duplicate ${call!.id}`),
        ]);
      },
    };
  },
  // Each webhook case has a dealership of its own: four rounds of eight creates would pass one
  // dealership's limit of 20 subscriptions.
  'Mutation.create_webhook_subscription': async () => {
    const { id: dealershipId } = await makeDealership(app.db);
    const subscription = { url: 'https://crm.example/hooks', events: ['lead.created'], dealership_id: dealershipId };
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, '/api/v1/webhook_subscriptions', { method: 'POST', json: { subscription } });
          const body = (await response.json()) as { subscription?: { id: number }; secret?: string };
          return { status: response.status, identity: `${body.subscription?.id} ${body.secret}` };
        }
        const result = await graph(
          yoga,
          'mutation ($subscription: WebhookSubscriptionInput!) { create_webhook_subscription(subscription: $subscription) { subscription { databaseId } secret } }',
          { subscription },
        );
        const made = field<{ subscription: { databaseId: number }; secret: string }>(result.data, 'create_webhook_subscription');
        return { status: result.status, identity: `${made?.subscription.databaseId} ${made?.secret}` };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(distinct(answers)).toBe(AT_ONCE);
        expect(await app.db.webhookSubscription.count({ where: { dealership_id: dealershipId } })).toBe(AT_ONCE);
      },
    };
  },
  'Mutation.rotate_webhook_secret': async () => {
    const { id } = await makeWebhookSubscription();
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/webhook_subscriptions/${id}/rotate_secret`, { method: 'POST' });
          return { status: response.status, identity: ((await response.json()) as { secret?: string }).secret ?? null };
        }
        const result = await graph(yoga, 'mutation ($id: Int!) { rotate_webhook_secret(id: $id) { secret } }', { id });
        const rotated = field<{ secret: string }>(result.data, 'rotate_webhook_secret');
        return { status: rotated ? result.status : 409, identity: rotated?.secret ?? null };
      },
      async check(answers) {
        // A rotation that read a secret another one replaced meanwhile is refused (409): each that
        // succeeded made a secret of its own.
        const rotated = succeeded(answers);
        expect(rotated.length).toBeGreaterThanOrEqual(1);
        expect(distinct(rotated)).toBe(rotated.length);
        expect(answers.filter((answer) => answer.status === 409)).toHaveLength(AT_ONCE - rotated.length);
      },
    };
  },
  'Mutation.disable_webhook_subscription': async () => webhookSwitchCase(false),
  'Mutation.enable_webhook_subscription': async () => webhookSwitchCase(true),
  'Mutation.delete_webhook_subscription': async () => {
    const { id } = await makeWebhookSubscription();
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/webhook_subscriptions/${id}`, { method: 'DELETE' });
          return { status: response.status, identity: String(response.status) };
        }
        const result = await graph(yoga, 'mutation ($id: Int!) { delete_webhook_subscription(id: $id) { databaseId deleted } }', { id });
        const deleted = field<{ deleted: boolean }>(result.data, 'delete_webhook_subscription');
        return { status: deleted ? result.status : 404, identity: String(deleted?.deleted ?? null) };
      },
      async check(answers) {
        // One delete removed it; a cached answer would tell every request it had.
        expect(succeeded(answers)).toHaveLength(1);
        expect(answers.filter((answer) => answer.status === 404)).toHaveLength(AT_ONCE - 1);
        expect(await app.db.webhookSubscription.count({ where: { id } })).toBe(0);
      },
    };
  },
  'Mutation.redeliver_webhook': async () => {
    const { id, dealershipId } = await makeWebhookSubscription();
    const car = await makeCar(app.db, dealershipId);
    expect((await rest(app.yoga, `/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT' })).status).toBe(200);
    const delivery = await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: id } });
    await app.db.webhookDelivery.update({ where: { id: delivery.id }, data: { status: 'failed' } });
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/webhook_subscriptions/${id}/deliveries/${delivery.id}/redeliver`, { method: 'POST' });
          return { status: response.status, identity: ((await response.json()) as { status?: string }).status ?? null };
        }
        const result = await graph(
          yoga,
          'mutation ($id: Int!, $delivery: Int!) { redeliver_webhook(id: $id, delivery_id: $delivery) { status } }',
          {
            id,
            delivery: delivery.id,
          },
        );
        return { status: result.status, identity: field<{ status: string }>(result.data, 'redeliver_webhook')?.status ?? null };
      },
      async check(answers) {
        expect(succeeded(answers)).toHaveLength(AT_ONCE);
        expect(answers.map((answer) => answer.identity)).toEqual(Array(AT_ONCE).fill('pending'));
        expect((await app.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status).toBe('pending');
      },
    };
  },
  'Mutation.redeem_partner_token': async () => {
    const token = createHash('sha256').update(`concurrent token ${uniqueNumber()}`).digest('base64url');
    await makePartnerToken(app.db, user.id, token, { expires_at: new Date(app.clock.now().getTime() + 10 * 60_000) });
    return {
      async send(yoga, door) {
        if (door === 'REST') {
          const response = await rest(yoga, `/api/v1/partner/sign_on?token=${token}`, { method: 'GET', key: null });
          return { status: response.status, identity: response.headers.get('location') };
        }
        const result = await graph(yoga, 'mutation ($token: String) { redeem_partner_token(token: $token) { location } }', { token });
        return {
          status: result.errors ? 410 : result.status,
          identity: field<{ location: string }>(result.data, 'redeem_partner_token')?.location ?? null,
        };
      },
      async check(answers) {
        // A single-use token signs on once, however many ask at the same moment.
        expect(succeeded(answers)).toHaveLength(1);
        expect(answers.filter((answer) => answer.status >= 400)).toHaveLength(AT_ONCE - 1);
      },
    };
  },
};

const mutationFields = Object.keys(getSchema().getMutationType()?.getFields() ?? {}).map((name) => `Mutation.${name}`);

/**
 * The cache as the busy service meets it: the first lookup is answered at once, every later one only
 * once the first entry has been stored (or after half a second), as when one request's lookup, over
 * the network to Redis, lands after another's store. Were a mutation looked up and stored like a read, the requests
 * after the first would be answered its result.
 */
function withLateLookups(options: ReadCacheOptions): ReadCacheOptions {
  let firstStored!: () => void;
  const stored = new Promise<void>((resolve) => {
    firstStored = resolve;
  });
  const late = Promise.race([stored, new Promise<void>((resolve) => setTimeout(resolve, 500))]);
  let lookups = 0;
  return {
    ...options,
    store: {
      async get(id) {
        lookups += 1;
        if (lookups > 1) await late;
        return options.store.get(id);
      },
      async set(id, read, ttlMs) {
        await options.store.set(id, read, ttlMs);
        firstStored();
      },
    },
  };
}

function instance(readCache: ReadCacheOptions): Yoga {
  return createApp(
    instanceDeps(
      { config: app.config, db: app.db, now: app.clock.now },
      { logger: pino({ level: 'silent' }), readCache: withLateLookups(readCache) },
    ),
  );
}

describe('identical mutations at once, with the response cache on', () => {
  it('has a case for every mutation of the schema', () => {
    expect(mutationFields.length).toBeGreaterThanOrEqual(8);
    expect(Object.keys(cases).sort()).toEqual([...mutationFields].sort());
  });

  it('never lets the cache take a mutation or a subscription for a read', () => {
    expect(isCacheableRead(parse('query { apikey_details { id: databaseId } }'), undefined)).toBe(true);
    expect(isCacheableRead(parse('mutation { reserve_car(id: "1", reserved: true) { reserved } }'), undefined)).toBe(false);
    expect(isCacheableRead(parse('subscription { x }'), undefined)).toBe(false);
    // The operation the request names is the one that runs.
    expect(isCacheableRead(parse('query A { a } mutation B { b }'), 'B')).toBe(false);
  });

  const caches: Record<string, () => ReadCacheOptions> = {
    memory: () => inMemoryReadCache(),
    Redis: () => redisReadCache(redis, pino({ level: 'silent' })),
  };
  for (const [cacheName, readCache] of Object.entries(caches)) {
    for (const door of ['REST', 'GraphQL'] as const) {
      it.each(Object.keys(cases))(
        `%s: each of ${AT_ONCE} identical requests gets its own answer (${door}, cache in ${cacheName})`,
        async (name) => {
          const yoga = instance(readCache());
          const testCase = await cases[name]!();
          const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => testCase.send(yoga, door)));
          await testCase.check(answers);
        },
      );
    }
  }
});
