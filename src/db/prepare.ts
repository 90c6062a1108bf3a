// Brings the configured database to the current schema and, when enabled and the database holds no
// dealership yet, fills it with the demo data; then checks the stored secrets can be read and that
// none is in plaintext. Used at start-up and by `npm run db:seed`.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Db } from './client.ts';
import { migrate } from './migrate.ts';
import { secureStoredSecrets } from '../domain/stored-secrets.ts';

export async function prepareDatabase(config: Config, db: Db, logger: Logger, seed = config.seedDemoData): Promise<void> {
  const started = performance.now();
  const applied = await migrate(config.databaseUrl, async () => {
    if (!seed || (await db.dealership.count()) > 0) return;
    const seedStarted = performance.now();
    // The demo data's code is loaded only when it is needed, not on every start.
    const { seedDemoData } = await import('../../prisma/seed.ts');
    const summary = await seedDemoData(db, { keyring: config.secretsKeyring });
    logger.info({ ...summary, ms: Math.round(performance.now() - seedStarted) }, 'database was empty: seeded demo data');
  });
  logger.info(
    { engine: config.engine, applied, ms: Math.round(performance.now() - started) },
    applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database schema is current',
  );
  await secureStoredSecrets(db, config.secretsKeyring, logger);
}
