// @defer and @stream on /graphql, read by a real multipart client (meros) and as SSE: a car first, its
// performance figures after. Deferred parts are costed, guarded, masked and coded like the same fields
// undeferred; the caches keep only whole answers; the REST door never answers in parts.
import { Writable } from 'node:stream';
import { meros } from 'meros/browser';
import pino from 'pino';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { readSse } from './support/sse.ts';
import { makePaymentProcessor } from './support/fixtures-catalogue.ts';
import { WHOLE_LIST_BOUND } from '../src/domain/whole-lists.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';

let app: TestApp;
let dealershipId: number;
let carId: number;
let carKey: string;

const MULTIPART = 'multipart/mixed; deferSpec=20220824, application/json';

interface Payload {
  data?: Record<string, unknown>;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  hasNext?: boolean;
  incremental?: {
    data?: Record<string, unknown>;
    items?: unknown[];
    path: (string | number)[];
    label?: string;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  }[];
}

function post(
  query: string,
  init: { key?: string; accept?: string; variables?: Record<string, unknown>; yoga?: Yoga } = {},
): Promise<Response> {
  return Promise.resolve(
    (init.yoga ?? app.yoga).fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: init.accept ?? MULTIPART,
        ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
      },
      body: JSON.stringify({ query, variables: init.variables }),
    }),
  );
}

/** Every part of a multipart answer, as meros reads them; a whole answer (JSON) is its one part. */
async function parts(response: Response): Promise<Payload[]> {
  const read = await meros<Payload>(response);
  // meros hands back a body that is not multipart as it came (whatwg-node's Response, not the global one).
  if (!(Symbol.asyncIterator in read)) return [(await read.json()) as Payload];
  const all: Payload[] = [];
  for await (const part of read) {
    if (!part.json) throw new Error(`a part that is not JSON: ${String(part.body)}`);
    all.push(part.body);
  }
  return all;
}

const CAR_PAGE = `query CarPage($id: String!) {
  car(id: $id) {
    databaseId make model
    ... @defer(label: "figures") { performance { days_old views leads_count photos_count } }
  }
}`;

beforeAll(async () => {
  app = await createTestApp();
  dealershipId = (await makeDealership(app.db, { slug: 'defer-motors' })).id;
  carId = (await makeCar(app.db, dealershipId, { make: 'Mazda', model: 'CX-5' })).id;
  for (let n = 0; n < 3; n += 1) await makeCar(app.db, dealershipId);
  carKey = (await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [dealershipId] })).key;
  await makePaymentProcessor(app.db, dealershipId);
});

