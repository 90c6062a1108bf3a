// Live subscriptions over Server-Sent Events, through yoga.fetch (docs/subscriptions.md): an event
// published after a subscription opened reaches it, read afresh through the subscriber's scoped
// client (its dealerships only, personal data behind read:personal_data); each field needs its
// record's read permission; a key holds at most SUBSCRIPTIONS_PER_KEY streams and an instance at most
// SUBSCRIPTIONS_PER_INSTANCE; heartbeats come every SUBSCRIPTION_HEARTBEAT_MS; closing the hub (the
// shutdown's first step) completes every stream. Publishing hands an event over in later turns, a
// bounded number of streams a turn, so a write is answered before any stream is sent its event. Each
// event carries its id, and a stream opened with Last-Event-ID is first sent the stored events it
// missed. Every record event type has its field (a type without one fails here).
// test/subscriptions-instances.test.ts: key changes announced through Redis, and reconnects over HTTP.
import { encodeGlobalID } from '@pothos/plugin-relay';
import { isObjectType } from 'graphql';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_EVENT_TYPES, type RecordEvent, type RecordEventSubject, type RecordEventType } from '../src/domain/record-events.ts';
import { getSchema } from '../src/schema/index.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { readPermissionOfEvent } from '../src/domain/webhooks.ts';
import { revokeKey } from '../src/auth/api-keys.ts';
import { removeDealerships, removePermissions } from '../src/auth/key-admin.ts';
import { createKeyVerifier, type KeyVerifier } from '../src/auth/key-cache.ts';
import { createLiveEventHub, HANDOVERS_PER_TURN, type LiveEventHub } from '../src/gateway/live-events.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { RESUME_LIMIT } from '../src/schema/subscriptions.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation } from './support/fixtures.ts';
import { makePhoneCall } from './support/fixtures-catalogue.ts';
import { makeStoredLead, samplePayload } from './support/fixtures-leads.ts';
import { readSse, type SseReader } from './support/sse.ts';

const PER_KEY = 2;
const HEARTBEAT_MS = 150;

let app: TestApp;
let north: { id: number };
let south: { id: number };
let full: { key: string };
let plain: { key: string };
let northOnly: { key: string };
let carsOnly: { key: string };
const open: SseReader[] = [];

/** A stream refused when it opens: one 403 error, then complete. */
async function expectRefused(reader: SseReader): Promise<void> {
  const refusal = await reader.nextEvent();
  expect(refusal.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', error: 'forbidden' });
  expect(await reader.next()).toEqual({ kind: 'complete' });
}

beforeAll(async () => {
  app = await createTestApp({ subscriptionsPerKey: PER_KEY, subscriptionHeartbeatMs: HEARTBEAT_MS });
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  full = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data', 'read:car'] });
  plain = await makeKey(app.db, { permissions: ['read:lead'] });
  northOnly = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data', 'read:car'], dealershipIds: [north.id] });
  carsOnly = await makeKey(app.db, { permissions: ['read:car'] });
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((reader) => reader.close()));
});

async function subscribe(
  query: string,
  key: string,
  init: { method?: 'GET' | 'POST'; lastEventId?: string; on?: { yoga: Yoga }; closedBy?: SseReader[] } = {},
): Promise<SseReader> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
  if (init.lastEventId !== undefined) headers['last-event-id'] = init.lastEventId;
  const response = await (init.on ?? app).yoga.fetch(
    init.method === 'GET' ? `http://gateway.test/graphql?query=${encodeURIComponent(query)}` : 'http://gateway.test/graphql',
    init.method === 'GET'
      ? { headers }
      : { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ query }) },
  );
  const reader = readSse(response);
  (init.closedBy ?? open).push(reader);
  // The first comment line comes once the stream is open; the subscription is listening by then.
  expect(await reader.next()).toEqual({ kind: 'heartbeat' });
  return reader;
}

let eventNumber = 0;
function publish(type: RecordEventType, dealershipId: number, recordId: number): RecordEvent {
  eventNumber += 1;
  const subject = type.slice(0, type.lastIndexOf('.')) as RecordEvent['subject'];
  const event: RecordEvent = { id: `test-${eventNumber}`, type, dealershipId, subject, recordId, occurredAt: new Date() };
  app.events.publish(event);
  return event;
}

