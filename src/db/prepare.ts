// The seeder is passed in by the process entry only when SEED_DEMO_DATA is on, so a production start never loads it.
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { Keyring } from '../config/secrets.ts';
import type { Db } from './client.ts';
import { migrate } from './migrate.ts';
import { secureStoredSecrets } from '../domain/stored-secrets.ts';

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
