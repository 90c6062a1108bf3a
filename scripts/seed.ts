// npm run db:seed: migrates, then fills an empty database with the demo data.
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db/client.ts';
import { prepareDatabase } from '../src/db/prepare.ts';
import { createLogger } from '../src/logger.ts';

const config = loadConfig();
const db = createDb(config.databaseUrl);
try {
  await prepareDatabase(config, db, createLogger(config.logLevel), true);
} finally {
  await db.$disconnect();
}
