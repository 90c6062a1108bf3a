// One clock: a service process whose clock runs 150 s fast (test/support/skewed-clock.mjs shifts its
// Date) keeps every rule that compares times across requests as if its clock were right, because the
// rules read the database's time (src/db/clock.ts):
// - a phone call reported to the skewed instance and again to a correct one is stored once (PostgreSQL:
//   two instances on one database);
// - a sign-on token it issues lives the documented 10 minutes by the database's clock;
// - the 3-day lead rule holds at the database's time, not 150 s early.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { databaseNow } from '../src/db/clock.ts';
import { PARTNER_TOKEN_TTL_MS } from '../src/domain/partner-sign-on.ts';
import { LEAD_UPDATE_WINDOW_MS } from '../src/domain/leads/values.ts';
import { testSettings } from './support/app.ts';
import { createMigratedDatabase, testEngine, type TestDatabase } from './support/database.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { makeStoredLead } from './support/fixtures-leads.ts';
import { freePort, startService, type RunningService } from './support/processes.ts';

const SKEW_MS = 150_000;
const preload = path.join(import.meta.dirname, 'support', 'skewed-clock.mjs');

let database: TestDatabase;
let db: Db;
let key: string;
let dealershipId: number;
let userEmail: string;
const instances: { service: RunningService; port: number }[] = [];

async function startInstance(skewMs: number): Promise<{ service: RunningService; port: number }> {
  const port = await freePort();
  const service = await startService([], {
    ...testSettings,
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    ...(skewMs !== 0 ? { NODE_OPTIONS: `--import=${preload}`, TEST_CLOCK_SKEW_MS: String(skewMs) } : {}),
  });
  const instance = { service, port };
  instances.push(instance);
  return instance;
}

function call(port: number, method: string, pathname: string, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

let skewed: { service: RunningService; port: number };

beforeAll(async () => {
  database = await createMigratedDatabase();
  db = createDb(database.url);
  dealershipId = (await makeDealership(db)).id;
  userEmail = (await makeUser(db, [dealershipId])).email;
  key = (await makeKey(db, { permissions: ['create:phone_call', 'create:partner_token', 'update:lead'] })).key;
  skewed = await startInstance(SKEW_MS);
}, 120_000);

afterAll(async () => {
  await Promise.all(instances.map(({ service }) => service.stop()));
  await db.$disconnect();
  await database.drop();
});

describe('an instance whose clock is 150 s fast', () => {
  it('learns the offset to the database clock at start', () => {
    const line = skewed.service.lines.find((entry) => entry.msg === 'database clock read: the rules use its time');
    expect(Math.abs(Number(line?.offset_ms) + SKEW_MS)).toBeLessThan(10_000);
  });

  it('issues sign-on tokens that live 10 minutes by the database clock', async () => {
    const response = await call(skewed.port, 'POST', '/api/v1/partner/tokens', { email: userEmail });
    expect(response.status).toBe(201);
    const { expires_at } = (await response.json()) as { expires_at: string };
    const lifetime = new Date(expires_at).getTime() - (await databaseNow(db, testEngine)).getTime();
    // By its own clock it would be 12.5 minutes; some seconds pass between the answer and the reading.
    expect(lifetime).toBeLessThanOrEqual(PARTNER_TOKEN_TTL_MS);
    expect(lifetime).toBeGreaterThan(PARTNER_TOKEN_TTL_MS - 60_000);
  });

  it('applies the 3-day lead rule by the database clock', async () => {
    const at = (await databaseNow(db, testEngine)).getTime();
    // One minute inside the window by the database's clock (90 s outside it by the skewed one) …
    const young = await makeStoredLead(db, dealershipId, { created_at: new Date(at - LEAD_UPDATE_WINDOW_MS + 60_000) });
    // … and one minute outside it.
    const old = await makeStoredLead(db, dealershipId, { created_at: new Date(at - LEAD_UPDATE_WINDOW_MS - 60_000) });
    expect((await call(skewed.port, 'PUT', `/api/v1/leads/${young.id}`, { lead: { message: 'still open' } })).status).toBe(200);
    const late = await call(skewed.port, 'PUT', `/api/v1/leads/${old.id}`, { lead: { message: 'too late' } });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: 'lead_too_old' });
  });
});

describe.skipIf(testEngine !== 'postgresql')('a skewed and a correct instance on one PostgreSQL', () => {
  it('store one phone call reported to both once', async () => {
    const correct = await startInstance(0);
    const report = { called_number: '03 9000 1234', caller_number: '0412 555 000' };
    const first = await call(skewed.port, 'POST', '/api/v1/webhooks/phone_calls_webhooks/generic', report);
    expect(first.status).toBe(202);
    const firstBody = (await first.json()) as { status: string; id: number };
    expect(firstBody.status).toBe('accepted');
    const again = await call(correct.port, 'POST', '/api/v1/webhooks/phone_calls_webhooks/generic', report);
    expect(await again.json()).toEqual({ status: 'duplicate', id: firstBody.id });
    // And the other way round, for a second call.
    const other = { called_number: '03 9000 1234', caller_number: '0412 555 001' };
    const fromCorrect = (await (await call(correct.port, 'POST', '/api/v1/webhooks/phone_calls_webhooks/generic', other)).json()) as {
      status: string;
      id: number;
    };
    expect(fromCorrect.status).toBe('accepted');
    expect(await (await call(skewed.port, 'POST', '/api/v1/webhooks/phone_calls_webhooks/generic', other)).json()).toEqual({
      status: 'duplicate',
      id: fromCorrect.id,
    });
    expect(await db.phoneCall.count()).toBe(2);
  }, 120_000);
});