describe('@defer', () => {
  it('sends the car first and its deferred figures after, as multipart/mixed (meros)', async () => {
    const response = await post(CAR_PAGE, { key: carKey, variables: { id: String(carId) } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed/);
    const [first, ...rest] = await parts(response);
    expect(first).toEqual({ data: { car: { databaseId: carId, make: 'Mazda', model: 'CX-5' } }, hasNext: true });
    const incremental = rest.flatMap((payload) => payload.incremental ?? []);
    expect(incremental).toEqual([
      {
        data: { performance: { days_old: expect.any(Number), views: 0, leads_count: 0, photos_count: 0 } },
        path: ['car'],
        label: 'figures',
      },
    ]);
    expect(rest.at(-1)?.hasNext).toBe(false);
  });

  it('sends the same payloads as SSE when Accept asks for text/event-stream', async () => {
    const response = await post(CAR_PAGE, { key: carKey, accept: 'text/event-stream', variables: { id: String(carId) } });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const sse = readSse(response);
    const first = (await sse.nextEvent()) as Payload;
    expect(first).toEqual({ data: { car: { databaseId: carId, make: 'Mazda', model: 'CX-5' } }, hasNext: true });
    const second = (await sse.nextEvent()) as Payload;
    expect(second.incremental?.[0]?.path).toEqual(['car']);
    expect(second.incremental?.[0]?.data).toHaveProperty('performance.views', 0);
    await sse.close();
  });

  it('is refused before running when Accept admits no incremental answer (406)', async () => {
    const response = await post(CAR_PAGE, { key: carKey, accept: 'application/json', variables: { id: String(carId) } });
    expect(response.status).toBe(406);
    const body = (await response.json()) as Payload;
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_ACCEPTABLE', error: 'not_acceptable' });
  });

  it('guards a deferred field like the same field undeferred: the secret a key may not read is refused (403)', async () => {
    const processorKey = (await makeKey(app.db, { permissions: ['show:payment_processor'], dealershipIds: [dealershipId] })).key;
    const query = (deferred: boolean) =>
      `{ car_payment_processors(id: "${carId}") { payment_processors { merchant_id ... ${deferred ? '@defer' : ''} { authorization_key } } } }`;
    const plain = (await (await post(query(false), { key: processorKey, accept: 'application/json' })).json()) as Payload;
    const deferredResponse = await post(query(true), { key: processorKey });
    const requestId = deferredResponse.headers.get('request-id');
    const deferredParts = await parts(deferredResponse);
    const deferredErrors = deferredParts.flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.errors ?? []);
    const described = (errors: Payload['errors']) =>
      errors?.map(({ message, extensions }) => ({ message, code: extensions?.code, error: extensions?.error }));
    expect(described(plain.errors)).toEqual([{ message: expect.any(String), code: 'FORBIDDEN', error: 'forbidden' }]);
    expect(described(deferredErrors)).toEqual(described(plain.errors));
    expect(JSON.stringify(deferredParts)).not.toContain('sk_live_');
    // The fragment's data is nulled, not the record already sent.
    expect(deferredParts[0]?.data).toEqual({ car_payment_processors: { payment_processors: [{ merchant_id: expect.any(String) }] } });
    expect(deferredParts.flatMap((payload) => payload.incremental ?? []).map((part) => part.data)).toEqual([null]);
    // Quoting the request id, as every error does.
    expect(deferredErrors[0]?.extensions?.request_id).toBe(requestId);
  });

  it('guards a deferred relation like the same relation undeferred: null without read:lead', async () => {
    const all = await parts(await post(`{ car(id: "${carId}") { make ... @defer { leads(first: 1) { totalCount } } } }`, { key: carKey }));
    expect(all.flatMap((payload) => payload.incremental ?? [])).toEqual([{ data: { leads: null }, path: ['car'] }]);
  });

  it('masks an unexpected failure inside a deferred part, with its code (the figures table is gone)', async () => {
    const logged: { level: number; request_id?: string; err?: { message?: string } }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line) as (typeof logged)[number]);
        done();
      },
    });
    const broken = await createTestApp({}, { logger: pino({ level: 'info' }, sink) });
    const brokenDealership = (await makeDealership(broken.db)).id;
    const brokenCar = (await makeCar(broken.db, brokenDealership)).id;
    const key = (await makeKey(broken.db, { permissions: ['read:car'] })).key;
    await broken.db.$executeRawUnsafe('DROP TABLE car_view_days');
    const answer = await broken.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MULTIPART, authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: CAR_PAGE, variables: { id: String(brokenCar) } }),
    });
    const all = await parts(answer);
    expect(all[0]?.data).toEqual({ car: { databaseId: brokenCar, make: 'Toyota', model: 'Corolla' } });
    const errors = all.flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.errors ?? []);
    expect(errors.map(({ message, extensions }) => ({ message, code: extensions?.code }))).toEqual([
      { message: 'Unexpected error.', code: 'INTERNAL_SERVER_ERROR' },
    ]);
    expect(JSON.stringify(all)).not.toMatch(/car_view_days|SELECT|prisma|sqlite|postgres|\.ts:\d+/i);
    // Logged whole, as any unexpected error, under the answer's request id.
    const errorLines = logged.filter((line) => line.level === 50);
    expect(errorLines.map((line) => line.request_id)).toEqual([answer.headers.get('request-id')]);
    expect(errorLines[0]?.err?.message).toMatch(/car_view_days/);

    // The same in a subscription's event: each event is payloads too.
    const subscribed = await broken.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: 'subscription { carUpdated { databaseId ... @defer { performance { views } } } }' }),
    });
    const events = readSse(subscribed);
    expect(await events.next()).toEqual({ kind: 'heartbeat' });
    const occurredAt = new Date();
    broken.events.publish({
      id: 'defer-1',
      type: 'car.updated',
      dealershipId: brokenDealership,
      subject: 'car',
      recordId: brokenCar,
      occurredAt,
    });
    expect(await events.nextEvent()).toEqual({ data: { carUpdated: { databaseId: brokenCar } }, hasNext: true });
    const later = (await events.nextEvent()) as Payload;
    expect(later.incremental?.[0]?.errors?.map(({ message, extensions }) => ({ message, code: extensions?.code }))).toEqual([
      { message: 'Unexpected error.', code: 'INTERNAL_SERVER_ERROR' },
    ]);
    expect(JSON.stringify(later)).not.toMatch(/car_view_days|SELECT|prisma/i);
    await events.close();
  });
});

