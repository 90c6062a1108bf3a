// Idempotency-Key on lead creation: a retry gets the first answer and creates nothing; the same key
// with another body is refused; keys belong to one API key; concurrent duplicates still make one
// lead (the unique constraint decides); failed requests leave the key free.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { purgeExpiredIdempotencyRecords, startIdempotencyPurge } from '../src/domain/leads/idempotency.ts';
import { createTestApp, testSettings, type TestApp } from './support/app.ts';
import { makeDealership, makeKey, makeUser } from './support/fixtures.ts';
import { CREATE_LEAD, PDF_BYTES, graphLead, graphRecord, samplePayload, tempStorageDir } from './support/fixtures-leads.ts';

const PATH = '/api/v1/leads';

let app: TestApp;
let storage: ReturnType<typeof tempStorageDir>;
let dealer: { id: number };
let keyA: { id: number; key: string };
let keyB: { id: number; key: string };
let n = 0;

function payload(overrides: Record<string, unknown> = {}) {
  n += 1;
  return samplePayload(dealer.id, { email: `retry.${n}@example.com`, phone: `0414 000 ${String(n).padStart(3, '0')}`, ...overrides });
}

function post(lead: unknown, idempotencyKey: string | undefined, key = keyA.key) {
  return app.request(PATH, { method: 'POST', key, json: { lead }, headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} });
}

async function counts() {
  const [leads, contacts, outbox, records] = await Promise.all([
    app.db.lead.count(),
    app.db.contact.count(),
    app.db.outboxMessage.count(),
    app.db.idempotencyRecord.count(),
  ]);
  return { leads, contacts, outbox, records };
}

beforeAll(async () => {
  storage = tempStorageDir();
  app = await createTestApp({ fileStorage: 'local', fileStorageDir: storage.dir });
  dealer = await makeDealership(app.db);
  await makeUser(app.db, [dealer.id]);
  keyA = await makeKey(app.db, { permissions: ['create:lead', 'read:personal_data'] });
  keyB = await makeKey(app.db, { permissions: ['create:lead', 'read:personal_data'] });
});

afterAll(() => storage.remove());

