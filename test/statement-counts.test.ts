// How many SQL statements each REST path costs on the demo data, uncached and with the key's
// verdict already remembered, as scripts/docs/statement-counts.ts declares (and docs/caching.md shows).
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './support/app.ts';
import { createDemoApp } from './support/demo.ts';
import { STATEMENTS_PER_REQUEST } from '../scripts/docs/statement-counts.ts';
import { samplePayload } from './support/fixtures-leads.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
}, 120_000);

async function statementsFor(method: string, path: string): Promise<number> {
  // The key's first use (lookup, last_used_at) is not the path's cost: warm it first.
  await app.request('/api/v1/apikeys/apikey_details.json', { key });
  app.queries.length = 0;
  const init =
    method === 'POST'
      ? { method, key, json: { lead: samplePayload(1, { stocknum: 'MEL1002' }) } }
      : method === 'PUT'
        ? { method, key }
        : { key };
  const response = await app.request(path, init);
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(400);
  return app.queries.filter((sql) => !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(sql.trim())).length;
}

describe('statements per request, uncached', () => {
  const documented = Object.entries(STATEMENTS_PER_REQUEST);
  it('declares a count for the sample of every REST path', () => {
    expect(documented.length).toBeGreaterThanOrEqual(15);
  });
  for (const [request, { statements: expected }] of documented) {
    it(`${request} runs ${expected} statements`, async () => {
      const [method, path] = request.split(' ') as [string, string];
      expect(await statementsFor(method, path)).toBe(expected);
    });
  }
});

describe('a lead POST with an Idempotency-Key', () => {
  it('runs two statements more than without: the key’s look-up, and its record with the answer', async () => {
    // The same person twice, so that both counted requests join the contact the first one made.
    await statementsFor('POST', '/api/v1/leads');
    const plain = await statementsFor('POST', '/api/v1/leads');
    await app.request('/api/v1/apikeys/apikey_details.json', { key });
    app.queries.length = 0;
    const response = await app.request('/api/v1/leads', {
      method: 'POST',
      key,
      headers: { 'Idempotency-Key': `statement-count-${Date.now()}` },
      json: { lead: samplePayload(1, { stocknum: 'MEL1002' }) },
    });
    expect(response.status).toBe(201);
    expect(app.queries.filter((sql) => !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(sql.trim()))).toHaveLength(plain + 2);
  });
});

describe('a lead POST to a dealership without an enabled webhook subscription', () => {
  it('runs two statements fewer: the event insert counts the subscriptions, so neither their read nor the deliveries INSERT is sent', async () => {
    const subscribed = await statementsFor('POST', '/api/v1/leads');
    const enabled = await app.db.webhookSubscription.findMany({ where: { dealership_id: 1, enabled: true }, select: { id: true } });
    expect(enabled.length).toBeGreaterThan(0);
    await app.db.webhookSubscription.updateMany({ where: { id: { in: enabled.map((row) => row.id) } }, data: { enabled: false } });
    try {
      expect(await statementsFor('POST', '/api/v1/leads')).toBe(subscribed - 2);
    } finally {
      await app.db.webhookSubscription.updateMany({ where: { id: { in: enabled.map((row) => row.id) } }, data: { enabled: true } });
    }
  });
});
