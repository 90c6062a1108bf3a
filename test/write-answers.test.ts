// Every write is answered as it happened: a request is either refused (4xx, nothing stored) or stored
// and answered 2xx (302 for the sign-on handoff), never stored and then failed. Everything that can
// refuse a request is decided before the operation runs, and what is built after it (the answer's
// headers: X-Ignored-Parameters, Location) cannot throw, whatever Unicode the caller sent.
//
// The REST write routes are walked from the route table (a new write route fails the first test until
// it is given a fixture here), the GraphQL mutations from the schema, each with odd but harmless
// inputs: non-BMP and lone-surrogate names in the query, the JSON body and form fields, odd Accept
// values, over-long names and a 99-character name plus an emoji (which a cut at 100 UTF-16 units splits).
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { restRoutes, type RestRoute } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { carInput } from './support/fixtures-cars.ts';
import { makeCar, makeDealership, makeWritersWorld, uniqueNumber } from './support/fixtures.ts';
import { makeFailedDelivery, makeLead, makePartnerToken, makeWebhookSubscription } from './support/fixtures-events.ts';
import { graphLead, makeStoredLead, samplePayload } from './support/fixtures-leads.ts';

let app: TestApp;
let dealership: { id: number };
let user: { id: number; email: string };
let key: string;
let trackingNumber: string;

beforeAll(async () => {
  app = await createTestApp();
  // Subscribing to car.updated, and redelivering one, needs the car's read permission.
  ({ dealership, user, trackingNumber, key } = await makeWritersWorld(app.db, ['read:car']));
});

/** A subscription made by the newest key (the one these tests write with). */
async function makeHook(data: { enabled?: boolean } = {}): Promise<{ id: number; dealership_id: number }> {
  const apiKey = await app.db.apiKey.findFirstOrThrow({ orderBy: { id: 'desc' }, select: { id: true } });
  return makeWebhookSubscription(app.db, { apiKeyId: apiKey.id, events: ['car.updated'], at: new Date(), ...data });
}

