// The receiver docs/webhooks.md shows, run exactly as written (a real Node process) and sent a real
// delivery by the webhook worker: it verifies the service's signature with `standardwebhooks`,
// answers 204 and prints the event; a delivery signed with another secret it answers 400. The
// example must stay within the 15 lines the docs promise.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../scripts/free-port.ts';
import { createPayloadRenderer } from '../src/gateway/webhook-payloads.ts';
import { deliverDueWebhooks } from '../src/notifications/webhook-worker.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { createHttpServer } from '../src/http/server.ts';
import { createLifecycle } from '../src/gateway/lifecycle.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { bareEnvironment, projectDir } from './support/processes.ts';

/** The first ```js block after `heading` in a docs file. */
function codeBlockAfter(file: string, heading: string): string {
  const text = readFileSync(path.join(projectDir, 'docs', file), 'utf8');
  const from = text.indexOf(heading);
  expect(from, `${file} has "${heading}"`).toBeGreaterThan(-1);
  const match = /```js\n([\s\S]*?)```/.exec(text.slice(from));
  expect(match, `${file} has a js block after "${heading}"`).not.toBeNull();
  return match![1]!;
}

interface RunningReceiver {
  url: string;
  printed: () => string;
  stop(): void;
}

/** Runs the example as a module from the project directory (so `standardwebhooks` resolves), on a free port. */
async function runReceiver(source: string, secret: string): Promise<RunningReceiver> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '--eval', source], {
    cwd: projectDir,
    env: bareEnvironment({ WEBHOOK_SECRET: secret, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}/hooks`;
  // Listening once a request is answered at all.
  for (let tries = 0; ; tries += 1) {
    try {
      await fetch(url, { method: 'POST', body: '{}' });
      break;
    } catch (error) {
      if (tries > 100 || child.exitCode !== null) throw new Error(`the receiver did not start: ${output}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return { url, printed: () => output, stop: () => child.kill() };
}

let app: TestApp;
const receivers: RunningReceiver[] = [];

beforeAll(async () => {
  // Development mode: an http receiver is allowed; 127.0.0.1 is on the allow-list.
  app = await createTestApp({ mode: 'development', webhookAllowedAddresses: ['127.0.0.1'] });
  app.clock.set(new Date());
});

afterAll(() => {
  for (const receiver of receivers) receiver.stop();
});

describe('the webhook receiver of docs/webhooks.md', () => {
  const source = codeBlockAfter('webhooks.md', 'A receiver in Node');

  it('is 15 lines at most', () => {
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(15);
  });

  it("verifies the service's deliveries: 204 and the event printed with the right secret, 400 with another", async () => {
    const dealership = await makeDealership(app.db);
    const manager = (await makeKey(app.db, { permissions: ['manage:webhook', 'read:lead'], dealershipIds: [dealership.id] })).key;
    const writer = (await makeKey(app.db, { permissions: ['create:lead'], dealershipIds: [dealership.id] })).key;
    const subscribe = async (url: string): Promise<{ id: number; secret: string }> => {
      const response = await app.request('/api/v1/webhook_subscriptions', {
        method: 'POST',
        key: manager,
        json: { subscription: { url, events: ['lead.created'] } },
      });
      expect(response.status).toBe(201);
      const body = await response.json();
      return { id: body.subscription.id, secret: body.secret };
    };

    // The right secret: the receiver is started with the secret the subscription answered.
    const placeholder = await subscribe('http://127.0.0.1:9/hooks');
    const right = await runReceiver(source, placeholder.secret);
    receivers.push(right);
    await app.db.webhookSubscription.update({ where: { id: placeholder.id }, data: { url: right.url } });
    // The same receiver code told another secret, and sent the deliveries of a second subscription.
    const other = await subscribe('http://127.0.0.1:9/hooks');
    const wrong = await runReceiver(source, `whsec_${randomBytes(24).toString('base64')}`);
    receivers.push(wrong);
    await app.db.webhookSubscription.update({ where: { id: other.id }, data: { url: wrong.url } });

    const created = await app.request('/api/v1/leads', { method: 'POST', key: writer, json: { lead: samplePayload(dealership.id) } });
    expect(created.status).toBe(201);
    const leadId = (await created.json()).lead.id as number;

    const deps = instanceDeps({ config: app.config, db: app.db, now: () => new Date() });
    await deliverDueWebhooks({
      db: app.db,
      config: app.config,
      logger: pino({ level: 'silent' }),
      now: () => new Date(),
      render: createPayloadRenderer(deps, getSchema()),
    });
    const statusOf = async (subscriptionId: number) =>
      (await app.db.webhookDelivery.findFirstOrThrow({ where: { subscription_id: subscriptionId } })).last_status;
    expect(await statusOf(placeholder.id)).toBe(204);
    expect(await statusOf(other.id)).toBe(400);
    expect(right.printed()).toContain(`lead.created ${leadId}`);
    expect(wrong.printed()).not.toContain('lead.created');
  });
});

describe('the @defer client of docs/incremental-delivery.md', () => {
  const source = codeBlockAfter('incremental-delivery.md', 'A client in Node');

  it('prints the car, then its deferred figures, read in parts from the service over HTTP', async () => {
    const dealership = await makeDealership(app.db);
    const car = await makeCar(app.db, dealership.id, { make: 'Mazda', model: 'CX-5' });
    const key = (await makeKey(app.db, { permissions: ['read:car'], dealershipIds: [dealership.id] })).key;
    const lifecycle = createLifecycle();
    const settings = {
      bodyLimitBytes: app.config.bodyLimitBytes,
      httpHeadersTimeoutMs: 5_000,
      httpRequestTimeoutMs: 10_000,
      httpKeepAliveTimeoutMs: 5_000,
      httpMaxConnections: 10,
    };
    const yoga = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { lifecycle }));
    const gateway = createHttpServer(yoga, settings, pino({ level: 'silent' }), lifecycle);
    const { port } = await gateway.listen(0, '127.0.0.1');
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', source], {
        cwd: projectDir,
        env: bareEnvironment({ GATEWAY_URL: `http://127.0.0.1:${port}`, API_KEY: key, CAR_ID: String(car.id) }),
        timeout: 20_000,
      });
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('car {"make":"Mazda","model":"CX-5"}');
      expect(lines[1]).toMatch(/^figures \{"performance":\{"days_old":\d+,"views":0,"leads_count":0\}\}$/);
      expect(lines).toHaveLength(2);
    } finally {
      gateway.cutConnections();
      await gateway.drain();
    }
  });
});
