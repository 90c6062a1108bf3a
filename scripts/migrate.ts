// npm run db:migrate: brings the database of DATABASE_URL (an empty SQLite file or an empty
// PostgreSQL database included) to the current schema. Offline; no Prisma engine is downloaded.
import { loadDatabaseConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadEnvFile } from '../src/env-file.ts';

loadEnvFile();

const config = loadDatabaseConfig();
const applied = await migrate(config.databaseUrl);
console.log(applied.length > 0 ? `${config.engine}: applied ${applied.join(', ')}` : `${config.engine}: schema is current`);
