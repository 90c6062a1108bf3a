// Isolation between requests on the engine under test: a query from one request, made while another
// request's transaction is open, neither sees that transaction's uncommitted rows nor is rolled
// back with it. (On SQLite, one connection serves every request: src/db/sqlite-adapter.ts.)
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership } from './support/fixtures.ts';

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
  await makeDealership(app.db);
});

/**
 * A transaction that has created a dealership and stays open until `end()`; then it commits, or
 * rolls back by throwing. Resolves once the row is written inside it.
 */
async function openTransaction(
  dealership: { name: string; slug: string },
  then: 'commit' | 'roll back',
): Promise<{ transaction: Promise<void>; end: () => void }> {
  let end!: () => void;
  const held = new Promise<void>((resolve) => {
    end = resolve;
  });
  let begun!: () => void;
  const started = new Promise<void>((resolve) => {
    begun = resolve;
  });
  const transaction = app.db.$transaction(
    async (tx) => {
      await tx.dealership.create({ data: dealership });
      begun();
      await held;
      if (then === 'roll back') throw new Error('roll back');
    },
    { timeout: 20_000 },
  );
  await started;
  return { transaction, end };
}

describe('a transaction in flight', () => {
  it('is invisible to, and cannot undo, queries made outside it', async () => {
    const before = await app.db.dealership.count();
    const { transaction: held, end: letTheTransactionEnd } = await openTransaction(
      { name: 'Uncommitted Motors', slug: 'uncommitted-motors' },
      'roll back',
    );
    const transaction = held.catch((error: unknown) => error);

    // Prisma queries are lazy: then() sends them now, while the transaction is open.
    const writtenOutside = app.db.manufacturer.create({ data: { name: 'Outside', slug: 'outside-maker' } }).then((row) => row);
    const countedOutside = app.db.dealership.count().then((count) => count);
    await new Promise((resolve) => setTimeout(resolve, 50));
    letTheTransactionEnd();

    expect(await transaction).toBeInstanceOf(Error);
    expect(await countedOutside).toBe(before);
    await writtenOutside;
    expect(await app.db.manufacturer.findUnique({ where: { slug: 'outside-maker' } })).not.toBeNull();
    expect(await app.db.dealership.count()).toBe(before);
  });

  it('does not hold up a read made outside it: the read answers while the transaction is still open', async () => {
    const before = await app.db.dealership.count();
    const { transaction, end: letTheTransactionEnd } = await openTransaction({ name: 'Held Motors', slug: 'held-motors' }, 'commit');
    // Were reads queued behind the open transaction (SQLite's one writing connection), this would
    // wait for the release below, which comes only after it: the test would never end.
    expect(await app.db.dealership.count()).toBe(before);
    letTheTransactionEnd();
    await transaction;
    expect(await app.db.dealership.count()).toBe(before + 1);
  });
});
