// Spec 4.16 on both doors: JSON and real form-encoded bodies, the key as Bearer or ?token=, the
// stored call (normalised numbers, location, dealership, car), replays sequential and concurrent,
// restricted keys, 422 naming the missing number, 401/403, and the car's performance figure.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeContact, makeDealership, makeKey, makeLocation } from './support/fixtures.ts';
import { makeLead } from './support/fixtures-events.ts';

const PATH = '/api/v1/webhooks/phone_calls_webhooks/generic';
const WEBHOOK = `mutation ($called: String!, $caller: String!, $call_id: String) {
  phone_call_webhook(called_number: $called, caller_number: $caller, call_id: $call_id) { status id: databaseId }
}`;
const DAY = 86_400_000;

let app: TestApp;
let north: { id: number };
let south: { id: number };
let northYard: { id: number };
let southYard: { id: number };
let providerKey: string;
let northProviderKey: string;
let otherKey: string;
let readCarKey: string;

// Each test gets its own caller number, so dedupe windows and lead matches never cross tests.
let callerSequence = 0;
let caller: { local: string; e164: string };

beforeAll(async () => {
  app = await createTestApp();
  north = await makeDealership(app.db);
  south = await makeDealership(app.db);
  northYard = await makeLocation(app.db, north.id, { tracking_phone: '+61293744000' });
  southYard = await makeLocation(app.db, south.id, { tracking_phone: '+61395551234' });
  providerKey = (await makeKey(app.db, { permissions: ['create:phone_call'] })).key;
  northProviderKey = (await makeKey(app.db, { permissions: ['create:phone_call'], dealershipIds: [north.id] })).key;
  otherKey = (await makeKey(app.db, { permissions: ['read:car', 'create:lead'] })).key;
  readCarKey = (await makeKey(app.db, { permissions: ['read:car'] })).key;
});

beforeEach(() => {
  callerSequence += 1;
  const digits = String(345_000 + callerSequence);
  caller = { local: `0412 ${digits.slice(0, 3)} ${digits.slice(3)}`, e164: `+61412${digits}` };
});

function post(body: Record<string, string>, key: string = providerKey) {
  return app.request(PATH, { method: 'POST', key, json: body });
}

