// Rows written by one raw INSERT (src/db/insert-rows.ts) instead of Prisma's createMany, which Prisma 7
// compiles anew on every call: no module of the service calls createMany any more, and what insertRows
// writes reads back through Prisma exactly as Prisma writes it, on either engine.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { insertRowReturning, insertRows } from '../src/db/insert-rows.ts';
import { Prisma as PrismaValues } from '../src/generated/prisma/sqlite/client.ts';
import type { Prisma } from '../src/db/client.ts';
import { parsedJson } from '../src/lib/json.ts';
import { migratedDatabaseForFile } from './support/migrated-database.ts';
import { typescriptSources } from './support/source-files.ts';

const root = path.resolve(import.meta.dirname, '..');

const testDatabase = migratedDatabaseForFile();

describe('insertRows', () => {
  it('is how the service writes several rows at once: no module under src/ calls createMany or createManyAndReturn', () => {
    const files = typescriptSources('src');
    expect(files.length).toBeGreaterThan(100);
    // A nested `createMany` inside a create's data is part of that create's plan, which Prisma keeps.
    const calls = files.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (/\.createMany(AndReturn)?\s*\(/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(calls).toEqual([]);
  });

  it('writes text, numbers, instants and nulls that read back as the same rows Prisma writes', async () => {
    const at = new Date('2026-11-27T10:11:12.345Z');
    const row = (recipient: string) => ({
      kind: 'insert_rows_test',
      lead_id: null,
      recipient,
      subject: "Ünïcode — “quotes” and 'apostrophes'",
      body: 'line one\nline two',
      due_at: at,
      attempts: 3,
      created_at: new Date(at.getTime() + 1),
      traceparent: null,
    });
    await testDatabase.db.outboxMessage.create({ data: row('by-prisma@example.com') });
    expect(await insertRows(testDatabase.db, 'outbox_messages', [row('raw-1@example.com'), row('raw-2@example.com')])).toBe(2);
    const stored = await testDatabase.db.outboxMessage.findMany({ where: { kind: 'insert_rows_test' }, orderBy: { id: 'asc' } });
    expect(stored.map((message) => message.recipient)).toEqual(['by-prisma@example.com', 'raw-1@example.com', 'raw-2@example.com']);
    const [byPrisma, ...raw] = stored.map(({ id: _id, recipient: _recipient, ...rest }) => rest);
    expect(byPrisma).toMatchObject({ due_at: at, attempts: 3, lead_id: null, status: 'pending' });
    for (const written of raw) expect(written).toEqual(byPrisma);
    // Instants compare in SQL as Prisma's do: the raw rows are due exactly when the Prisma row is.
    expect(await testDatabase.db.outboxMessage.count({ where: { kind: 'insert_rows_test', due_at: at } })).toBe(3);
  });

  it('writes nothing for no rows, and refuses rows that do not name the same columns', async () => {
    expect(await insertRows(testDatabase.db, 'pending_lead_files', [])).toBe(0);
    const at = new Date();
    await expect(
      insertRows(testDatabase.db, 'pending_lead_files', [
        { storage_key: 'insert-rows/a', created_at: at },
        { storage_key: 'insert-rows/b' },
      ]),
    ).rejects.toThrow('insertRows(pending_lead_files): every row must name the columns storage_key, created_at');
    expect(await testDatabase.db.pendingLeadFile.count({ where: { storage_key: { startsWith: 'insert-rows/' } } })).toBe(0);
  });

  it('insertRowReturning writes one row as insertRows does and answers what it is asked, a subquery included', async () => {
    const at = new Date('2026-11-27T15:16:17.890Z');
    const dealership = await testDatabase.db.dealership.create({ data: { name: 'Insert Rows Motors', slug: 'insert-rows-motors' } });
    const fields = { type: 'lead.created', dealership_id: dealership.id, subject: 'lead', record_id: 7, occurred_at: at };
    const byPrisma = await testDatabase.db.recordEvent.create({ data: { event_id: 'evt_insert_rows_prisma', ...fields } });
    const answered = await insertRowReturning<{ id: number; dealerships: bigint | number }>(
      testDatabase.db,
      'record_events',
      { event_id: 'evt_insert_rows_raw', ...fields },
      PrismaValues.sql`id, (SELECT COUNT(*) FROM dealerships WHERE id = ${dealership.id}) AS dealerships`,
    );
    const id = Number(answered.id);
    expect(id).toBeGreaterThan(byPrisma.id);
    expect(Number(answered.dealerships)).toBe(1);
    const raw = await testDatabase.db.recordEvent.findUniqueOrThrow({ where: { id } });
    expect({ ...raw, id: 0, event_id: '' }).toEqual({ ...byPrisma, id: 0, event_id: '' });
    expect(raw.event_id).toBe('evt_insert_rows_raw');
  });
  it('insertRowReturning answers the whole row as Prisma answers its create: booleans, JSON, instants, nulls and defaults', async () => {
    const dealership = await testDatabase.db.dealership.create({ data: { name: 'Returning Motors', slug: 'returning-motors' } });
    const at = new Date('2026-11-27T10:00:00.123Z');
    const lead = {
      dealership_id: dealership.id,
      name: 'Raw Lead',
      email: 'raw.lead@example.com',
      category: 'Used Vehicle Enquiry',
      source: 'Website',
      certified: true,
      send_customer_email: false,
      tags: ['trade-in', 'finance'],
      fields: { colour: 'red', seats: 5 },
      charge_breakdown: { total: { amount: 12.5 } },
      dob: new Date('1990-01-02T00:00:00.000Z'),
      time_on_site_seconds: 42,
      message: null,
      created_at: at,
      updated_at: at,
    };
    const byPrisma = await testDatabase.db.lead.create({ data: lead });
    const raw = await insertRowReturning<Prisma.LeadModel>(testDatabase.db, 'leads', { ...lead, marketing_source: undefined });
    expect(raw.id).toBeGreaterThan(byPrisma.id);
    expect({ ...raw, id: 0 }).toStrictEqual({ ...byPrisma, id: 0 });
    // And what it wrote reads back through Prisma as Prisma's own row does.
    expect({ ...(await testDatabase.db.lead.findUniqueOrThrow({ where: { id: raw.id } })), id: 0 }).toStrictEqual({ ...byPrisma, id: 0 });
  });
});

describe('parsedJson', () => {
  it('reads a JSON column from a raw statement as Prisma reads it, on either engine', async () => {
    const dealership = await testDatabase.db.dealership.create({ data: { name: 'Json Column Motors', slug: 'json-column-motors' } });
    const key = await testDatabase.db.apiKey.create({ data: { name: 'json column key' } });
    const events = ['lead.created', 'car.updated'];
    const subscription = await testDatabase.db.webhookSubscription.create({
      data: {
        dealership_id: dealership.id,
        api_key_id: key.id,
        url: 'https://hooks.example.com/in',
        events,
        secret: 'sealed',
        created_at: new Date(),
        updated_at: new Date(),
      },
    });
    const [row] = await testDatabase.db.$queryRaw<
      { events: unknown }[]
    >`SELECT events FROM webhook_subscriptions WHERE id = ${subscription.id}`;
    expect(parsedJson(row?.events)).toEqual(events);
    expect(parsedJson('not json')).toBeNull();
    expect(parsedJson(events)).toBe(events);
  });
});