/** One write, ready to send on either door, with the question whether it was stored. */
interface WriteCall {
  /** The REST path with its query. */
  path: string;
  /** The REST JSON body, if the route takes one. */
  json?: Record<string, unknown>;
  /** The record key of the body that unknown keys may also be nested in (`lead`, `car`). */
  record?: string;
  /** The same write on /graphql. */
  graphql: { query: string; variables: Record<string, unknown> };
  /** Whether the write is in the database now. */
  written(): Promise<boolean>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const TEN_MINUTES = 10 * 60_000;

/** A fresh write of each root field (a new lead, car or token each time, so each call can succeed once). */
const writes: Record<string, () => Promise<WriteCall>> = {
  'Mutation.create_lead': async () => {
    const email = `new.${uniqueNumber()}@example.com`;
    const lead = samplePayload(dealership.id, { email });
    return {
      path: '/api/v1/leads',
      json: { lead },
      record: 'lead',
      graphql: {
        query: 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }',
        variables: { lead: graphLead(lead) },
      },
      written: async () => (await app.db.lead.count({ where: { email } })) > 0,
    };
  },
  'Mutation.update_lead': async () => {
    const lead = await makeStoredLead(app.db, dealership.id, { created_at: app.clock.now() });
    const message = `Changed ${uniqueNumber()}`;
    return {
      path: `/api/v1/leads/${lead.id}`,
      json: { lead: { message } },
      record: 'lead',
      graphql: {
        query: 'mutation ($id: Int!, $lead: LeadUpdateInput!) { update_lead(id: $id, lead: $lead) { lead { id: databaseId } } }',
        variables: { id: lead.id, lead: { message } },
      },
      written: async () => (await app.db.lead.findUniqueOrThrow({ where: { id: lead.id } })).message === message,
    };
  },
  'Mutation.update_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    const stocknum = `W${uniqueNumber()}`;
    const input = carInput(dealership.id, { stocknum });
    return {
      path: `/api/cars/${car.id}`,
      json: { car: input },
      record: 'car',
      graphql: {
        query: 'mutation ($id: Int!, $car: CarInput!) { update_car(id: $id, car: $car) { car { id: databaseId } } }',
        variables: { id: car.id, car: input },
      },
      written: async () => (await app.db.car.findUniqueOrThrow({ where: { id: car.id } })).stocknum === stocknum,
    };
  },
  'Mutation.create_webhook_subscription': async () => {
    const own = await makeDealership(app.db);
    const subscription = { url: `https://hooks.example/${uniqueNumber()}`, events: ['car.updated'], dealership_id: own.id };
    return {
      path: '/api/v1/webhook_subscriptions',
      json: { subscription },
      record: 'subscription',
      graphql: {
        query: 'mutation ($s: WebhookSubscriptionInput!) { create_webhook_subscription(subscription: $s) { secret } }',
        variables: { s: subscription },
      },
      written: async () => (await app.db.webhookSubscription.count({ where: { url: subscription.url } })) > 0,
    };
  },
  'Mutation.rotate_webhook_secret': async () => {
    const hook = await makeHook();
    return {
      path: `/api/v1/webhook_subscriptions/${hook.id}/rotate_secret`,
      graphql: { query: 'mutation ($id: Int!) { rotate_webhook_secret(id: $id) { secret } }', variables: { id: hook.id } },
      written: async () => (await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: hook.id } })).previous_secret !== null,
    };
  },
  'Mutation.disable_webhook_subscription': async () => {
    const hook = await makeHook();
    return {
      path: `/api/v1/webhook_subscriptions/${hook.id}/disable`,
      graphql: { query: 'mutation ($id: Int!) { disable_webhook_subscription(id: $id) { enabled } }', variables: { id: hook.id } },
      written: async () => !(await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: hook.id } })).enabled,
    };
  },
  'Mutation.enable_webhook_subscription': async () => {
    const hook = await makeHook({ enabled: false });
    return {
      path: `/api/v1/webhook_subscriptions/${hook.id}/enable`,
      graphql: { query: 'mutation ($id: Int!) { enable_webhook_subscription(id: $id) { enabled } }', variables: { id: hook.id } },
      written: async () => (await app.db.webhookSubscription.findUniqueOrThrow({ where: { id: hook.id } })).enabled,
    };
  },
  'Mutation.delete_webhook_subscription': async () => {
    const hook = await makeHook();
    return {
      path: `/api/v1/webhook_subscriptions/${hook.id}`,
      graphql: { query: 'mutation ($id: Int!) { delete_webhook_subscription(id: $id) { deleted } }', variables: { id: hook.id } },
      written: async () => (await app.db.webhookSubscription.count({ where: { id: hook.id } })) === 0,
    };
  },
  'Mutation.redeliver_webhook': async () => {
    const hook = await makeHook();
    const delivery = await makeFailedDelivery(app.db, hook, 'car.updated', new Date());
    return {
      path: `/api/v1/webhook_subscriptions/${hook.id}/deliveries/${delivery.id}/redeliver`,
      graphql: {
        query: 'mutation ($id: Int!, $delivery: Int!) { redeliver_webhook(id: $id, delivery_id: $delivery) { status } }',
        variables: { id: hook.id, delivery: delivery.id },
      },
      written: async () => (await app.db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status === 'pending',
    };
  },
  'Mutation.reserve_car': async () => {
    const car = await makeCar(app.db, dealership.id);
    return {
      path: `/api/v1/cars/${car.id}/reserve?reserved=true`,
      graphql: {
        query: 'mutation ($id: String!) { reserve_car(id: $id, reserved: true) { id: databaseId reserved } }',
        variables: { id: String(car.id) },
      },
      written: async () => (await app.db.car.findUniqueOrThrow({ where: { id: car.id } })).reserved,
    };
  },
  'Mutation.create_partner_token': async () => {
    const before = await app.db.partnerToken.count({ where: { user_id: user.id } });
    return {
      path: '/api/v1/partner/tokens',
      json: { email: user.email },
      graphql: {
        query: 'mutation ($email: String) { create_partner_token(email: $email) { expires_at } }',
        variables: { email: user.email },
      },
      written: async () => (await app.db.partnerToken.count({ where: { user_id: user.id } })) > before,
    };
  },
  'Mutation.create_lead_event': async () => {
    const lead = await makeLead(app.db, dealership.id);
    const data = { leadId: lead.id, messageDetail: { sentBy: 'Ana', description: 'Test drive booked' } };
    return {
      path: `/api/v1/lead_events/sms/create?data=${encodeURIComponent(JSON.stringify(data))}`,
      graphql: {
        query: 'mutation ($data: LeadEventData!) { create_lead_event(service: "sms", data: $data) { id: databaseId } }',
        variables: { data },
      },
      written: async () => (await app.db.leadEvent.count({ where: { lead_id: lead.id } })) > 0,
    };
  },
  'Mutation.phone_call_webhook': async () => {
    const digits = String(10_000_000 + uniqueNumber()).slice(-6);
    const caller = `+61412${digits}`;
    const body = { called_number: trackingNumber, caller_number: caller };
    return {
      path: '/api/v1/webhooks/phone_calls_webhooks/generic',
      json: body,
      graphql: {
        query:
          'mutation ($called: String!, $caller: String!) { phone_call_webhook(called_number: $called, caller_number: $caller) { __typename } }',
        variables: { called: trackingNumber, caller },
      },
      written: async () => (await app.db.phoneCall.count({ where: { caller_number: caller } })) > 0,
    };
  },
  'Mutation.redeem_partner_token': async () => {
    const token = createHash('sha256').update(`token ${uniqueNumber()}`).digest('base64url');
    await makePartnerToken(app.db, user.id, token, { expires_at: new Date(app.clock.now().getTime() + TEN_MINUTES) });
    return {
      path: `/api/v1/partner/sign_on?token=${token}`,
      graphql: { query: 'mutation ($token: String) { redeem_partner_token(token: $token) { location } }', variables: { token } },
      written: async () => (await app.db.partnerToken.findUniqueOrThrow({ where: { token_hash: sha256(token) } })).used_at !== null,
    };
  },
};

