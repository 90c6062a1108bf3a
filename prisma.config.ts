// Configuration of the Prisma 7 CLI, which this project uses for one thing: `prisma generate`
// (scripts/prisma-generate.ts). The service reaches its database through driver adapters
// (src/db/client.ts), migrations are applied by src/db/migrate.ts and written by
// scripts/migration-new.ts, so no datasource url is configured here and no CLI command that
// connects to a database is used.
import path from 'node:path';
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: path.join('prisma', 'schema.prisma'),
});
