// Reads sent straight through the driver adapter (src/db/direct-reads.ts) take their reach from the
// caller's scoped client (reachOf): only from the clients it made, and only reaches they can read.
import { beforeAll, describe, expect, it } from 'vitest';
import { forDealerships, reachOf, type ScopedDb } from '../src/db/scoped.ts';
import { createDemoApp } from './support/demo.ts';
import type { TestApp } from './support/app.ts';

let app: TestApp;

beforeAll(async () => {
  ({ app } = await createDemoApp());
});

describe('the reach a direct read takes', () => {
  it('vouches only for the clients it made and the reaches a direct read takes: a transaction client, no dealership or too many go through Prisma', async () => {
    expect(reachOf(app.db as ScopedDb)).toEqual({ db: app.db, dealershipIds: null });
    expect(reachOf(forDealerships(app.db, [3, 1]))).toEqual({ db: app.db, dealershipIds: [1, 3] });
    // No dealership, and more than one list of values holds: left to the client itself.
    expect(reachOf(forDealerships(app.db, []))).toBeUndefined();
    expect(
      reachOf(
        forDealerships(
          app.db,
          Array.from({ length: 501 }, (_, index) => index + 1),
        ),
      ),
    ).toBeUndefined();
    const insideTransaction = await app.db.$transaction(async (tx) => reachOf(tx as unknown as ScopedDb));
    expect(insideTransaction).toBeUndefined();
  });
});