const writeRoutes = restRoutes.filter((route) => route.field.startsWith('Mutation.'));

/** Odd parameter and key names: non-BMP, lone surrogates, over-long, and 99 ASCII + an emoji. */
const ODD_NAMES: Record<string, string> = {
  emoji: '🚗',
  'lone high surrogate': '\uD800',
  'lone low surrogate': '\uDC00',
  'pair reversed': '\uDC00\uD800',
  '99 chars + emoji': `${'a'.repeat(99)}🚗`,
  'over-long': 'n'.repeat(5_000),
  'percent and comma': '%,%2C',
  'control characters': 'a\r\nb\u0000',
};

/** Query-string spellings, including byte sequences no UTF-8 decoder accepts. */
const ODD_QUERY_NAMES: Record<string, string> = {
  emoji: '%F0%9F%9A%97',
  'encoded surrogate (invalid UTF-8)': '%ED%A0%80',
  'truncated UTF-8': '%F0%9F',
  '99 chars + emoji': `${'a'.repeat(99)}%F0%9F%9A%97`,
  'over-long': 'q'.repeat(5_000),
  'raw lone surrogate': '\uD800',
  'raw emoji': '🚗',
};

/** Accept headers: not JSON, UTF-8 bytes (as a server receives them: one latin1 char per byte), garbage, refusing all. */
const ODD_ACCEPTS: Record<string, string> = {
  html: 'text/html',
  'UTF-8 bytes': Buffer.from('application/jsön, téxt/*', 'utf8').toString('latin1'),
  garbage: ';;=,,q=x/\t;',
  'nothing (q=0)': '*/*;q=0',
  'latin1 charset': 'application/json; charset=iso-8859-1',
  empty: '',
};