describe('Apollo Client', () => {
  it('shows the car while its figures are on the way, then the whole car page', async () => {
    const client = new ApolloClient({
      link: new HttpLink({
        uri: 'http://localhost/graphql',
        headers: { authorization: `Bearer ${carKey}` },
        fetch: async (input, init) => app.yoga.fetch(new Request(input, init)),
      }),
      cache: new InMemoryCache(),
      incrementalHandler: new Defer20220824Handler(),
    });
    const seen: { dataState: string; data: unknown }[] = [];
    await new Promise<void>((resolve, reject) => {
      const subscription = client.watchQuery({ query: gql(CAR_PAGE), variables: { id: String(carId) } }).subscribe({
        next: (result) => {
          if (result.dataState === 'empty') return;
          seen.push({ dataState: result.dataState, data: result.data });
          if (result.dataState === 'complete') {
            subscription.unsubscribe();
            resolve();
          }
        },
        error: reject,
      });
    });
    expect(seen[0]).toEqual({
      dataState: 'streaming',
      data: { car: { __typename: 'Car', databaseId: carId, make: 'Mazda', model: 'CX-5' } },
    });
    expect(seen.at(-1)?.data).toMatchObject({ car: { make: 'Mazda', performance: { views: 0, leads_count: 0 } } });
  });
});

describe('@stream', () => {
  it('streams a page of cars after the first, within the same first/last caps', async () => {
    const query = `{ cars(first: 4, dealership_id: ${dealershipId}) { edges @stream(initialCount: 1) { node { databaseId } } } }`;
    const all = await parts(await post(query, { key: carKey }));
    const first = all[0]?.data as { cars: { edges: unknown[] } };
    expect(first.cars.edges).toHaveLength(1);
    const streamed = all.flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.items ?? []);
    expect(streamed).toHaveLength(3);
    const over = (await (
      await post(`{ cars(first: 101) { edges @stream(initialCount: 1) { node { databaseId } } } }`, { key: carKey })
    ).json()) as Payload;
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'first' });
  });

  it('streams a whole list no further than its bound, as the list undeferred', async () => {
    const busy = (await makeCar(app.db, dealershipId)).id;
    const lead = { dealership_id: dealershipId, car_id: busy, category: 'General Enquiry', source: 'Website' };
    await app.db.lead.createMany({ data: Array.from({ length: WHOLE_LIST_BOUND + 5 }, () => lead) });
    const leadsOf = (directive: string) => `{ car_performance(id: "${busy}") { leads ${directive} { databaseId } leads_truncated } }`;
    const plain = (await (await post(leadsOf(''), { key: carKey, accept: 'application/json' })).json()) as Payload;
    const all = await parts(await post(leadsOf('@stream(initialCount: 0)'), { key: carKey }));
    const first = all[0]?.data as { car_performance: { leads: unknown[]; leads_truncated: boolean } };
    const streamed = all.flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.items ?? []);
    expect(streamed).toHaveLength(WHOLE_LIST_BOUND);
    expect({ ...first.car_performance, leads: [...first.car_performance.leads, ...streamed] }).toEqual(plain.data?.car_performance);
    expect(first.car_performance.leads_truncated).toBe(true);
  });
});

