// The one migration command, on the engine under test: from empty, idempotent, safe when many
// gateway instances start at once, and strict about migrations edited after they were applied.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client.ts';
import { migrate, readMigrations } from '../src/db/migrate.ts';
import { createEmptyDatabase, testEngine, type TestDatabase } from './support/database.ts';

const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

async function emptyDatabase(): Promise<string> {
  const database = await createEmptyDatabase();
  databases.push(database);
  return database.url;
}

describe(`migrations on ${testEngine}`, () => {
  const all = readMigrations(testEngine).map((migration) => migration.name);

  it('brings an empty database to the current schema, then has nothing left to do', async () => {
    const url = await emptyDatabase();
    expect(await migrate(url)).toEqual(all);
    expect(await migrate(url)).toEqual([]);
    const db = createDb(url);
    try {
      // The schema is usable through Prisma: a write and a read of a table with Json defaults.
      const dealership = await db.dealership.create({ data: { name: 'Fresh Motors', slug: 'fresh-motors' } });
      const car = await db.car.create({
        data: { dealership_id: dealership.id, stocknum: 'F1', slug: 'f1', make: 'Kia', model: 'Rio', year: 2021 },
      });
      expect(car.features).toEqual([]);
      expect(car.custom_attributes).toEqual([]);
    } finally {
      await db.$disconnect();
    }
  });

  it('applies each migration once when several instances start together', async () => {
    const url = await emptyDatabase();
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    expect(results.flat().sort()).toEqual(all);
    // One instance brings the schema up to date; the others find it done.
    expect(results.filter((applied) => applied.length > 0)).toEqual([all]);
  });

  it.runIf(testEngine === 'postgresql')('holds its lock only inside a transaction, as PgBouncer in transaction mode needs', async () => {
    const url = await emptyDatabase();
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    try {
      let holder: { state: string; waiting_for_lock: boolean } | undefined;
      await migrate(url, async () => {
        // Seen from another connection while the seed would run: the advisory lock is held by a
        // connection that is inside a transaction (a session-level lock would show an idle one).
        const { rows } = await observer.query<{ state: string; waiting_for_lock: boolean }>(
          `SELECT activity.state, NOT lock.granted AS waiting_for_lock FROM pg_locks lock
             JOIN pg_stat_activity activity ON activity.pid = lock.pid
            WHERE lock.locktype = 'advisory' AND lock.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        );
        holder = rows[0];
        expect(rows).toHaveLength(1);
        const { rows: tried } = await observer.query<{ taken: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS taken', [7_201_984]);
        expect(tried[0]?.taken).toBe(false);
      });
      expect(holder).toEqual({ state: 'idle in transaction', waiting_for_lock: false });
      // Nothing is left held once migrate returns.
      const { rows: after } = await observer.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
      expect(after).toEqual([]);
    } finally {
      await observer.end();
    }
  });

  it('refuses to run when an applied migration was edited afterwards', async () => {
    const url = await emptyDatabase();
    await migrate(url);
    const db = createDb(url);
    try {
      await db.$executeRawUnsafe(`UPDATE _gateway_migrations SET checksum = 'edited'`);
    } finally {
      await db.$disconnect();
    }
    await expect(migrate(url)).rejects.toThrow(/was changed after it was applied/);
  });
});
