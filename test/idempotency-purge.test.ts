// The idempotency purge at scale: it deletes only the records past their time (not one at the
// cutoff), in statements of at most PURGE_BATCH rows, each a range of idempotency_records(created_at)
// that never reads the live records into the process.
import { beforeAll, describe, expect, it } from 'vitest';
import { PURGE_BATCH } from '../src/db/background-task.ts';
import { purgeExpiredIdempotencyRecords } from '../src/domain/leads/idempotency.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeKey } from './support/fixtures.ts';

const HOUR = 3_600_000;
let app: TestApp;
let keyId: number;

beforeAll(async () => {
  app = await createTestApp();
  const key = await makeKey(app.db, { permissions: ['create:lead'] });
  keyId = (await app.db.apiKey.findFirstOrThrow({ orderBy: { id: 'desc' }, select: { id: true } })).id;
  expect(key.key).toBeTruthy();
});

async function recordsAged(label: string, count: number, ageMs: number): Promise<void> {
  const created_at = new Date(app.clock.now().getTime() - ageMs);
  await app.db.idempotencyRecord.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      api_key_id: keyId,
      key: `${label}-${i}`,
      request_hash: 'x',
      response_status: 201,
      response_body: '{}',
      created_at,
    })),
  });
}

describe('purgeExpiredIdempotencyRecords', () => {
  it('deletes only the expired records, however many live ones there are, a batch per statement', async () => {
    const ttlMs = app.config.idempotencyTtlMs;
    await app.db.idempotencyRecord.deleteMany();
    await recordsAged('live', 3_000, HOUR);
    await recordsAged('at-cutoff', 5, ttlMs);
    await recordsAged('expired', PURGE_BATCH + 250, ttlMs + 1);
    await recordsAged('old', 10, 30 * 24 * HOUR);
    app.queries.length = 0;
    expect(await purgeExpiredIdempotencyRecords(app.db, app.config.engine, app.clock.now, ttlMs)).toBe(PURGE_BATCH + 260);
    const purgeStatements = app.queries.filter((sql) => /idempotency_records/.test(sql));
    const left = await app.db.idempotencyRecord.findMany({ select: { key: true } });
    expect(left).toHaveLength(3_005);
    expect(left.every((record) => record.key.startsWith('live-') || record.key.startsWith('at-cutoff-'))).toBe(true);

    // Two full-or-short batches: each one DELETE bounded by PURGE_BATCH, and no SELECT of the rows.
    const deletes = purgeStatements.filter((sql) => /DELETE FROM/i.test(sql));
    expect(deletes).toHaveLength(2);
    for (const sql of deletes) expect(sql).toMatch(/LIMIT/i);
    expect(purgeStatements.filter((sql) => /^\s*SELECT/i.test(sql))).toEqual([]);
  });

  it('finds the expired rows through the index on created_at (SQLite: the plan of the batch statement)', async (context) => {
    if (app.config.engine !== 'sqlite') context.skip();
    const plan = await app.db.$queryRawUnsafe<{ detail: string }[]>(
      `EXPLAIN QUERY PLAN SELECT id FROM idempotency_records WHERE created_at < ? LIMIT ${PURGE_BATCH}`,
      new Date(0).toISOString(),
    );
    expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING (COVERING )?INDEX idempotency_records_created_at_idx/);
  });
});