/** Other request headers the answer is built from after the write (compression, request ids, CORS). */
const ODD_HEADERS: Record<string, Record<string, string>> = {
  'Accept-Encoding with odd weights': { 'accept-encoding': 'gzip;q=x, br;q=2, deflate;q=-1, *;q=0' },
  'Accept-Encoding: identity;q=0': { 'accept-encoding': 'identity;q=0' },
  'Request-Id with UTF-8 bytes': { 'request-id': Buffer.from('id-🚗-ü', 'utf8').toString('latin1') },
  'X-Request-Id over-long': { 'x-request-id': 'r'.repeat(8_000) },
  'Origin: null': { origin: 'null' },
  'Origin with UTF-8 bytes': { origin: Buffer.from('https://ü.example', 'utf8').toString('latin1') },
};

interface Sent {
  label: string;
  init: RequestInit;
  path: string;
}

type OddRequest = () => Promise<{ sent: Sent; call: WriteCall }>;

function withQueryName(path: string, name: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}${name}=1`;
}

/** A multipart/form-data body written by hand, so field names can hold bytes FormData would clean up. */
function multipart(fields: readonly (readonly [name: Buffer | string, value: string])[]): { body: Buffer; type: string } {
  const boundary = `----write-answers-${uniqueNumber()}`;
  const parts = fields.map(([name, value]) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="`),
      typeof name === 'string' ? Buffer.from(name, 'utf8') : name,
      Buffer.from(`"\r\n\r\n${value}\r\n`),
    ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

/** A JSON body's fields as Rails-style form keys (`lead[name]`). */
function railsFields(value: unknown, prefix = ''): [string, string][] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => railsFields(item, `${prefix}[${index}]`));
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([name, item]) =>
      railsFields(item, prefix ? `${prefix}[${name}]` : name),
    );
  }
  return [[prefix, String(value)]];
}

