// Webhooks and live subscriptions across three real service processes on one database and one Redis
// (a key prefix of this run's own), each running its webhook worker, as a deployment behind a load
// balancer runs them:
// - 30 changes (cars reserved, leads created) sent to the three in turn: the real receiver
//   (test/support/webhook-receiver.ts, verifying with `standardwebhooks`) gets each webhook-id once,
//   verified; every delivery is delivered at its first attempt; and more than one instance delivered
//   (each logs what its rounds delivered);
// - a receiver answering 500 once: the delivery is retried, by whichever instance claims it, and
//   delivered once, under the same webhook-id;
// - graphql-sse's client of instance B receives `leadCreated` for a lead created through instance A's
//   REST door: A publishes the event on the deployment's Redis channel, B hands it to its streams.
// The workers poll every 100 ms (WEBHOOK_POLL_INTERVAL_MS), so that this takes seconds.
import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { testSettings } from './support/app.ts';
import { createMigratedDatabase, testEngine, type TestDatabase } from './support/database.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { freePort, startService, type RunningService } from './support/processes.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROCESS_TIMEOUT = 60_000;
const CHANGES = 30;
/** How long a webhook or a live event may take to arrive (the workers poll every 100 ms). */
const EVENT_WAIT = { timeout: 10_000, interval: 50 };
const LEAD_CREATED = 'subscription { leadCreated { databaseId dealership_id name } }';

interface Instance {
  service: RunningService;
  /** `http://127.0.0.1:<port>` */
  origin: string;
}

let database: TestDatabase;
let db: Db;
let receiver: WebhookReceiver;
const instances: Instance[] = [];
/** The dealership whose changes are subscribed to by webhook. */
let north: { id: number };
/** Another dealership, whose leads no webhook is subscribed to. */
let south: { id: number };
let writer: string;
let subscriptionId: number;

function instance(index: number): Instance {
  const found = instances[index];
  if (!found) throw new Error(`no instance ${index}`);
  return found;
}

async function call(index: number, path: string, key: string, init: { method: string; json?: unknown }): Promise<Response> {
  return fetch(`${instance(index).origin}${path}`, {
    method: init.method,
    headers: { authorization: `Bearer ${key}`, ...(init.json === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) }),
  });
}

/** Creates a lead through instance `index`'s REST door; its id. */
async function createLead(index: number, dealershipId: number, name: string): Promise<number> {
  const response = await call(index, '/api/v1/leads', writer, {
    method: 'POST',
    json: { lead: samplePayload(dealershipId, { name, email: `${name.toLowerCase().replaceAll(' ', '.')}@example.com` }) },
  });
  const body = (await response.json()) as { lead?: { id: number } };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.lead?.id as number;
}

async function reserveCar(index: number, carId: number): Promise<void> {
  const response = await call(index, `/api/v1/cars/${carId}/reserve?reserved=true`, writer, { method: 'PUT' });
  expect(response.status, await response.text()).toBe(200);
}

/** What each instance's worker logged as delivered, in instance order. */
function deliveredPerInstance(): number[] {
  return instances.map(({ service }) =>
    service.lines.filter((line) => line.msg === 'webhook delivery').reduce((sum, line) => sum + Number(line.delivered), 0),
  );
}

const webhookIds = () => receiver.received.map((received) => String(received.headers['webhook-id']));