function postForm(body: Record<string, string>, query = '') {
  return app.request(`${PATH}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(body).toString(),
  });
}

describe('POST /api/v1/webhooks/phone_calls_webhooks/generic', () => {
  it('records a JSON-posted call against the location whose tracking number was called, and answers 202', async () => {
    const response = await post({ called_number: '(02) 9374 4000', caller_number: caller.local });
    expect(response.status).toBe(202);
    const body = await response.json();
    expect(body).toEqual({ status: 'accepted', id: expect.any(Number) });
    const row = await app.db.phoneCall.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toEqual({
      id: body.id,
      dedupe_key: expect.stringMatching(/^[0-9a-f]{64}$/),
      called_number: '+61293744000',
      caller_number: caller.e164,
      dealership_id: north.id,
      location_id: northYard.id,
      car_id: null,
      received_at: app.clock.now(),
    });
  });

  it('accepts a real form-encoded body with the key as ?token=', async () => {
    const response = await postForm({ called_number: '+61 3 9555 1234', caller_number: caller.local }, `?token=${providerKey}`);
    expect(response.status).toBe(202);
    const body = await response.json();
    expect(body.status).toBe('accepted');
    const row = await app.db.phoneCall.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toMatchObject({
      called_number: '+61395551234',
      caller_number: caller.e164,
      dealership_id: south.id,
      location_id: southYard.id,
    });
  });

  it("takes a Twilio-style form's CallSid as the call id and ignores the fields it does not use", async () => {
    const form = {
      CallSid: 'CA0123456789abcdef',
      AccountSid: 'AC1',
      Direction: 'inbound',
      called_number: '0293744000',
      caller_number: caller.local,
    };
    const first = await (await postForm(form, `?token=${providerKey}`)).json();
    app.clock.advance(10 * 60_000);
    // Same CallSid ten minutes later: still the same call.
    const again = await (await postForm(form, `?token=${providerKey}`)).json();
    expect(first.status).toBe('accepted');
    expect(again).toEqual({ status: 'duplicate', id: first.id });
  });

  describe('a repeated delivery', () => {
    it('with the same call_id counts once, however late', async () => {
      const call = { called_number: '0293744000', caller_number: caller.local, call_id: `call-${callerSequence}` };
      const first = await (await post(call)).json();
      app.clock.advance(DAY);
      const second = await post(call);
      expect(second.status).toBe(202);
      expect(await second.json()).toEqual({ status: 'duplicate', id: first.id });
      expect(await app.db.phoneCall.count({ where: { caller_number: caller.e164 } })).toBe(1);
    });

    it('without a call id counts once within the minute, even across a minute boundary', async () => {
      app.clock.set(new Date(Math.ceil(app.clock.now().getTime() / 60_000) * 60_000 + 50_000)); // hh:mm:50
      const call = { called_number: '0293744000', caller_number: caller.local };
      const first = await (await post(call)).json();
      app.clock.advance(5_000);
      expect(await (await post(call)).json()).toEqual({ status: 'duplicate', id: first.id });
      app.clock.advance(20_000); // hh:(mm+1):15, the next window
      expect(await (await post(call)).json()).toEqual({ status: 'duplicate', id: first.id });
      expect(await app.db.phoneCall.count({ where: { caller_number: caller.e164 } })).toBe(1);
    });

    it('without a call id is a new call two minutes later, or from another caller', async () => {
      const call = { called_number: '0293744000', caller_number: caller.local };
      const first = await (await post(call)).json();
      const otherCaller = await (await post({ ...call, caller_number: '0498 765 432' })).json();
      expect(otherCaller.status).toBe('accepted');
      app.clock.advance(2 * 60_000 + 1);
      const later = await (await post(call)).json();
      expect(later.status).toBe('accepted');
      expect(later.id).not.toBe(first.id);
      expect(await app.db.phoneCall.count({ where: { caller_number: caller.e164 } })).toBe(2);
    });

    it('sent concurrently is recorded once: the unique key settles the race', async () => {
      const calls: Record<string, string>[] = [
        { called_number: '0293744000', caller_number: caller.local, call_id: `race-${callerSequence}` },
        { called_number: '0395551234', caller_number: caller.local },
      ];
      for (const call of calls) {
        const responses = await Promise.all(Array.from({ length: 6 }, () => post(call)));
        expect(responses.map((response) => response.status)).toEqual(Array(6).fill(202));
        const bodies = (await Promise.all(responses.map((response) => response.json()))) as { status: string; id: number }[];
        expect(bodies.filter((body) => body.status === 'accepted')).toHaveLength(1);
        expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
      }
      expect(await app.db.phoneCall.count({ where: { caller_number: caller.e164 } })).toBe(2);
    });

    it('from another key is not taken for a repeat: one key cannot pre-empt the calls another reports', async () => {
      const call = { called_number: '0293744000', caller_number: caller.local, call_id: `shared-${callerSequence}` };
      const byNorth = await (await post(call, northProviderKey)).json();
      const byProvider = await (await post(call, providerKey)).json();
      expect(byNorth.status).toBe('accepted');
      expect(byProvider.status).toBe('accepted');
      expect(byProvider.id).not.toBe(byNorth.id);
    });
  });

  describe('attribution to a car', () => {
    it("goes to the car of the caller's most recent lead at that dealership within 30 days", async () => {
      const older = await makeCar(app.db, north.id);
      const newer = await makeCar(app.db, north.id);
      const elsewhere = await makeCar(app.db, south.id);
      const now = app.clock.now().getTime();
      await makeLead(app.db, north.id, { phone: caller.e164, car_id: older.id, created_at: new Date(now - 10 * DAY) });
      await makeLead(app.db, north.id, { phone: caller.e164, car_id: newer.id, created_at: new Date(now - 3 * DAY) });
      await makeLead(app.db, north.id, { phone: caller.e164, car_id: null, created_at: new Date(now - DAY) });
      await makeLead(app.db, south.id, { phone: caller.e164, car_id: elsewhere.id, created_at: new Date(now - 60_000) });

      const { id } = await (await post({ called_number: '0293744000', caller_number: caller.local })).json();
      expect((await app.db.phoneCall.findUniqueOrThrow({ where: { id } })).car_id).toBe(newer.id);
    });

    it("matches the lead's contact's phone too", async () => {
      const car = await makeCar(app.db, north.id);
      const contact = await makeContact(app.db, north.id, { phone: caller.e164 });
      await makeLead(app.db, north.id, {
        phone: null,
        contact_id: contact.id,
        car_id: car.id,
        created_at: new Date(app.clock.now().getTime() - DAY),
      });
      const { id } = await (await post({ called_number: '0293744000', caller_number: caller.local })).json();
      expect((await app.db.phoneCall.findUniqueOrThrow({ where: { id } })).car_id).toBe(car.id);
    });

    it('does not go to a car enquired about more than 30 days ago', async () => {
      const car = await makeCar(app.db, north.id);
      await makeLead(app.db, north.id, { phone: caller.e164, car_id: car.id, created_at: new Date(app.clock.now().getTime() - 31 * DAY) });
      const { id } = await (await post({ called_number: '0293744000', caller_number: caller.local })).json();
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id } })).toMatchObject({ dealership_id: north.id, car_id: null });
    });

    it("counts in that car's performance phone_calls figure", async () => {
      const car = await makeCar(app.db, north.id);
      await makeLead(app.db, north.id, { phone: caller.e164, car_id: car.id, created_at: new Date(app.clock.now().getTime() - DAY) });
      const performance = async () =>
        (await (await app.request(`/api/v1/cars/${car.id}/performance.json`, { key: readCarKey })).json()).phone_calls;
      expect(await performance()).toBe(0);
      await post({ called_number: '0293744000', caller_number: caller.local, call_id: `perf-${callerSequence}` });
      await post({ called_number: '0293744000', caller_number: caller.local, call_id: `perf-${callerSequence}` });
      expect(await performance()).toBe(1);
      await post({ called_number: '0293744000', caller_number: caller.local, call_id: `perf-${callerSequence}-2` });
      expect(await performance()).toBe(2);
    });
  });

  describe('a call that cannot be attributed', () => {
    it('to a number that is no tracking number is still recorded, without a dealership', async () => {
      const response = await post({ called_number: '0290001111', caller_number: caller.local });
      expect(response.status).toBe(202);
      const { id } = await response.json();
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id } })).toMatchObject({
        called_number: '+61290001111',
        dealership_id: null,
        location_id: null,
        car_id: null,
      });
    });

    it('from a key restricted to other dealerships is recorded without the dealership, and answered alike', async () => {
      const car = await makeCar(app.db, south.id);
      await makeLead(app.db, south.id, { phone: caller.e164, car_id: car.id, created_at: new Date(app.clock.now().getTime() - DAY) });
      const foreign = await post({ called_number: '0395551234', caller_number: caller.local }, northProviderKey);
      const own = await post({ called_number: '0293744000', caller_number: caller.local }, northProviderKey);
      expect(foreign.status).toBe(202);
      const foreignBody = await foreign.json();
      const ownBody = await own.json();
      expect(Object.keys(foreignBody)).toEqual(Object.keys(ownBody));
      expect(foreignBody.status).toBe(ownBody.status);
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id: foreignBody.id } })).toMatchObject({
        called_number: '+61395551234',
        dealership_id: null,
        location_id: null,
        car_id: null,
      });
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id: ownBody.id } })).toMatchObject({
        dealership_id: north.id,
        location_id: northYard.id,
      });
    });

    it('keeps numbers that are not valid phone numbers: their digits, or the text of a withheld caller', async () => {
      const withheld = await (await post({ called_number: '0293744000', caller_number: ' Anonymous ' })).json();
      const short = await (await post({ called_number: '12-34', caller_number: caller.local })).json();
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id: withheld.id } })).toMatchObject({
        caller_number: 'anonymous',
        dealership_id: north.id,
        car_id: null,
      });
      expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id: short.id } })).toMatchObject({
        called_number: '1234',
        dealership_id: null,
      });
    });
  });

  const invalid: [string, Record<string, string>, string, string][] = [
    ['no called_number', { caller_number: '0412345678' }, 'called_number', 'called_number: is required'],
    ['a blank called_number', { called_number: '  ', caller_number: '0412345678' }, 'called_number', 'called_number: is required'],
    ['no caller_number', { called_number: '0293744000' }, 'caller_number', 'caller_number: is required'],
    [
      'a caller_number that is too long',
      { called_number: '0293744000', caller_number: '1'.repeat(65) },
      'caller_number',
      'caller_number: must be at most 64 characters',
    ],
    [
      'a call_id that is too long',
      { called_number: '0293744000', caller_number: '0412345678', call_id: 'c'.repeat(129) },
      'call_id',
      'call_id: must be at most 128 characters',
    ],
  ];

  it.each(invalid)('answers 422 naming the field for %s, and records nothing', async (_label, body, field, message) => {
    const before = await app.db.phoneCall.count();
    const response = await post(body);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', message, field });
    expect(await app.db.phoneCall.count()).toBe(before);
  });

  it('answers 422 for a form body that lacks a number', async () => {
    const response = await postForm({ caller_number: caller.local }, `?token=${providerKey}`);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ error: 'invalid_input', message: 'called_number: is required', field: 'called_number' });
  });

  it.each([
    ['no token', PATH, {}],
    ['an invalid ?token=', `${PATH}?token=dlr_not_a_real_key`, {}],
    ['an invalid bearer', PATH, { authorization: 'Bearer dlr_not_a_real_key' }],
  ])('answers 401 unauthorized with %s, and records nothing', async (_label, path, headers) => {
    const before = await app.db.phoneCall.count();
    const response = await app.request(path, {
      method: 'POST',
      headers,
      json: { called_number: '0293744000', caller_number: caller.local },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: 'unauthorized',
      message: 'A valid API key is required: send "Authorization: Bearer <key>".',
    });
    expect(await app.db.phoneCall.count()).toBe(before);
  });

  it('answers 403 forbidden to a key without create:phone_call, by header or by ?token=', async () => {
    const byHeader = await post({ called_number: '0293744000', caller_number: caller.local }, otherKey);
    const byQuery = await postForm({ called_number: '0293744000', caller_number: caller.local }, `?token=${otherKey}`);
    for (const response of [byHeader, byQuery]) {
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({
        error: 'forbidden',
        message: 'This API key does not have the permission this operation needs.',
      });
    }
  });
});

describe('Mutation.phone_call_webhook', () => {
  it('answers what REST answers for the same call and key', async () => {
    const call = { called_number: '0293744000', caller_number: caller.local, call_id: `graph-${callerSequence}` };
    const first = await (await post(call)).json();
    const restRepeat = await (await post(call)).json();
    const graph = await app.graphql<{ phone_call_webhook: { status: string; id: number } }>(
      WEBHOOK,
      { called: call.called_number, caller: call.caller_number, call_id: call.call_id },
      providerKey,
    );
    expect(graph.errors).toBeUndefined();
    expect(graph.data!.phone_call_webhook).toEqual(restRepeat);
    expect(restRepeat).toEqual({ status: 'duplicate', id: first.id });
  });

  it('records a new call', async () => {
    const graph = await app.graphql<{ phone_call_webhook: { status: string; id: number } }>(
      WEBHOOK,
      { called: '0293744000', caller: caller.local },
      providerKey,
    );
    expect(graph.data!.phone_call_webhook.status).toBe('accepted');
    expect(await app.db.phoneCall.findUniqueOrThrow({ where: { id: graph.data!.phone_call_webhook.id } })).toMatchObject({
      location_id: northYard.id,
    });
  });

  it('answers the same errors with their codes', async () => {
    const invalid = await app.graphql(WEBHOOK, { caller: caller.local }, providerKey);
    expect(invalid.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'called_number' });
    const forbidden = await app.graphql(WEBHOOK, { called: '0293744000', caller: caller.local }, otherKey);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const anonymous = await app.graphql(WEBHOOK, { called: '0293744000', caller: caller.local });
    expect(anonymous.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
