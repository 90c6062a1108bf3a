// Execution slots (src/gateway/execution-slots.ts): at most EXECUTION_SLOTS operations execute at once,
// on both doors; the others wait, in a queue of EXECUTION_QUEUE_MAX for EXECUTION_WAIT_MS, past which
// they get the instance's 503 `unavailable`. Execution is held at a gate: each app's client stops every
// statement on `cars` while the gate is shut, so an operation executing sits at the gate until it opens.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { BUSY_RETRY_AFTER_SECONDS } from '../src/errors.ts';
import { executionSlots, type ExecutionSlots } from '../src/gateway/execution-slots.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { createMetrics } from '../src/telemetry/metrics.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { readSse } from './support/sse.ts';

let app: TestApp;
let key: string;
let carId: number;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  app = await createTestApp();
  const dealership = await makeDealership(app.db);
  carId = (await makeCar(app.db, dealership.id)).id;
  key = (await makeKey(app.db, { permissions: ['read:car', 'read:lead'] })).key;
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const CARS_STATEMENT = /\bFROM\s+[`"]\w+[`"]\.[`"]cars[`"]/;

interface GatedApp {
  yoga: Yoga;
  slots: ExecutionSlots;
  /** Statements on `cars` stopped at the gate now. */
  atGate(): number;
  /** The most operations seen executing at once when a statement on `cars` was sent. */
  mostInUse(): number;
  shut(): void;
  open(): void;
  /** The next statement on `cars` fails as a connection cut under it would. */
  failNext(): void;
}

/** An instance over the test's database with its own settings of the slots, and a gate on its statements. */
function gatedApp(executionSlots: Config['executionSlots']): GatedApp {
  let gate: Promise<void> | null = null;
  let release = () => {};
  let stopped = 0;
  let most = 0;
  let failing = false;
  let slots: ExecutionSlots | undefined;
  const db = createDb(app.config.databaseUrl, {
    aroundStatement: async (sql, run) => {
      if (!CARS_STATEMENT.test(sql)) return run();
      most = Math.max(most, slots?.inUse() ?? 0);
      if (failing) {
        failing = false;
        throw new Error('Connection terminated unexpectedly');
      }
      if (gate) {
        stopped += 1;
        await gate;
        stopped -= 1;
      }
      return run();
    },
  });
  closers.push(() => db.$disconnect());
  const metrics = createMetrics({ db, now: app.clock.now, logger: pino({ level: 'silent' }) });
  const yoga = createApp(
    instanceDeps(
      { config: { ...app.config, executionSlots }, db, now: app.clock.now },
      {
        events: app.events,
        liveEvents: app.events,
        metrics: {
          ...metrics,
          readExecutionSlots(read) {
            slots = read as ExecutionSlots;
            metrics.readExecutionSlots(read);
          },
        },
      },
    ),
  );
  if (!slots) throw new Error('the app did not hand its slots to the metrics');
  const own = slots;
  return {
    yoga,
    slots: own,
    atGate: () => stopped,
    mostInUse: () => most,
    shut() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    open() {
      gate = null;
      release();
    },
    failNext() {
      failing = true;
    },
  };
}

/** Waits until `done` holds, failing after a while. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 10_000) throw new Error(`not reached: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

function graphqlRead(target: GatedApp, init: { signal?: AbortSignal } = {}): Promise<Response> {
  return Promise.resolve(
    target.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query ($id: String!) { car(id: $id) { id: databaseId } }', variables: { id: String(carId) } }),
      ...init,
    }),
  );
}

function restRead(target: GatedApp): Promise<Response> {
  return Promise.resolve(
    target.yoga.fetch(`http://gateway.test/api/v1/cars/${carId}/performance.json`, { headers: { authorization: `Bearer ${key}` } }),
  );
}