const LEAD_CREATED = 'subscription { leadCreated { databaseId dealership_id name email } }';

describe('Subscription.leadCreated', () => {
  it('sends a lead created after it opened, as an SSE `next` event, read afresh', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key);
    expect(reader.response.status).toBe(200);
    expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(reader.response.headers.get('cache-control')).toBe('no-store');
    const lead = await makeStoredLead(app.db, north.id, { name: 'Ada Live', email: 'ada@example.com' });
    publish('lead.created', north.id, lead.id);
    expect(await reader.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: lead.id, dealership_id: north.id, name: 'Ada Live', email: 'ada@example.com' } },
    });
  });

  it('works over GET too (EventSource), with no ETag or compression in the way', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key, { method: 'GET' });
    expect(reader.response.headers.get('etag')).toBeNull();
    expect(reader.response.headers.get('content-encoding')).toBeNull();
    const lead = await makeStoredLead(app.db, north.id);
    publish('lead.created', north.id, lead.id);
    expect(await reader.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: lead.id } } });
  });

  it("never sends another dealership's lead to a key restricted to its own", async () => {
    const reader = await subscribe(LEAD_CREATED, northOnly.key);
    const southLead = await makeStoredLead(app.db, south.id);
    const northLead = await makeStoredLead(app.db, north.id);
    publish('lead.created', south.id, southLead.id);
    // An event that names the wrong dealership for its record is not trusted either: the scoped client does not find it.
    publish('lead.created', north.id, southLead.id);
    publish('lead.created', north.id, northLead.id);
    expect(await reader.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: northLead.id } } });
    expect(await reader.eventsWithin(300)).toEqual([]);
  });

  it('leaves personal data null without read:personal_data', async () => {
    const reader = await subscribe(LEAD_CREATED, plain.key);
    const lead = await makeStoredLead(app.db, south.id, { name: 'Private Person' });
    publish('lead.created', south.id, lead.id);
    expect(await reader.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: lead.id, dealership_id: south.id, name: null, email: null } },
    });
  });

  it('sends only its own event type', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key);
    const lead = await makeStoredLead(app.db, north.id);
    publish('lead.updated', north.id, lead.id);
    expect(await reader.eventsWithin(300)).toEqual([]);
  });

  it('needs read:lead: a key without it is refused on the stream', async () => {
    const reader = await subscribe(LEAD_CREATED, carsOnly.key);
    await expectRefused(reader);
  });

  it('needs a key', async () => {
    const response = await app.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: LEAD_CREATED }),
    });
    const reader = readSse(response);
    open.push(reader);
    const refusal = await reader.nextEvent();
    expect(refusal.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('is not answered as JSON: a subscription is a stream (406 without text/event-stream)', async () => {
    const response = await app.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${full.key}`, accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ query: LEAD_CREATED }),
    });
    expect(response.status).toBe(406);
  });
});

describe('the other record events', () => {
  it('carUpdated, carReserved and carReleased send the car, each its own type', async () => {
    const updated = await subscribe('subscription { carUpdated { databaseId stocknum } }', carsOnly.key);
    const reserved = await subscribe('subscription { carReserved { databaseId } }', full.key);
    const car = await makeCar(app.db, north.id, { stocknum: 'LIVE1' });
    publish('car.reserved', north.id, car.id);
    publish('car.updated', north.id, car.id);
    expect(await updated.nextEvent()).toEqual({ data: { carUpdated: { databaseId: car.id, stocknum: 'LIVE1' } } });
    expect(await reserved.nextEvent()).toEqual({ data: { carReserved: { databaseId: car.id } } });
    expect(await updated.eventsWithin(200)).toEqual([]);
  });

  it('leadEventCreated sends the lead event', async () => {
    const reader = await subscribe('subscription { leadEventCreated { databaseId lead_id service } }', full.key);
    const lead = await makeStoredLead(app.db, north.id);
    const leadEvent = await app.db.leadEvent.create({ data: { lead_id: lead.id, service: 'sms' } });
    publish('lead_event.created', north.id, leadEvent.id);
    expect(await reader.nextEvent()).toEqual({
      data: { leadEventCreated: { databaseId: leadEvent.id, lead_id: lead.id, service: 'sms' } },
    });
  });

  it('a lead created through create_lead reaches an open subscription', async () => {
    const writer = await makeKey(app.db, { permissions: ['create:lead'] });
    const reader = await subscribe(LEAD_CREATED, full.key);
    const created = await app.graphql<{ create_lead: { lead: { id: number } } }>(
      'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }',
      {
        lead: {
          dealership_id: north.id,
          category: 'GENERAL_ENQUIRY',
          source: 'Website',
          name: 'Via Mutation',
          email: 'via@example.com',
          phone: '+61412345678',
        },
      },
      writer.key,
    );
    expect(created.errors).toBeUndefined();
    expect(await reader.nextEvent()).toMatchObject({
      data: { leadCreated: { databaseId: created.data?.create_lead.lead.id, name: 'Via Mutation' } },
    });
  });
});

describe('Subscription.phoneCallCreated', () => {
  const PHONE_CALL_CREATED =
    'subscription { phoneCallCreated { id databaseId dealership_id location_id car_id called_number caller_number } }';
  const NORTH_TRACKING = '+61293744100';
  const SOUTH_TRACKING = '+61293744200';
  let provider: string;
  let northLocation: { id: number };
  let southLocation: { id: number };

  beforeAll(async () => {
    northLocation = await makeLocation(app.db, north.id, { tracking_phone: NORTH_TRACKING });
    southLocation = await makeLocation(app.db, south.id, { tracking_phone: SOUTH_TRACKING });
    provider = (await makeKey(app.db, { permissions: ['create:phone_call'] })).key;
  });

  /** A call reported through the provider's webhook path: answers the recorded call's id. */
  async function reportCall(calledNumber: string, callerNumber: string, callId: string): Promise<number> {
    const response = await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', {
      method: 'POST',
      key: provider,
      json: { called_number: calledNumber, caller_number: callerNumber, call_id: callId },
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: number }).id;
  }

  const call = (id: number, dealershipId: number, locationId: number, called: string, caller: string | null) => ({
    data: {
      phoneCallCreated: {
        id: encodeGlobalID('PhoneCall', id),
        databaseId: id,
        dealership_id: dealershipId,
        location_id: locationId,
        car_id: null,
        called_number: called,
        caller_number: caller,
      },
    },
  });

  it('sends a call reported to the webhook path, only to keys reaching its dealership, the caller null without read:personal_data', async () => {
    const everywhere = await subscribe(PHONE_CALL_CREATED, full.key);
    const withoutPersonalData = await subscribe(PHONE_CALL_CREATED, plain.key);
    const northern = await subscribe(PHONE_CALL_CREATED, northOnly.key);
    const southCall = await reportCall(SOUTH_TRACKING, '0412 300 001', 'live-south');
    const northCall = await reportCall(NORTH_TRACKING, '0412 300 002', 'live-north');

    expect(await everywhere.nextEvent()).toEqual(call(southCall, south.id, southLocation.id, SOUTH_TRACKING, '+61412300001'));
    expect(await everywhere.nextEvent()).toEqual(call(northCall, north.id, northLocation.id, NORTH_TRACKING, '+61412300002'));
    expect(await withoutPersonalData.nextEvent()).toEqual(call(southCall, south.id, southLocation.id, SOUTH_TRACKING, null));
    expect(await withoutPersonalData.nextEvent()).toEqual(call(northCall, north.id, northLocation.id, NORTH_TRACKING, null));
    expect(await northern.nextEvent()).toEqual(call(northCall, north.id, northLocation.id, NORTH_TRACKING, '+61412300002'));

    // A repeated delivery of a call is no new call; a call to nobody's number is no dealership's event.
    await reportCall(NORTH_TRACKING, '0412 300 002', 'live-north');
    await reportCall('+61299990000', '0412 300 003', 'live-nobody');
    expect(await northern.eventsWithin(300)).toEqual([]);
    expect(await everywhere.eventsWithin(100)).toEqual([]);
  });

  it('needs read:lead, the permission a phone_call.created webhook needs', async () => {
    const reader = await subscribe(PHONE_CALL_CREATED, carsOnly.key);
    await expectRefused(reader);
  });
});

describe('every record event type', () => {
  /** Each event type's field is named for it: lead_event.created is leadEventCreated. */
  const fieldOf = (type: RecordEventType) => type.replace(/[._](\w)/g, (_match, letter: string) => letter.toUpperCase());

  /** A stored record of each subject, in the north dealership: answers its id. */
  const records: Record<RecordEventSubject, () => Promise<number>> = {
    lead: async () => (await makeStoredLead(app.db, north.id)).id,
    lead_event: async () => {
      const lead = await makeStoredLead(app.db, north.id);
      return (await app.db.leadEvent.create({ data: { lead_id: lead.id, service: 'sms' } })).id;
    },
    car: async () => (await makeCar(app.db, north.id)).id,
    phone_call: async () => (await makePhoneCall(app.db, null, { dealership_id: north.id })).id,
  };

  for (const type of RECORD_EVENT_TYPES) {
    it(`${type} has its subscription field, ${fieldOf(type)}, which sends the record`, async () => {
      const subscription = getSchema().getSubscriptionType();
      const field = subscription?.getFields()[fieldOf(type)];
      expect(field, `Subscription.${fieldOf(type)}`).toBeDefined();
      const returned = field?.type;
      expect(isObjectType(returned) && 'databaseId' in returned.getFields(), `${fieldOf(type)} answers a record`).toBe(true);

      const reader = await subscribe(`subscription { ${fieldOf(type)} { databaseId } }`, full.key);
      const event = publish(type, north.id, await records[type.slice(0, type.lastIndexOf('.')) as RecordEventSubject]());
      expect(await reader.nextEvent()).toEqual({ data: { [fieldOf(type)]: { databaseId: event.recordId } } });
    });

    it(`${type}: ${fieldOf(type)} is refused to a key holding every permission but ${readPermissionOfEvent(type)}`, async () => {
      const key = await makeKey(app.db, {
        permissions: allPermissions.filter((permission) => permission !== readPermissionOfEvent(type)),
      });
      await expectRefused(await subscribe(`subscription { ${fieldOf(type)} { databaseId } }`, key.key));
    });
  }
});

describe('a key that changes while its subscription is open', () => {
  /** Past the key verdicts' reuse (API_KEY_CACHE_TTL_MS), as an instance without Redis sees a change made elsewhere. */
  const pastVerdicts = () => app.clock.advance(app.config.apiKeyCacheTtlMs + 1);

  /** The stream's last event: the error that ended it, no record; then it completes and its count is released. */
  async function expectEnded(reader: SseReader, extensions: Record<string, unknown>): Promise<void> {
    const last = await reader.nextEvent();
    expect(last).toEqual({
      data: { leadCreated: null },
      errors: [expect.objectContaining({ extensions: expect.objectContaining(extensions) })],
    });
    expect(await reader.next()).toEqual({ kind: 'complete' });
  }

  it('a revoked key receives nothing more: its stream ends with 401 unauthorized', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'] });
    const before = app.events.openStreams();
    const reader = await subscribe(LEAD_CREATED, key.key);
    await revokeKey(app.db, key.id, app.clock.now());
    pastVerdicts();
    const lead = await makeStoredLead(app.db, north.id, { name: 'Not For Revoked' });
    publish('lead.created', north.id, lead.id);
    await expectEnded(reader, { code: 'UNAUTHENTICATED', error: 'unauthorized' });
    expect(app.events.openStreams()).toBe(before);
  });

  it('an expired key receives nothing more', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead'], expiresAt: new Date(app.clock.now().getTime() + 60_000) });
    const reader = await subscribe(LEAD_CREATED, key.key);
    app.clock.advance(60_000);
    const lead = await makeStoredLead(app.db, north.id);
    publish('lead.created', north.id, lead.id);
    await expectEnded(reader, { code: 'UNAUTHENTICATED' });
  });

  it('a key that loses read:lead receives nothing more: its stream ends with 403 forbidden', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:car'] });
    const reader = await subscribe(LEAD_CREATED, key.key);
    await removePermissions(app.db, key.id, ['read:lead']);
    pastVerdicts();
    const lead = await makeStoredLead(app.db, north.id);
    publish('lead.created', north.id, lead.id);
    await expectEnded(reader, { code: 'FORBIDDEN', permission: 'read:lead' });
  });

  it('a key that loses a dealership or read:personal_data receives events with what it holds now', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'], dealershipIds: [north.id, south.id] });
    const reader = await subscribe(LEAD_CREATED, key.key);
    await removeDealerships(app.db, key.id, [south.id]);
    await removePermissions(app.db, key.id, ['read:personal_data']);
    pastVerdicts();
    const southLead = await makeStoredLead(app.db, south.id);
    const northLead = await makeStoredLead(app.db, north.id, { name: 'Now Private' });
    publish('lead.created', south.id, southLead.id);
    publish('lead.created', north.id, northLead.id);
    expect(await reader.nextEvent()).toEqual({
      data: { leadCreated: { databaseId: northLead.id, dealership_id: north.id, name: null, email: null } },
    });
    expect(await reader.eventsWithin(300)).toEqual([]);
  });

  it('an idle stream of a revoked key ends at a heartbeat, without waiting for an event', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead'] });
    const reader = await subscribe(LEAD_CREATED, key.key);
    await revokeKey(app.db, key.id, app.clock.now());
    pastVerdicts();
    await expectEnded(reader, { code: 'UNAUTHENTICATED' });
  });

  it('checks the key through the verdict cache: a fresh verdict costs the event no key lookup', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key);
    const lead = await makeStoredLead(app.db, north.id);
    app.queries.length = 0;
    publish('lead.created', north.id, lead.id);
    expect(await reader.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: lead.id } } });
    expect(app.queries.filter((sql) => /api_key/i.test(sql))).toEqual([]);
  });
});

describe('limits and heartbeats', () => {
  it(`refuses a key's subscription beyond SUBSCRIPTIONS_PER_KEY (${PER_KEY}), and takes one again once another closes`, async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead'] });
    const first = await subscribe(LEAD_CREATED, key.key);
    await subscribe(LEAD_CREATED, key.key);
    const refused = await subscribe(LEAD_CREATED, key.key);
    const refusal = await refused.nextEvent();
    expect(refusal.errors?.[0]).toMatchObject({
      message: `This API key already holds ${PER_KEY} open subscriptions on this instance, its limit: close one before opening another.`,
      extensions: { code: 'RATE_LIMITED', error: 'too_many_subscriptions', limit: PER_KEY },
    });
    expect(await refused.next()).toEqual({ kind: 'complete' });
    // Another key is not limited by this one's streams.
    await subscribe(LEAD_CREATED, plain.key);
    await first.close();
    const again = await subscribe(LEAD_CREATED, key.key);
    const lead = await makeStoredLead(app.db, north.id);
    publish('lead.created', north.id, lead.id);
    expect(await again.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: lead.id } } });
  });

  it('refuses a document over the query limits when it opens, as a query is refused, holding no stream', async () => {
    const deep = 'subscription { leadCreated { car { leads { edges { node { car { leads { edges { node { databaseId } } } } } } } } } }';
    const before = app.events.openStreams();
    const reader = await subscribe(deep, full.key);
    const refusal = await reader.nextEvent();
    expect(refusal.errors?.[0]?.extensions).toMatchObject({ error: 'query_too_deep' });
    expect(await reader.next()).toEqual({ kind: 'complete' });
    expect(app.events.openStreams()).toBe(before);
  });

  it('sends a heartbeat (an SSE comment line) every SUBSCRIPTION_HEARTBEAT_MS while no event comes', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key);
    const started = Date.now();
    expect(await reader.next(HEARTBEAT_MS * 10)).toEqual({ kind: 'heartbeat' });
    expect(await reader.next(HEARTBEAT_MS * 10)).toEqual({ kind: 'heartbeat' });
    // Two heartbeats after the opening one: at least one interval has passed (not Yoga's own 12 s).
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEARTBEAT_MS);
  });

  it("releases a stream when its client closes it (the key's count and the hub's listener)", async () => {
    const before = app.events.openStreams();
    const reader = await subscribe(LEAD_CREATED, full.key);
    expect(app.events.openStreams()).toBe(before + 1);
    await reader.close();
    await expect.poll(() => app.events.openStreams(), { timeout: 2_000 }).toBe(before);
  });

  it('closing the hub (the shutdown) completes every open stream and refuses new ones', async () => {
    const other = await createTestApp();
    const key = await makeKey(other.db, { permissions: ['read:lead'] });
    const response = await other.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: LEAD_CREATED }),
    });
    const reader = readSse(response);
    open.push(reader);
    expect(await reader.next()).toEqual({ kind: 'heartbeat' });
    expect(other.events.openStreams()).toBe(1);
    other.events.close();
    let message = await reader.next();
    while (message.kind === 'heartbeat') message = await reader.next();
    expect(message).toEqual({ kind: 'complete' });
    expect(other.events.openStreams()).toBe(0);
  });
});

