// npm run db:migrate: brings the database of DATABASE_URL (an empty SQLite file or an empty
// PostgreSQL database included) to the current schema. Offline; no Prisma engine is downloaded.
import { loadDatabaseConfig } from '../src/config/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadEnvFile } from '../src/config/env-file.ts';
import { DatabaseStartupError } from '../src/startup.ts';
import { exitWhenOverdue, failCli } from './cli-database.ts';

loadEnvFile();

let config: ReturnType<typeof loadDatabaseConfig>;
try {
  config = loadDatabaseConfig();
} catch (error) {
  failCli(error);
}
exitWhenOverdue();
const applied = await migrate(config.databaseUrl).catch((error: unknown) => failCli(new DatabaseStartupError(config.databaseUrl, error)));
console.log(applied.length > 0 ? `${config.engine}: applied ${applied.join(', ')}` : `${config.engine}: schema is current`);
