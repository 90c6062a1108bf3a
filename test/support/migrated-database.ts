// A migrated database per test file with a client over it, for tests that need the database and
// nothing else of the app. Not in database.ts: globalSetup loads that file, where vitest's hooks
// cannot be imported.
import { afterAll, beforeAll } from 'vitest';
import { createDb, type Db } from '../../src/db/client.ts';
import { createMigratedDatabase, type TestDatabase } from './database.ts';

/** A migrated database and a client over it, made before the test file's tests and dropped after them. */
export function migratedDatabaseForFile(): { readonly db: Db } {
  let database: TestDatabase | undefined;
  let db: Db | undefined;
  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = createDb(database.url);
  });
  afterAll(async () => {
    await db?.$disconnect();
    await database?.drop();
  });
  return {
    get db(): Db {
      if (!db) throw new Error('the database is made in beforeAll: use it inside a test');
      return db;
    },
  };
}