describe('publishing does not hold a write up', () => {
  const STREAMS = 300;
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it(`hands an event to the streams in later turns, at most ${HANDOVERS_PER_TURN} streams a turn: publish returns before any has it`, async () => {
    const hub = createLiveEventHub({ perKeyLimit: 1, instanceLimit: STREAMS, logger: pino({ level: 'silent' }) });
    try {
      const streams = Array.from({ length: STREAMS }, (_, index) => hub.open(index + 1));
      let received = 0;
      for (const stream of streams) void stream.next().then(() => (received += 1));
      const event = {
        id: 'handed-over',
        type: 'lead.created',
        dealershipId: north.id,
        subject: 'lead',
        recordId: 1,
        occurredAt: new Date(),
      } as const;
      hub.publish(event);
      // Nothing in the publisher's turn, microtasks included.
      for (let tick = 0; tick < 10; tick += 1) await Promise.resolve();
      expect(received).toBe(0);
      await turn();
      expect(received).toBe(HANDOVERS_PER_TURN);
      let turns = 1;
      while (received < STREAMS && turns < STREAMS) {
        await turn();
        turns += 1;
        expect(received).toBeLessThanOrEqual(HANDOVERS_PER_TURN * turns);
      }
      expect(received).toBe(STREAMS);
      expect(turns).toBe(Math.ceil(STREAMS / HANDOVERS_PER_TURN));
    } finally {
      hub.close();
    }
  });

  describe(`with ${STREAMS} streams open, the instance's limit`, () => {
    let busy: { yoga: Yoga; events: LiveEventHub };
    let reader: { key: string };
    const streams: SseReader[] = [];
    /** Verifications of the reader's key: each stream verifies it again as the first step of its work on an event. */
    let readerVerifications = 0;

    beforeAll(async () => {
      // Another instance over the same database, with a verifier that counts the reader's verifications.
      const config = { ...app.config, subscriptionsPerKey: STREAMS, subscriptionsPerInstance: STREAMS, subscriptionHeartbeatMs: 60_000 };
      const verifier = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: config.apiKeyCacheTtlMs });
      const keys: KeyVerifier = {
        ...verifier,
        verify: (key) => {
          if (key === reader.key) readerVerifications += 1;
          return verifier.verify(key);
        },
      };
      const events = createLiveEventHub({
        perKeyLimit: config.subscriptionsPerKey,
        instanceLimit: config.subscriptionsPerInstance,
        logger: pino({ level: 'silent' }),
        keyChanges: keys,
      });
      busy = { yoga: createApp(instanceDeps({ config, db: app.db, now: app.clock.now }, { keys, events, liveEvents: events })), events };
      reader = await makeKey(app.db, { permissions: ['read:lead'] });
      // Closed when this describe ends, not after each test.
      for (let index = 0; index < STREAMS; index += 1) await subscribe(LEAD_CREATED, reader.key, { on: busy, closedBy: streams });
      expect(busy.events.openStreams()).toBe(STREAMS);
    }, 120_000);

    afterAll(async () => {
      await Promise.all(streams.map((stream) => stream.close()));
      busy.events.close();
    });

    it('answers a lead POST before any stream has begun its work on the lead, then every stream is sent it', async () => {
      const dealership = await makeDealership(app.db);
      const writer = await makeKey(app.db, { permissions: ['create:lead'] });
      const order: ('answer' | 'event')[] = [];
      const delivered = streams.map((stream) =>
        stream.nextEvent(30_000).then((event) => {
          order.push('event');
          return event;
        }),
      );
      const verifiedBefore = readerVerifications;
      const response = await busy.yoga.fetch('http://gateway.test/api/v1/leads', {
        method: 'POST',
        headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lead: samplePayload(dealership.id, { name: 'Busy' }) }),
      });
      order.push('answer');
      // No stream had begun its work on the event (verifying its key again) when the answer was made.
      expect(readerVerifications).toBe(verifiedBefore);
      expect(response.status).toBe(201);
      const { id } = await app.db.lead.findFirstOrThrow({ where: { dealership_id: dealership.id } });
      const events = await Promise.all(delivered);
      expect(order[0]).toBe('answer');
      expect(order.length).toBe(STREAMS + 1);
      expect(readerVerifications).toBe(verifiedBefore + STREAMS);
      for (const event of events) expect(event).toMatchObject({ data: { leadCreated: { databaseId: id } } });
    });

    it(`refuses a subscription beyond SUBSCRIPTIONS_PER_INSTANCE (${STREAMS}) for any key, and takes one again once another closes`, async () => {
      const other = await makeKey(app.db, { permissions: ['read:lead'] });
      const refused = await subscribe(LEAD_CREATED, other.key, { on: busy });
      const refusal = await refused.nextEvent();
      expect(refusal.errors?.[0]).toMatchObject({
        message: `This instance already holds ${STREAMS} open subscriptions, its limit: open the subscription again in a moment (another instance may answer it).`,
        extensions: { code: 'UNAVAILABLE', error: 'subscriptions_at_capacity', limit: STREAMS },
      });
      expect(await refused.next()).toEqual({ kind: 'complete' });
      expect(busy.events.openStreams()).toBe(STREAMS);
      await streams.pop()?.close();
      await expect.poll(() => busy.events.openStreams(), { timeout: 2_000 }).toBe(STREAMS - 1);
      await subscribe(LEAD_CREATED, other.key, { on: busy, closedBy: streams });
      expect(busy.events.openStreams()).toBe(STREAMS);
    });
  });
});