async function expectBusy(response: Response, door: 'graphql' | 'rest'): Promise<void> {
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe(String(BUSY_RETRY_AFTER_SECONDS));
  const body = (await response.json()) as Record<string, unknown>;
  const message = 'This instance is executing as many operations as it takes at once: send the request again after Retry-After seconds.';
  if (door === 'rest') expect(body).toMatchObject({ error: 'unavailable', message });
  else
    expect(body).toMatchObject({
      errors: [{ message, extensions: { code: 'UNAVAILABLE', error: 'unavailable', retry_after: BUSY_RETRY_AFTER_SECONDS } }],
    });
}

describe('execution slots', () => {
  it('executes at most EXECUTION_SLOTS operations at once on both doors, queues the rest, and answers them all', async () => {
    const target = gatedApp({ slots: 2, queueMax: 3, waitMs: 60_000 });
    target.shut();
    const answers = [graphqlRead(target), restRead(target), graphqlRead(target), restRead(target), graphqlRead(target)];
    await until(() => target.atGate() === 2 && target.slots.waiting() === 3, 'two at the gate, three waiting');
    await settle();
    expect(target.atGate()).toBe(2);
    expect(target.slots.inUse()).toBe(2);
    // Past the queue: refused at once, with the instance's 503, on both doors.
    await expectBusy(await graphqlRead(target), 'graphql');
    await expectBusy(await restRead(target), 'rest');
    // What never executes an operation never waits for a slot.
    expect((await target.yoga.fetch('http://gateway.test/health')).status).toBe(200);
    expect((await target.yoga.fetch('http://gateway.test/ready')).status).toBe(200);
    expect(app.config.explorers).toBe(true);
    expect((await target.yoga.fetch('http://gateway.test/graphql', { headers: { accept: 'text/html' } })).status).toBe(200);
    target.open();
    const statuses = await Promise.all(answers.map(async (answer) => (await answer).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(target.mostInUse()).toBe(2);
    expect([target.slots.inUse(), target.slots.waiting()]).toEqual([0, 0]);
  });

  it('with the default settings, answers 32 clients at once without a 503', async () => {
    const defaults = app.config.executionSlots;
    expect(defaults).toEqual({ slots: 8, queueMax: 200, waitMs: 10_000 });
    const target = gatedApp(defaults);
    target.shut();
    const answers = Array.from({ length: 32 }, (_, index) => (index % 2 === 0 ? graphqlRead(target) : restRead(target)));
    await until(() => target.atGate() === 8 && target.slots.waiting() === 24, 'eight at the gate, 24 waiting');
    target.open();
    const statuses = await Promise.all(answers.map(async (answer) => (await answer).status));
    expect(statuses).toEqual(Array.from({ length: 32 }, () => 200));
    expect(target.mostInUse()).toBe(8);
  });

  it('answers an operation that waited EXECUTION_WAIT_MS the 503, and runs nothing of it', async () => {
    const target = gatedApp({ slots: 1, queueMax: 5, waitMs: 150 });
    target.shut();
    const first = graphqlRead(target);
    await until(() => target.atGate() === 1, 'one at the gate');
    const started = Date.now();
    await expectBusy(await restRead(target), 'rest');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(target.slots.waiting()).toBe(0);
    expect(target.atGate()).toBe(1);
    target.open();
    expect((await first).status).toBe(200);
    expect(target.slots.inUse()).toBe(0);
  });

  it('gives the slot back after an operation that failed, whatever the failure', async () => {
    // One slot and no queue: a slot not given back would refuse the next request at once.
    const target = gatedApp({ slots: 1, queueMax: 0, waitMs: 1_000 });
    const missing = await target.yoga.fetch('http://gateway.test/api/v1/cars/999999/performance.json', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(missing.status).toBe(404);
    target.failNext();
    expect((await restRead(target)).status).toBe(503);
    target.failNext();
    const graph = await graphqlRead(target);
    expect(((await graph.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('UNAVAILABLE');
    expect(target.slots.inUse()).toBe(0);
    expect((await restRead(target)).status).toBe(200);
    expect((await graphqlRead(target)).status).toBe(200);
  });

  it('gives the slot back when execution itself rejects, and to the next waiter', async () => {
    const slots = executionSlots({ slots: 1, queueMax: 1, waitMs: 1_000 });
    type Execute = (args: object) => Promise<unknown>;
    const wrapped = (executeFn: Execute): Execute => {
      let set: Execute | undefined;
      const onExecute = slots.plugin.onExecute as unknown as (payload: object) => void;
      onExecute({ args: { contextValue: {} }, executeFn, setExecuteFn: (fn: Execute) => (set = fn) });
      if (!set) throw new Error('no execute function set');
      return set;
    };
    const failing = wrapped(() => new Promise((_, reject) => setTimeout(() => reject(new Error('execution failed')), 20)));
    const next = wrapped(async () => ({ data: { ok: true } }));
    const [first, second] = [failing({}), next({})];
    expect(slots.waiting()).toBe(1);
    await expect(first).rejects.toThrow('execution failed');
    await expect(second).resolves.toEqual({ data: { ok: true } });
    await new Promise((resolve) => setImmediate(resolve));
    expect([slots.inUse(), slots.waiting()]).toEqual([0, 0]);
  });

  it('takes a waiter whose client went away out of the queue, and keeps the slot of a running one until it ends', async () => {
    const target = gatedApp({ slots: 1, queueMax: 1, waitMs: 60_000 });
    target.shut();
    const running = new AbortController();
    const first = graphqlRead(target, { signal: running.signal }).catch(() => null);
    await until(() => target.atGate() === 1, 'one at the gate');
    const waiting = new AbortController();
    const second = graphqlRead(target, { signal: waiting.signal }).catch(() => null);
    await until(() => target.slots.waiting() === 1, 'one waiting');
    waiting.abort();
    await second;
    expect(target.slots.waiting()).toBe(0);
    // The running operation goes on to its end, and keeps its slot meanwhile: the bound still holds.
    running.abort();
    await settle();
    expect(target.slots.inUse()).toBe(1);
    const third = restRead(target);
    await until(() => target.slots.waiting() === 1, 'the next one waiting');
    expect(target.atGate()).toBe(1);
    target.open();
    await first;
    expect((await third).status).toBe(200);
    expect([target.slots.inUse(), target.slots.waiting()]).toEqual([0, 0]);
    expect(target.mostInUse()).toBe(1);
  });

  it('holds no slot for an open subscription stream', async () => {
    const target = gatedApp({ slots: 1, queueMax: 0, waitMs: 1_000 });
    const streams = await Promise.all(
      [1, 2].map(async () => {
        const response = await target.yoga.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'subscription { carUpdated { databaseId } }' }),
        });
        expect(response.status).toBe(200);
        const reader = readSse(response);
        expect((await reader.next()).kind).toBe('heartbeat');
        return reader;
      }),
    );
    try {
      expect(target.slots.inUse()).toBe(0);
      expect((await graphqlRead(target)).status).toBe(200);
      expect((await restRead(target)).status).toBe(200);
    } finally {
      for (const stream of streams) await stream.close();
    }
  });

  it('bounds nothing with EXECUTION_SLOTS=0', () => {
    const unbounded = executionSlots({ slots: 0, queueMax: 0, waitMs: 1 });
    expect(unbounded.plugin.onExecute).toBeUndefined();
  });

  it('reports the slots in use and the operations waiting on /metrics', async () => {
    const metrics = createMetrics({ db: app.db, now: app.clock.now, logger: pino({ level: 'silent' }) });
    metrics.readExecutionSlots({ inUse: () => 3, waiting: () => 7 });
    const text = await metrics.scrape();
    expect(text).toMatch(/^gateway_execution_slots_in_use 3$/m);
    expect(text).toMatch(/^gateway_execution_waiting_operations 7$/m);
  });
});