describe('a retried POST with the same Idempotency-Key', () => {
  it('gets the first answer, status and body, and creates nothing more', async () => {
    const lead = payload({ lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }] });
    const first = await post(lead, 'order-1');
    expect(first.status).toBe(201);
    const firstBody = await first.json();
    const after = await counts();
    const files = storage.files();
    expect(files).toHaveLength(1);

    app.clock.advance(60_000);
    const retry = await post(lead, 'order-1');
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual(firstBody);
    expect(await counts()).toEqual(after);
    expect(storage.files()).toEqual(files);

    const record = await app.db.idempotencyRecord.findUniqueOrThrow({ where: { api_key_id_key: { api_key_id: keyA.id, key: 'order-1' } } });
    expect(record.response_status).toBe(201);
    expect(JSON.parse(record.response_body)).toEqual(firstBody.lead);
  });

  it('recognises the same body whatever the order of its keys', async () => {
    const lead = payload();
    const first = await (await post(lead, 'order-2')).json();
    const reordered = Object.fromEntries(Object.entries(lead).reverse());
    const before = await counts();
    const retry = await post(reordered, 'order-2');
    expect(retry.status).toBe(201);
    expect(await retry.json()).toEqual(first);
    expect(await counts()).toEqual(before);
  });

  it('answers the first response even after the lead changed', async () => {
    const lead = payload();
    const first = await (await post(lead, 'order-3')).json();
    await app.db.lead.update({ where: { id: first.lead.id }, data: { lead_state: 'won' } });
    expect(await (await post(lead, 'order-3')).json()).toEqual(first);
  });

  it('with a different body is 422 idempotency_key_reused on both doors, and creates nothing', async () => {
    await post(payload(), 'order-4');
    const before = await counts();
    const other = payload();
    const response = await post(other, 'order-4');
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: 'idempotency_key_reused',
      message: 'This Idempotency-Key was already used by this API key for a different request; use a new key for a new request.',
    });
    const graph = await app.request('/graphql', {
      method: 'POST',
      key: keyA.key,
      headers: { 'idempotency-key': 'order-4' },
      json: { query: CREATE_LEAD, variables: { lead: graphLead(other) } },
    });
    const result = await graph.json();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'idempotency_key_reused' });
    expect(await counts()).toEqual(before);
  });

  it('is per API key: another key with the same Idempotency-Key creates its own lead', async () => {
    const lead = payload();
    const first = await (await post(lead, 'shared-key', keyA.key)).json();
    const second = await post(lead, 'shared-key', keyB.key);
    expect(second.status).toBe(201);
    const body = await second.json();
    expect(body.lead.id).not.toBe(first.lead.id);
    // The same person: the second lead joins the first one's contact.
    expect(body.lead.contact_id).toBe(first.lead.contact_id);
  });

  it('gives the GraphQL door the answer the REST door got', async () => {
    const lead = payload();
    const rest = await (await post(lead, 'cross-door')).json();
    const graph = await app.request('/graphql', {
      method: 'POST',
      key: keyA.key,
      headers: { 'idempotency-key': 'cross-door' },
      json: { query: CREATE_LEAD, variables: { lead: graphLead(lead) } },
    });
    const result = await graph.json();
    expect(result.errors).toBeUndefined();
    // The same stored answer, in each door's spelling of the category.
    expect(result.data.create_lead).toEqual({ lead: graphRecord(rest.lead) });
  });

  it('answers a graph client the payment’s date on a replay, from the stored payment, while the REST body keeps the spec’s payment', async () => {
    const lead = payload({ payment_attributes: { amount: 42.5, external_transaction_id: 'txn_replay' } });
    const rest = await (await post(lead, 'payment-date')).json();
    expect(Object.keys(rest.lead.payment).sort()).toEqual(['amount', 'car_id', 'external_transaction_id', 'id', 'payment_processor_id']);
    const stored = await app.db.leadPayment.findUniqueOrThrow({ where: { id: rest.lead.payment.id } });
    // The retry replays the stored JSON, which has no payment date: the graph's LeadPayment reads the row's.
    const graph = await app.request('/graphql', {
      method: 'POST',
      key: keyA.key,
      headers: { 'idempotency-key': 'payment-date' },
      json: {
        query:
          'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId payment { __typename id: databaseId amount created_at } } } }',
        variables: { lead: graphLead(lead) },
      },
    });
    const result = await graph.json();
    expect(result.errors).toBeUndefined();
    expect(result.data.create_lead.lead).toEqual({
      id: rest.lead.id,
      payment: { __typename: 'LeadPayment', id: stored.id, amount: 42.5, created_at: stored.created_at.toISOString() },
    });
  });

  it('without the header, the same body twice is two leads', async () => {
    const lead = payload();
    const before = await counts();
    const first = await (await post(lead, undefined)).json();
    const second = await (await post(lead, undefined)).json();
    expect(second.lead.id).not.toBe(first.lead.id);
    expect((await counts()).leads).toBe(before.leads + 2);
  });
});

describe('a failed request', () => {
  it('leaves its Idempotency-Key free, so the corrected request can use it', async () => {
    const before = await counts();
    const wrong = await post(payload({ category: 'Complaint' }), 'order-5');
    expect(wrong.status).toBe(422);
    expect(await counts()).toEqual(before);
    const right = await post(payload(), 'order-5');
    expect(right.status).toBe(201);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'my key'],
    ['blank', '   '],
  ])('an Idempotency-Key %s is 422 naming the header', async (_label, value) => {
    const before = await counts();
    const response = await post(payload(), value);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      error: 'invalid_input',
      message: 'Idempotency-Key: must be 1 to 255 visible ASCII characters',
      field: 'Idempotency-Key',
    });
    expect(await counts()).toEqual(before);
  });
});

describe('concurrent POSTs with the same Idempotency-Key', () => {
  it('create one lead and all get its answer', async () => {
    const lead = payload({ lead_files_attributes: [{ file_type: 'other', file: PDF_BYTES.toString('base64') }] });
    const before = await counts();
    const filesBefore = storage.files().length;
    const responses = await Promise.all(Array.from({ length: 6 }, () => post(lead, 'burst-1')));
    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(201));
    const bodies = await Promise.all(responses.map((response) => response.json()));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    // One lead, one contact, one customer e-mail and one dealership notification, one record, one file.
    expect(await counts()).toEqual({
      leads: before.leads + 1,
      contacts: before.contacts + 1,
      outbox: before.outbox + 2,
      records: before.records + 1,
    });
    expect(storage.files()).toHaveLength(filesBefore + 1);
  });

  it('with different bodies create one lead; the others are refused', async () => {
    const before = await counts();
    const responses = await Promise.all(Array.from({ length: 4 }, () => post(payload(), 'burst-2')));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect((await response.json()).error).toBe('idempotency_key_reused');
    }
    expect((await counts()).leads).toBe(before.leads + 1);
  });
});