describe('resuming with Last-Event-ID', () => {
  const CREATE_LEAD = 'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }';
  let writer: { key: string };

  beforeAll(async () => {
    writer = await makeKey(app.db, { permissions: ['create:lead', 'update:lead'] });
  });

  /** A lead created through the graph, so that its event is stored as every write stores it: answers its id. */
  async function createLead(dealershipId: number, name: string): Promise<number> {
    const created = await app.graphql<{ create_lead: { lead: { id: number } } }>(
      CREATE_LEAD,
      {
        lead: {
          dealership_id: dealershipId,
          category: 'GENERAL_ENQUIRY',
          source: 'Website',
          name,
          email: 'resume@example.com',
          phone: '+61412345678',
        },
      },
      writer.key,
    );
    expect(created.errors).toBeUndefined();
    return created.data?.create_lead.lead.id as number;
  }

  const eventIdOf = async (leadId: number) =>
    (await app.db.recordEvent.findFirstOrThrow({ where: { subject: 'lead', record_id: leadId, type: 'lead.created' } })).event_id;

  it('sends each event with its id (SSE `id:`), the stored event id', async () => {
    const reader = await subscribe(LEAD_CREATED, full.key);
    const id = await createLead(north.id, 'With An Id');
    expect(await reader.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: id } } });
    expect(reader.lastEventId()).toBe(await eventIdOf(id));
  });

  it('sends the events of its field stored after the one named, oldest first, those of its dealerships only, then the live ones, each once', async () => {
    const key = await makeKey(app.db, { permissions: ['read:lead', 'read:personal_data'], dealershipIds: [north.id] });
    const first = await subscribe(LEAD_CREATED, key.key);
    const seen = await createLead(north.id, 'Seen');
    expect(await first.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: seen } } });
    const lastEventId = first.lastEventId() as string;
    await first.close();
    // While the client is away: two of its dealership's leads, one of another, one update (another field's event).
    const missedOne = await createLead(north.id, 'Missed One');
    await createLead(south.id, 'Not Its Dealership');
    const missedTwo = await createLead(north.id, 'Missed Two');
    const updated = await app.graphql(
      'mutation ($id: Int!) { update_lead(id: $id, lead: { name: "Renamed" }) { lead { id: databaseId } } }',
      { id: seen },
      writer.key,
    );
    expect(updated.errors).toBeUndefined();

    const resumed = await subscribe(LEAD_CREATED, key.key, { lastEventId });
    expect(await resumed.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: missedOne, name: 'Missed One' } } });
    expect(resumed.lastEventId()).toBe(await eventIdOf(missedOne));
    expect(await resumed.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: missedTwo, name: 'Missed Two' } } });
    expect(resumed.lastEventId()).toBe(await eventIdOf(missedTwo));
    const live = await createLead(north.id, 'Live Again');
    expect(await resumed.nextEvent()).toMatchObject({ data: { leadCreated: { databaseId: live } } });
    expect(await resumed.eventsWithin(300)).toEqual([]);
  });

  it('refuses an id it does not store for the key (unknown, or of a dealership the key does not reach), holding no stream', async () => {
    const southLead = await createLead(south.id, 'Southern');
    const before = app.events.openStreams();
    for (const lastEventId of ['evt_unknown', await eventIdOf(southLead)]) {
      const reader = await subscribe(LEAD_CREATED, northOnly.key, { lastEventId });
      const refusal = await reader.nextEvent();
      expect(refusal.errors?.[0]).toMatchObject({
        message:
          'Last-Event-ID: no event with this id is stored for this API key: subscribe without it, and read what changed meanwhile with a query.',
        extensions: { code: 'BAD_USER_INPUT', error: 'unknown_last_event_id', field: 'Last-Event-ID' },
      });
      expect(await reader.next()).toEqual({ kind: 'complete' });
      expect(app.events.openStreams()).toBe(before);
    }
  });

  it(`refuses an id more than ${RESUME_LIMIT} events of its field behind, and takes one ${RESUME_LIMIT} behind`, async () => {
    const key = await makeKey(app.db, { permissions: ['read:car'] });
    const car = await makeCar(app.db, north.id);
    // Stored as a write stores them, oldest first: the first has RESUME_LIMIT + 1 after it, the second RESUME_LIMIT.
    await app.db.recordEvent.createMany({
      data: Array.from({ length: RESUME_LIMIT + 2 }, (_, index) => ({
        event_id: `evt_behind_${index}`,
        type: 'car.updated',
        dealership_id: north.id,
        subject: 'car',
        record_id: car.id,
        occurred_at: new Date(),
      })),
    });
    const tooFar = await subscribe('subscription { carUpdated { databaseId } }', key.key, { lastEventId: 'evt_behind_0' });
    expect((await tooFar.nextEvent()).errors?.[0]).toMatchObject({
      message: `Last-Event-ID: more than ${RESUME_LIMIT} events of this subscription came after it: subscribe without it, and read what changed meanwhile with a query.`,
      extensions: { code: 'BAD_USER_INPUT', error: 'last_event_id_too_old', field: 'Last-Event-ID', limit: RESUME_LIMIT },
    });
    expect(await tooFar.next()).toEqual({ kind: 'complete' });
    const openBefore = app.events.openStreams();
    const within = await subscribe('subscription { carUpdated { databaseId } }', key.key, { lastEventId: 'evt_behind_1' });
    expect(await within.nextEvent()).toEqual({ data: { carUpdated: { databaseId: car.id } } });
    expect(within.lastEventId()).toBe('evt_behind_2');
    // Closed, and given time to finish the read in flight, before the file ends and drops the
    // database: a read after that would make the database file again. Closing a stream read through
    // yoga.fetch (no HTTP server to cancel it) can wait for the replay of its missed events, which
    // on a loaded machine takes seconds.
    await within.close();
    await expect.poll(() => app.events.openStreams(), { timeout: 90_000, interval: 200 }).toBe(openBefore);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  });
});