/** Every odd request of one write route, each over a fresh write. */
function oddRequests(route: RestRoute): OddRequest[] {
  const make = writes[route.field];
  if (!make) throw new Error(`no write fixture for ${route.field}`);
  const out: OddRequest[] = [];
  // Each request is built over its write just before it is sent (a count taken earlier would be stale).
  const add = (label: string, build: (call: WriteCall) => { path?: string; init: RequestInit }) => {
    out.push(async () => {
      const call = await make();
      const { path = call.path, init } = build(call);
      return { call, sent: { label, path, init } };
    });
  };
  const jsonInit = (call: WriteCall, body: unknown = call.json, headers: Record<string, string> = {}): RequestInit => ({
    method: route.method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

  for (const [label, name] of Object.entries(ODD_QUERY_NAMES)) {
    add(`query name: ${label}`, (call) => ({ path: withQueryName(call.path, name), init: jsonInit(call) }));
  }
  for (const [label, accept] of Object.entries(ODD_ACCEPTS)) {
    add(`Accept: ${label}`, (call) => ({ init: jsonInit(call, call.json, { accept }) }));
  }
  for (const [label, headers] of Object.entries(ODD_HEADERS)) {
    add(label, (call) => ({ init: jsonInit(call, call.json, headers) }));
  }
  if (route.method === 'GET') return out;
  for (const [label, name] of Object.entries(ODD_NAMES)) {
    add(`JSON body key: ${label}`, (call) => ({ init: jsonInit(call, { ...call.json, [name]: 1 }) }));
    add(`JSON record key: ${label}`, (call) => {
      const { record, json } = call;
      const body =
        record && json ? { ...json, [record]: { ...(json[record] as object), [name]: 'x' } } : { ...json, [name]: { [name]: 1 } };
      return { init: jsonInit(call, body) };
    });
  }
  if (route.body || route.acceptsForm) {
    const formNames: Record<string, Buffer | string> = {
      ...ODD_NAMES,
      'surrogate bytes (invalid UTF-8)': Buffer.from([0xed, 0xa0, 0x80]),
      'truncated UTF-8': Buffer.from([0x61, 0xf0, 0x9f]),
    };
    for (const [label, name] of Object.entries(formNames)) {
      add(`multipart field name: ${label}`, (call) => {
        const { body, type } = multipart([...railsFields(call.json), [name, '1']]);
        return {
          init: { method: route.method, headers: { authorization: `Bearer ${key}`, 'content-type': type }, body: new Uint8Array(body) },
        };
      });
    }
  }
  if (route.acceptsForm) {
    for (const [label, name] of Object.entries(ODD_QUERY_NAMES)) {
      add(`urlencoded field name: ${label}`, (call) => {
        const fields = railsFields(call.json).map(([field, value]) => `${encodeURIComponent(field)}=${encodeURIComponent(value)}`);
        const body = [...fields, `${name}=1`].join('&');
        return {
          init: {
            method: route.method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
            body,
          },
        };
      });
    }
  }
  return out;
}

/** The one rule: refused (4xx) and nothing stored, or stored and answered with success. */
function expectAnsweredAsHappened(status: number, written: boolean, label: string, success: number): void {
  if (written) expect(status, `${label}: stored, so answered ${success}`).toBe(success);
  else {
    expect(status, `${label}: not stored, so refused with a 4xx`).toBeGreaterThanOrEqual(400);
    expect(status, `${label}: not stored, so refused with a 4xx`).toBeLessThan(500);
  }
}

describe('the REST door', () => {
  it('has a fixture for every write route of the route table', () => {
    expect(writeRoutes.map((route) => route.field).sort()).toEqual(Object.keys(writes).sort());
  });

  it.each(writeRoutes.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s: every odd request is refused with nothing stored, or stored and answered with success',
    async (_name, route) => {
      const requests = oddRequests(route);
      expect(requests.length).toBeGreaterThan(10);
      const success = route.successStatus ?? 200;
      let stored = 0;
      for (const next of requests) {
        const { sent, call } = await next();
        const response = await app.yoga.fetch(`http://gateway.test${sent.path}`, sent.init);
        const text = await response.text();
        if (process.env.WRITE_ANSWERS_DEBUG) console.log(sent.label, response.status, text.slice(0, 200));
        const written = await call.written();
        if (written) stored += 1;
        expectAnsweredAsHappened(response.status, written, sent.label, success);
        // A header the answer carries is always sendable: ISO-8859-1 printable text, nothing else.
        for (const [name, value] of response.headers) expect(value, `${sent.label}: ${name}`).toMatch(/^[\x20-\x7e]*$/);
      }
      // The odd names are harmless: most of these writes succeed (the test is not passing by refusing all).
      expect(stored, 'writes that went through').toBeGreaterThan(requests.length / 2);
    },
  );

  it('names odd ignored parameters in X-Ignored-Parameters, percent-encoded and cut on code points', async () => {
    const call = await writes['Mutation.create_lead']!();
    const lead = { ...(call.json?.lead as object), '\uD800': 1, [`${'a'.repeat(99)}🚗`]: 2 };
    const response = await app.request(`/api/v1/leads?%F0%9F%9A%97=1`, { method: 'POST', key, json: { lead } });
    expect(response.status).toBe(201);
    const names = (response.headers.get('x-ignored-parameters') ?? '').split(', ');
    expect(names).toHaveLength(3);
    // The query's emoji as its UTF-8 escapes; the lone surrogate as U+FFFD's or quoted; the long name cut.
    expect(names[0]).toBe('%F0%9F%9A%97');
    for (const name of names) expect(name).toMatch(/^[\x21-\x7e]{1,400}$/);
    expect(names[2]).toMatch(/^lead\W*a{90,}/);
  });
});

describe('the GraphQL door', () => {
  const mutations = Object.keys(getSchema().getMutationType()?.getFields() ?? {}).map((name) => `Mutation.${name}`);

  it('has a fixture for every mutation', () => {
    expect(mutations.sort()).toEqual(Object.keys(writes).sort());
  });

  it.each(mutations)('%s: odd Accept values and names are refused before it runs, or it runs and answers 200', async (field) => {
    const make = writes[field]!;
    const cases: { label: string; headers: Record<string, string>; body: (call: WriteCall) => unknown }[] = [
      ...Object.entries(ODD_ACCEPTS).map(([label, accept]) => ({
        label: `Accept: ${label}`,
        headers: { accept },
        body: (call: WriteCall) => call.graphql,
      })),
      ...Object.entries(ODD_NAMES).flatMap(([label, name]) => [
        {
          label: `variable name: ${label}`,
          headers: {},
          body: (call: WriteCall) => ({ ...call.graphql, variables: { ...call.graphql.variables, [name]: 1 } }),
        },
        { label: `operation name: ${label}`, headers: {}, body: (call: WriteCall) => ({ ...call.graphql, operationName: name }) },
        { label: `extensions key: ${label}`, headers: {}, body: (call: WriteCall) => ({ ...call.graphql, extensions: { [name]: 1 } }) },
      ]),
    ];
    let stored = 0;
    for (const { label, headers, body } of cases) {
      const call = await make();
      const response = await app.yoga.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body(call)),
      });
      const text = await response.text();
      const written = await call.written();
      if (written) {
        stored += 1;
        expect(response.status, `${label}: stored, so answered 200`).toBe(200);
        expect((JSON.parse(text) as { errors?: unknown }).errors, `${label}: stored, so no errors`).toBeUndefined();
      } else {
        expect(response.status, `${label}: not stored, so refused`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${label}: not stored, so refused with a 4xx`).toBeLessThan(500);
      }
    }
    expect(stored, 'writes that went through').toBeGreaterThan(cases.length / 3);
  });

  it('refuses Accept: text/html with 406 before running the mutation', async () => {
    const call = await writes['Mutation.create_lead']!();
    const response = await app.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/html' },
      body: JSON.stringify(call.graphql),
    });
    expect(response.status).toBe(406);
    expect(((await response.json()) as { errors: { extensions: { error: string } }[] }).errors[0]?.extensions.error).toBe('not_acceptable');
    expect(await call.written()).toBe(false);
  });
});

describe('Idempotency-Key', () => {
  it('a replay of a stored write with odd ignored names answers the stored answer, status and body, on both doors', async () => {
    const call = await writes['Mutation.create_lead']!();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `replay-${uniqueNumber()}` };
    const body = JSON.stringify({ ...call.json, '\uD800🚗': 1 });
    const send = () => app.yoga.fetch('http://gateway.test/api/v1/leads?%F0%9F%9A%97=1', { method: 'POST', headers, body });
    const first = await send();
    expect(first.status).toBe(201);
    const firstBody = await first.json();
    const replay = await send();
    expect(replay.status).toBe(201);
    expect(await replay.json()).toEqual(firstBody);
    const lead = (firstBody as { lead: { email: string } }).lead;
    expect(await app.db.lead.count({ where: { email: lead.email } })).toBe(1);

    // The same key on the graph door answers the same lead.
    const graph = await app.yoga.fetch('http://gateway.test/graphql', { method: 'POST', headers, body: JSON.stringify(call.graphql) });
    expect(graph.status).toBe(200);
    const graphBody = (await graph.json()) as { data: { create_lead: { lead: { id: number } } } };
    expect(graphBody.data.create_lead.lead.id).toBe((firstBody as { lead: { id: number } }).lead.id);
  });
});
