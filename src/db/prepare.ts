// Brings the configured database to the current schema and, when given a demo-data seeder and the
// database holds no dealership yet, fills it with the demo data; then checks the stored secrets can be
// read and that none is in plaintext. Used at start-up and by `npm run db:seed`.
//
// The demo data (prisma/seed.ts) is not imported here or anywhere under src/ but the process entry:
// the entry passes a seeder only when SEED_DEMO_DATA is on, so the service's code never depends on
// demo data, and a production start never loads it.
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { Keyring } from '../config/secrets.ts';
import type { Db } from './client.ts';
import { migrate } from './migrate.ts';
import { secureStoredSecrets } from '../domain/stored-secrets.ts';

/** Fills an empty, migrated database with demo data and says what it wrote (prisma/seed.ts `seedDemoData`). */
export type DemoDataSeeder = (db: Db, options: { keyring: Keyring }) => Promise<object>;

export async function prepareDatabase(config: Config, db: Db, logger: Logger, seeder: DemoDataSeeder | null): Promise<void> {
  const started = performance.now();
  const applied = await migrate(config.databaseUrl, async () => {
    if (!seeder || (await db.dealership.count()) > 0) return;
    const seedStarted = performance.now();
    const summary = await seeder(db, { keyring: config.secretsKeyring });
    logger.info({ ...summary, ms: Math.round(performance.now() - seedStarted) }, 'database was empty: seeded demo data');
  });
  logger.info(
    { engine: config.engine, applied, ms: Math.round(performance.now() - started) },
    applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database schema is current',
  );
  await secureStoredSecrets(db, config.secretsKeyring, logger);
}
