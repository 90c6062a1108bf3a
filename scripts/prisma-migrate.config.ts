// Configuration of the Prisma 6.19 CLI (`prisma-migrate-cli`) that scripts/migration-new.ts runs
// to diff two schemas. With `engine: "js"` and a driver adapter, 6.19 uses its WASM schema engine
// instead of the native one (which it would download from outside the npm registry). The adapter
// is an in-memory SQLite database that the diff never writes to; it serves the PostgreSQL diff too,
// because diffing two schema files reads no database.
import { PrismaBetterSQLite3 } from 'prisma-migrate-adapter-sqlite';
import { defineConfig } from 'prisma-migrate-cli/config';

export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaBetterSQLite3({ url: 'file::memory:' }),
});