// Not on SQLite: one process owns a SQLite file (docs/operations.md, "Several instances"). Three
// processes writing to one file do not work: with this test run there, a lead POST's write timed out
// ("Operation has timed out") waiting on the others and was answered 503 `unavailable`. Several
// instances are a PostgreSQL deployment;
// test/webhooks-instances.test.ts races three workers' claims in one process on both engines.
describe.runIf(testEngine === 'postgresql')('three service processes on one PostgreSQL and one Redis', () => {
  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = createDb(database.url);
    receiver = await startWebhookReceiver();
    north = await makeDealership(db);
    south = await makeDealership(db);
    writer = (await makeKey(db, { permissions: ['create:lead', 'reserve:car'], dealershipIds: [north.id, south.id] })).key;
    // This run's own keys and channel: other runs on the same Redis publish events of the same ids.
    const prefix = `dgw:test:${randomBytes(6).toString('hex')}:`;
    const settings = {
      ...testSettings,
      LOG_LEVEL: 'info',
      // Development mode lets webhooks go over http; the allow-list lets them reach the loopback.
      APP_MODE: 'development',
      SEED_DEMO_DATA: 'false',
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
      WEBHOOK_POLL_INTERVAL_MS: '100',
    };
    const ports = [await freePort(), await freePort(), await freePort()];
    // Each is kept as soon as it listens, so that afterAll stops it even if another failed to start.
    await Promise.all(
      ports.map(async (port) => {
        const service = await startService([], { ...settings, PORT: String(port) });
        instances.push({ service, origin: `http://127.0.0.1:${port}` });
      }),
    );
  }, PROCESS_TIMEOUT);

  afterAll(async () => {
    await Promise.all(instances.map(({ service }) => service.stop()));
    await receiver?.close();
    await db?.$disconnect();
    await database?.drop();
  }, PROCESS_TIMEOUT);

  it(
    'deliver each webhook once between them, more than one of them delivering',
    async () => {
      const manager = (await makeKey(db, { permissions: ['manage:webhook', 'read:car', 'read:lead'], dealershipIds: [north.id] })).key;
      const subscribed = await call(1, '/api/v1/webhook_subscriptions', manager, {
        method: 'POST',
        json: { subscription: { url: receiver.url('/many'), events: ['car.reserved', 'lead.created'] } },
      });
      const created = (await subscribed.json()) as { subscription: { id: number }; secret: string };
      expect(subscribed.status, JSON.stringify(created)).toBe(201);
      subscriptionId = created.subscription.id;
      receiver.secrets = [created.secret];
      const cars = await Promise.all(Array.from({ length: CHANGES / 2 }, () => makeCar(db, north.id)));

      // Three clients, one per instance, each making its share of the changes in turn: reserving a
      // car, then creating a lead.
      await Promise.all(
        [0, 1, 2].map(async (index) => {
          for (let change = index; change < CHANGES; change += instances.length) {
            const car = cars[Math.floor(change / 2)];
            if (change % 2 === 0 && car) await reserveCar(index, car.id);
            else await createLead(index, north.id, `Webhook Lead ${change}`);
          }
        }),
      );

      await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(CHANGES), EVENT_WAIT);
      // A duplicate would come moments after its first: every worker has had a few more rounds.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const ids = webhookIds();
      expect(ids).toHaveLength(CHANGES);
      expect(new Set(ids).size).toBe(CHANGES);
      expect(receiver.received.every((received) => received.verifiedWith.length === 1 && received.answered === 204)).toBe(true);
      const types = receiver.received.map((received) => (JSON.parse(received.body) as { type: string }).type);
      expect(types.filter((type) => type === 'car.reserved')).toHaveLength(CHANGES / 2);
      expect(types.filter((type) => type === 'lead.created')).toHaveLength(CHANGES / 2);

      const rows = await db.webhookDelivery.findMany({ where: { subscription_id: subscriptionId } });
      expect(rows).toHaveLength(CHANGES);
      expect(rows.filter((row) => row.status !== 'delivered' || row.attempts !== 1)).toEqual([]);
      expect(rows.map((row) => row.message_id).sort()).toEqual([...ids].sort());
      expect(await db.webhookAttempt.count({ where: { delivery: { subscription_id: subscriptionId } } })).toBe(CHANGES);

      const perInstance = deliveredPerInstance();
      expect(perInstance.reduce((sum, count) => sum + count, 0)).toBe(CHANGES);
      expect(perInstance.filter((count) => count > 0).length).toBeGreaterThan(1);
      console.info(`webhooks across 3 processes: ${CHANGES} delivered once each, per instance ${perInstance.join('/')}`);
    },
    PROCESS_TIMEOUT,
  );

  it(
    'retry a delivery the receiver failed, and deliver it once, under the same webhook-id',
    async () => {
      const before = receiver.received.length;
      receiver.failNext = [500];
      const car = await makeCar(db, north.id);
      await reserveCar(2, car.id);
      const delivery = await vi.waitFor(async () => {
        const row = await db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: subscriptionId, status: 'pending' } });
        expect(row).toMatchObject({ attempts: 1, last_status: 500, locked_until: null });
        return row;
      }, EVENT_WAIT);
      // The backoff's first wait is 30 s (docs/webhooks.md): the retry is made due now instead, as
      // that much time passing would.
      await db.webhookDelivery.update({ where: { id: delivery.id }, data: { due_at: new Date(Date.now() - 1_000) } });
      await vi.waitFor(
        async () =>
          expect(await db.webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).toMatchObject({
            status: 'delivered',
            attempts: 2,
          }),
        EVENT_WAIT,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const sent = receiver.received.slice(before);
      expect(sent.map((received) => [String(received.headers['webhook-id']), received.answered])).toEqual([
        [delivery.message_id, 500],
        [delivery.message_id, 204],
      ]);
      expect(sent.every((received) => received.verifiedWith.length === 1)).toBe(true);
      const attempts = await db.webhookAttempt.findMany({ where: { delivery_id: delivery.id }, orderBy: { attempt: 'asc' } });
      expect(attempts.map((row) => [row.attempt, row.status])).toEqual([
        [1, 500],
        [2, 204],
      ]);
    },
    PROCESS_TIMEOUT,
  );

  it(
    "hand a lead created through instance A's REST door to graphql-sse's client of instance B, through Redis",
    async () => {
      const reader = (await makeKey(db, { permissions: ['read:lead', 'read:personal_data'], dealershipIds: [south.id] })).key;
      const client = createClient({ url: `${instance(1).origin}/graphql`, headers: { authorization: `Bearer ${reader}` } });
      const results: unknown[] = [];
      let failure: unknown = null;
      let connected = false;
      client.subscribe(
        { query: LEAD_CREATED },
        { next: (value) => results.push(value), error: (error) => (failure = error), complete: () => undefined },
        { connected: () => (connected = true) },
      );
      try {
        // B answers the request once the stream is open in its hub (the subscription opens it before
        // the answer starts): from then on, what B hears is handed to it.
        await vi.waitFor(() => expect({ connected, failure }).toEqual({ connected: true, failure: null }), EVENT_WAIT);
        const id = await createLead(0, south.id, 'Across Processes');
        await vi.waitFor(() => expect({ results, failure }).toMatchObject({ results: [expect.anything()], failure: null }), EVENT_WAIT);
        expect(results).toEqual([{ data: { leadCreated: { databaseId: id, dealership_id: south.id, name: 'Across Processes' } } }]);
      } finally {
        client.dispose();
      }
    },
    PROCESS_TIMEOUT,
  );
});
