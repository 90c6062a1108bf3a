// The database clock (src/db/clock.ts): an instance learns the offset between its own clock and the
// database's, so its now() is the database's time however wrong its own clock is.
import { describe, expect, it } from 'vitest';
import { createDatabaseClock, databaseNow, sqlNow } from '../src/db/clock.ts';
import { testEngine } from './support/database.ts';
import { migratedDatabaseForFile } from './support/migrated-database.ts';

const testDatabase = migratedDatabaseForFile();

describe('the database clock', () => {
  it('corrects a process clock that is off, in either direction', async () => {
    for (const skewMs of [150_000, -150_000, 0]) {
      const clock = createDatabaseClock(testDatabase.db, testEngine, () => Date.now() + skewMs);
      expect(clock.offsetMs()).toBe(0);
      await clock.sync();
      expect(Math.abs(clock.offsetMs() + skewMs), `skew ${skewMs}`).toBeLessThan(5_000);
      const reference = (await databaseNow(testDatabase.db, testEngine)).getTime();
      expect(Math.abs(clock.now().getTime() - reference), `skew ${skewMs}`).toBeLessThan(5_000);
    }
  });

  it("is the one PostgreSQL statements replace by the database's own now(); any other clock is passed as its value", async () => {
    const clock = createDatabaseClock(testDatabase.db, testEngine);
    expect(sqlNow(clock.now).sql).toContain('now()');
    const fixed = () => new Date('2026-11-21T09:00:00.000Z');
    expect(sqlNow(fixed).sql).not.toContain('now()');
    expect(sqlNow(fixed).values).toEqual(['2026-11-21T09:00:00.000Z']);
    if (testEngine === 'postgresql') {
      const [row] = await testDatabase.db.$queryRaw<{ at: Date }[]>`SELECT ${sqlNow(fixed)} AS at`;
      expect(row?.at.toISOString()).toBe('2026-11-21T09:00:00.000Z');
    }
  });
});
