// Taking dealerships off a key: a key restricted to some dealerships never becomes a key of every
// dealership, not by one removal and not by two at once.
import { beforeAll, describe, expect, it } from 'vitest';
import { removeDealerships } from '../src/auth/key-admin.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let dealershipIds: number[];

beforeAll(async () => {
  app = await createTestApp();
  dealershipIds = [(await makeDealership(app.db)).id, (await makeDealership(app.db)).id, (await makeDealership(app.db)).id];
});

async function dealershipsOf(keyId: number): Promise<number[]> {
  const rows = await app.db.apiKeyDealership.findMany({ where: { api_key_id: keyId }, orderBy: { dealership_id: 'asc' } });
  return rows.map((row) => row.dealership_id);
}

describe('removeDealerships', () => {
  it('takes the named dealerships off and keeps the others', async () => {
    const key = await makeKey(app.db, { dealershipIds });
    await removeDealerships(app.db, key.id, [dealershipIds[0]!]);
    expect(await dealershipsOf(key.id)).toEqual(dealershipIds.slice(1));
  });

  it('refuses to take the last dealerships off, naming the field, and stores nothing', async () => {
    const key = await makeKey(app.db, { dealershipIds: dealershipIds.slice(0, 2) });
    await expect(removeDealerships(app.db, key.id, dealershipIds)).rejects.toMatchObject({
      message: expect.stringContaining('last dealership'),
      extensions: expect.objectContaining({ field: 'dealership' }),
    });
    expect(await dealershipsOf(key.id)).toEqual(dealershipIds.slice(0, 2));
  });

  it('of two removals at once that would leave nothing, one is refused and the key keeps a dealership', async () => {
    for (let round = 0; round < 5; round += 1) {
      const key = await makeKey(app.db, { dealershipIds: dealershipIds.slice(0, 2) });
      const outcomes = await Promise.allSettled([
        removeDealerships(app.db, key.id, [dealershipIds[0]!]),
        removeDealerships(app.db, key.id, [dealershipIds[1]!]),
      ]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(await dealershipsOf(key.id)).toHaveLength(1);
    }
  });
});