describe('the cost of a deferred part', () => {
  const costly = (directive: string, streamed = '') =>
    `{ cars(first: 100) { edges ${streamed} { node { databaseId ... ${directive} { leads(first: 100) { edges { node { databaseId } } } } } } } }`;

  it('is counted as if the directives were absent: refused before anything runs, with the same figures', async () => {
    const refusal = async (query: string) => {
      const { request_id: _id, ...extensions } =
        ((await (await post(query, { key: carKey })).json()) as Payload).errors?.[0]?.extensions ?? {};
      return extensions;
    };
    const plain = await refusal(costly(''));
    expect(plain).toMatchObject({ code: 'BAD_REQUEST', error: 'query_too_costly', limit: 'cost' });
    expect(await refusal(costly('@defer'))).toEqual(plain);
    expect(await refusal(costly('@defer', '@stream(initialCount: 0)'))).toEqual(plain);
  });

  it('is charged once for the whole operation, as the same operation undeferred', async () => {
    const remaining = (response: Response) => Number(/"cost";r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]);
    const query = (directive: string) => `{ car(id: "${carId}") { make ... ${directive} { performance { views } } } }`;
    const before = remaining(await post(query(''), { key: carKey, accept: 'application/json' }));
    const deferred = await post(query('@defer'), { key: carKey });
    await parts(deferred.clone());
    const afterDeferred = remaining(deferred);
    const afterPlain = remaining(await post(query(''), { key: carKey, accept: 'application/json' }));
    expect(before - afterDeferred).toBeGreaterThan(0);
    expect(before - afterDeferred).toBe(afterDeferred - afterPlain);
  });
});

