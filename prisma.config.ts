// The Prisma CLI here never downloads a native engine: `engine: "js"` with a driver adapter makes
// it use the WASM schema engine (see ../shared/notes/prisma-offline.md). Migrations themselves are
// applied by src/db/migrate.ts; the CLI only generates clients and diffs schemas.
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: path.join('prisma', 'schema.prisma'),
  adapter: async () => new PrismaBetterSQLite3({ url: 'file::memory:' }),
});
