// npm run db:seed [-- --dev]: migrates, then fills an empty database with the demo data, its secrets
// encrypted with SECRETS_ENCRYPTION_KEYS (or, with --dev, the development key).
import { ConfigError, loadConfig, processEnvironment, type Config } from '../src/config/index.ts';
import { DatabaseStartupError } from '../src/startup.ts';
import { createCliDb, exitWhenOverdue, failCli } from './cli-database.ts';
import { prepareDatabase } from '../src/db/prepare.ts';
import { seedDemoData } from '../prisma/seed.ts';
import { createLogger } from '../src/logger.ts';
import { loadEnvFile } from '../src/config/env-file.ts';

loadEnvFile();
let config: Config;
try {
  config = loadConfig(processEnvironment());
} catch (error) {
  failCli(error);
}
const db = createCliDb(config.databaseUrl, exitWhenOverdue());
try {
  await prepareDatabase(config, db, createLogger(config.logLevel), seedDemoData).catch((error: unknown) =>
    failCli(error instanceof ConfigError ? error : new DatabaseStartupError(config.databaseUrl, error)),
  );
} finally {
  await db.$disconnect();
}
