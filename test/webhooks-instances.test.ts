// Three instances sharing one database deliver every webhook exactly once: three workers, each with
// its own database client (as three processes have), run their rounds at the same time over 30
// pending deliveries; the real receiver sees each webhook-id once, verified, and every delivery is
// marked delivered with one attempt. In one process, so that the claims race round against round on
// both engines; test/instances-processes.test.ts has three real service processes do it (PostgreSQL).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { createPayloadRenderer } from '../src/gateway/webhook-payloads.ts';
import { deliverDueWebhooks } from '../src/notifications/webhook-worker.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

const DELIVERIES = 30;
let app: TestApp;
let receiver: WebhookReceiver;
const clients: Db[] = [];

beforeAll(async () => {
  app = await createTestApp({ mode: 'development', webhookAllowedAddresses: ['127.0.0.1'] });
  app.clock.set(new Date());
  receiver = await startWebhookReceiver();
  const dealership = await makeDealership(app.db);
  const writer = (await makeKey(app.db, { permissions: ['reserve:car'], dealershipIds: [dealership.id] })).key;
  const manager = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:car'], dealershipIds: [dealership.id] })).key;
  const response = await app.request('/api/v1/webhook_subscriptions', {
    method: 'POST',
    key: manager,
    json: { subscription: { url: receiver.url('/many'), events: ['car.reserved'] } },
  });
  receiver.secrets = [(await response.json()).secret];
  for (let i = 0; i < DELIVERIES; i += 1) {
    const car = await makeCar(app.db, dealership.id);
    expect((await app.request(`/api/v1/cars/${car.id}/reserve?reserved=true`, { method: 'PUT', key: writer })).status).toBe(200);
  }
  for (let i = 0; i < 3; i += 1) clients.push(createDb(app.config.databaseUrl));
});

afterAll(async () => {
  await receiver.close();
  await Promise.all(clients.map((client) => client.$disconnect()));
});

describe('three instances on one database', () => {
  it('send each delivery once', async () => {
    expect(await app.db.webhookDelivery.count({ where: { status: 'pending' } })).toBe(DELIVERIES);
    const now = () => new Date();
    const instances = clients.map((db) => {
      const deps = instanceDeps({ config: app.config, db, now });
      return {
        db,
        config: app.config,
        logger: pino({ level: 'silent' }),
        now,
        render: createPayloadRenderer(deps, getSchema()),
        policy: { batchSize: 5 },
      };
    });
    const reports = await Promise.all(
      instances.map(async (deps) => {
        let delivered = 0;
        for (let round = 0; round < 20; round += 1) delivered += (await deliverDueWebhooks(deps)).delivered;
        return delivered;
      }),
    );
    expect(reports.reduce((sum, count) => sum + count, 0)).toBe(DELIVERIES);
    const ids = receiver.received.map((received) => String(received.headers['webhook-id']));
    expect(ids).toHaveLength(DELIVERIES);
    expect(new Set(ids).size).toBe(DELIVERIES);
    expect(receiver.received.every((received) => received.verifiedWith.length === 1)).toBe(true);
    const rows = await app.db.webhookDelivery.findMany({ select: { status: true, attempts: true } });
    expect(rows.every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);
    expect(await app.db.webhookAttempt.count()).toBe(DELIVERIES);
  });
});