describe('the caches', () => {
  let cached: Yoga;
  beforeAll(() => {
    cached = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { readCache: inMemoryReadCache() }));
  });

  it('keep a deferred answer only once whole, and serve it whole, as JSON when Accept admits it, with no statement', async () => {
    const variables = { id: String(carId) };
    const first = await parts(await post(CAR_PAGE, { key: carKey, variables, yoga: cached }));
    expect(first[0]?.hasNext).toBe(true);
    app.queries.length = 0;
    const hit = await post(CAR_PAGE, { key: carKey, variables, yoga: cached });
    expect(hit.headers.get('content-type')).toMatch(/^application\/json/);
    const again = await parts(hit);
    expect(app.queries).toEqual([]);
    expect(again).toEqual([
      {
        data: {
          car: {
            databaseId: carId,
            make: 'Mazda',
            model: 'CX-5',
            performance: { days_old: expect.any(Number), views: 0, leads_count: 0, photos_count: 0 },
          },
        },
      },
    ]);
    // Only multipart admitted: the whole answer is its one part.
    expect(await parts(await post(CAR_PAGE, { key: carKey, variables, yoga: cached, accept: 'multipart/mixed' }))).toEqual(again);
    // Only JSON admitted: the same document is refused as before it was kept, since a miss would answer in parts.
    expect((await post(CAR_PAGE, { key: carKey, variables, yoga: cached, accept: 'application/json' })).status).toBe(406);
  });

  it('never keep a partial answer: one whose reader left after the first part runs again in parts', async () => {
    const query = `query Left { car(id: "${carId}") { model ... @defer { performance { leads_count } } } }`;
    const read = await meros<Payload>(await post(query, { key: carKey, yoga: cached }));
    if (read instanceof Response) throw new Error('not multipart');
    expect((await read.next()).value?.body).toMatchObject({ hasNext: true });
    await read.return(undefined);
    app.queries.length = 0;
    const again = await parts(await post(query, { key: carKey, yoga: cached }));
    expect(app.queries.length).toBeGreaterThan(0);
    expect(again[0]?.hasNext).toBe(true);
  });

  it('never keep a deferred answer with an error in a part', async () => {
    const key = (await makeKey(app.db, { permissions: ['show:payment_processor'], dealershipIds: [dealershipId] })).key;
    const query = `{ car_payment_processors(id: "${carId}") { payment_processors { merchant_id ... @defer { authorization_key } } } }`;
    await parts(await post(query, { key, yoga: cached }));
    app.queries.length = 0;
    const again = await parts(await post(query, { key, yoga: cached }));
    expect(app.queries.length).toBeGreaterThan(0);
    expect(again.flatMap((payload) => payload.incremental ?? []).flatMap((part) => part.errors ?? [])).toHaveLength(1);
  });

  it('give a streamed GET no ETag and no compression: its parts are sent as they come', async () => {
    const search = new URLSearchParams({ query: CAR_PAGE.replace('make', 'year make'), variables: JSON.stringify({ id: String(carId) }) });
    const response = await cached.fetch(`http://gateway.test/graphql?${search}`, {
      headers: { authorization: `Bearer ${carKey}`, accept: MULTIPART, 'accept-encoding': 'br, gzip' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBeNull();
    expect(response.headers.get('content-encoding')).toBeNull();
    const all = await parts(response);
    expect(all[0]?.hasNext).toBe(true);
  });
});

describe('what stays as it was', () => {
  it('the REST door never answers in parts, whatever Accept says', async () => {
    const response = await app.yoga.fetch(`http://gateway.test/api/v1/cars/${carId}/performance.json`, {
      headers: { authorization: `Bearer ${carKey}`, accept: MULTIPART },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toHaveProperty('views', 0);
  });

  it('introspection with a key is answered in an operation of its own, never in a deferred run of the whole schema', async () => {
    const query = `{ __schema { queryType { name } } car(id: "${carId}") { make ... @defer { model } } }`;
    const body = (await (await post(query, { key: carKey })).json()) as Payload;
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', error: 'invalid_input' });
  });
});

describe('the request record', () => {
  it('is finished when the last payload is sent: after slow deferred figures, not with the car', async () => {
    const lines: { msg: string; status?: number; door?: string; error_code?: string | null }[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
        done();
      },
    });
    let release = (): void => undefined;
    const slowViews = new Promise<void>((resolve) => (release = resolve));
    // The figures' view counts wait for the test: the car is answered, its figures are not yet.
    const slow = new Proxy(app.db, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (property !== 'carViewDay' || typeof value !== 'object' || value === null) return value;
        return new Proxy(value, {
          get: (model, method) => {
            const original: unknown = Reflect.get(model, method);
            if (method !== 'groupBy' || typeof original !== 'function') return original;
            return (...args: unknown[]) => slowViews.then(() => (original as (...a: unknown[]) => unknown).apply(model, args));
          },
        });
      },
    });
    const logged = createApp(instanceDeps({ config: app.config, db: slow, now: app.clock.now }, { logger: pino({ level: 'info' }, sink) }));
    const requests = () => lines.filter((line) => line.msg === 'request');
    // A key of every dealership reads through the client given (a scoped one is built over it).
    const everyDealership = (await makeKey(app.db, { permissions: ['read:car'] })).key;
    const read = await meros<Payload>(await post(CAR_PAGE, { key: everyDealership, yoga: logged, variables: { id: String(carId) } }));
    if (!(Symbol.asyncIterator in read)) throw new Error('not multipart');
    expect((await read.next()).value?.body).toMatchObject({ data: { car: { make: 'Mazda' } }, hasNext: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(requests()).toEqual([]);
    release();
    const rest: Payload[] = [];
    for await (const part of read) rest.push(part.body);
    expect(rest.at(-1)?.hasNext).toBe(false);
    await vi.waitFor(() => expect(requests()).toHaveLength(1));
    expect(requests()[0]).toMatchObject({ status: 200, door: 'query car', error_code: null });
  });
});
