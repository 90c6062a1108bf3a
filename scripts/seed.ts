// npm run db:seed [-- --dev]: migrates, then fills an empty database with the demo data, its secrets
// encrypted with SECRETS_ENCRYPTION_KEYS (or, with --dev, the development key).
import { loadConfig, processEnvironment } from '../src/config.ts';
import { createDb } from '../src/db/client.ts';
import { prepareDatabase } from '../src/db/prepare.ts';
import { seedDemoData } from '../prisma/seed.ts';
import { createLogger } from '../src/logger.ts';
import { loadEnvFile } from '../src/env-file.ts';

loadEnvFile();
const config = loadConfig(processEnvironment());
const db = createDb(config.databaseUrl);
try {
  await prepareDatabase(config, db, createLogger(config.logLevel), seedDemoData);
} finally {
  await db.$disconnect();
}