describe('expiry (IDEMPOTENCY_TTL_HOURS)', () => {
  const HOUR = 3_600_000;

  it('is 24 hours unless set; the setting is whole hours', () => {
    expect(app.config.idempotencyTtlMs).toBe(24 * HOUR);
    expect(loadConfig({ ...testSettings, IDEMPOTENCY_TTL_HOURS: '48' }).idempotencyTtlMs).toBe(48 * HOUR);
    for (const bad of ['0', '1.5', '-1', 'a day', '8761']) {
      expect(() => loadConfig({ ...testSettings, IDEMPOTENCY_TTL_HOURS: bad }), bad).toThrow(
        /IDEMPOTENCY_TTL_HOURS must be a whole number of hours from 1 to 8760/,
      );
    }
  });

  it('a replay within the lifetime gets the first answer; after it, the key is free: a new lead, whatever the body', async () => {
    const lead = payload();
    const first = await (await post(lead, 'expiring-1')).json();
    app.clock.advance(24 * HOUR);
    const retry = await post(lead, 'expiring-1');
    expect(await retry.json()).toEqual(first);

    app.clock.advance(1);
    const before = await counts();
    const late = await post(lead, 'expiring-1');
    expect(late.status).toBe(201);
    const lateBody = await late.json();
    expect(lateBody.lead.id).not.toBe(first.lead.id);
    expect(await counts()).toMatchObject({ leads: before.leads + 1, records: before.records });
    // The new request holds the key now: a replay gets its answer, another body is refused.
    expect(await (await post(lead, 'expiring-1')).json()).toEqual(lateBody);
    expect((await post(payload(), 'expiring-1')).status).toBe(422);

    // Expired, a key reused with another body is a new request too, not a 422.
    app.clock.advance(24 * HOUR + 1);
    const other = await post(payload(), 'expiring-1');
    expect(other.status).toBe(201);
  });

  it('expired records are purged in the background, and only those', async () => {
    await app.db.idempotencyRecord.deleteMany();
    await post(payload(), 'purge-old-1');
    await post(payload(), 'purge-old-2');
    app.clock.advance(2 * HOUR);
    await post(payload(), 'purge-young');
    // 24 hours after the first two, one hour after the third... plus one millisecond.
    app.clock.advance(22 * HOUR + 1);
    const ttlMs = app.config.idempotencyTtlMs;
    expect(await purgeExpiredIdempotencyRecords(app.db, app.config.engine, app.clock.now, ttlMs)).toBe(2);
    expect((await app.db.idempotencyRecord.findMany()).map((record) => record.key)).toEqual(['purge-young']);
    expect(await purgeExpiredIdempotencyRecords(app.db, app.config.engine, app.clock.now, ttlMs)).toBe(0);

    // The background task runs a round when it starts, then every interval.
    app.clock.advance(2 * HOUR);
    const purge = startIdempotencyPurge(
      { db: app.db, engine: app.config.engine, now: app.clock.now, ttlMs, logger: pino({ level: 'silent' }) },
      60_000,
    );
    await purge.stop();
    expect(await app.db.idempotencyRecord.count()).toBe(0);
  });

  it('a backlog larger than one purge statement is purged whole', async () => {
    await app.db.idempotencyRecord.deleteMany();
    const createdAt = new Date(app.clock.now().getTime() - 25 * HOUR);
    await app.db.idempotencyRecord.createMany({
      data: Array.from({ length: 2_345 }, (_, i) => ({
        api_key_id: keyA.id,
        key: `backlog-${i}`,
        request_hash: 'x',
        response_status: 201,
        response_body: '{}',
        created_at: createdAt,
      })),
    });
    expect(await purgeExpiredIdempotencyRecords(app.db, app.config.engine, app.clock.now, app.config.idempotencyTtlMs)).toBe(2_345);
    expect(await app.db.idempotencyRecord.count()).toBe(0);
  });
});
