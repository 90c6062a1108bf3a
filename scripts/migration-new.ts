// Writes the next migration from the change to prisma/schema.prisma, as SQL for each engine:
//   npm run db:migration -- add_something [--schema <file>] [--migrations <dir>]
// Each migration folder holds sqlite.sql, postgresql.sql and schema.prisma (the data model it
// leads to), so the next diff starts from that snapshot and needs no database at all.
//
// The diff is made by the Prisma 6.19 CLI, installed beside the Prisma 7 runtime as the dev
// dependency `prisma-migrate-cli` (with its SQLite adapter `prisma-migrate-adapter-sqlite`):
// Prisma 7's `migrate diff` needs the native schema engine, which is downloaded from outside the
// npm registry, while 6.19 runs its WASM schema engine when given a driver adapter
// (scripts/prisma-migrate.config.ts). Nothing here reaches the network or opens a database.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { forMigrationCli, projectRoot, sqliteSchemaPath, toPostgresSchema, type Provider } from './prisma-schemas.ts';

const require = createRequire(import.meta.url);
const migrateCliPath = path.join(path.dirname(require.resolve('prisma-migrate-cli/package.json')), 'build', 'index.js');
const migrateConfigPath = path.join(projectRoot, 'scripts', 'prisma-migrate.config.ts');
const EMPTY_DIFF = /^(-- This is an empty migration\.)?\s*$/;

export interface MigrationRequest {
  /** snake_case; becomes `<timestamp>_<name>`. */
  name: string;
  /** The data model to migrate to (SQLite provider). */
  schemaPath: string;
  migrationsDir: string;
  now?: Date;
}

/**
 * Prisma 6.19 writes Json defaults for SQLite unquoted (`DEFAULT []`), which SQLite rejects; quote
 * them as the PostgreSQL script does.
 */
export function fixSqliteJsonDefaults(sql: string): string {
  return sql.replace(/(JSONB(?: NOT NULL)? DEFAULT )(\[\]|\{\})/g, "$1'$2'");
}

/** SQL that takes a database from `from` (null: empty) to `to`, both SQLite-provider schemas. */
function diff(provider: Provider, from: string | null, to: string, workDir: string): string {
  // The CLI runs in a folder of its own whose schema.prisma is the target: 6.19 reads the engine
  // type from the schema it finds there (not from the files it diffs) before it does anything.
  const dir = path.join(workDir, provider);
  mkdirSync(dir);
  const write = (file: string, schema: string): string => {
    const forProvider = provider === 'postgresql' ? toPostgresSchema(schema) : schema;
    writeFileSync(path.join(dir, file), forMigrationCli(forProvider, provider));
    return path.join(dir, file);
  };
  const fromArgs = from === null ? ['--from-empty'] : ['--from-schema-datamodel', write('from.prisma', from)];
  const sql = execFileSync(
    process.execPath,
    [
      migrateCliPath,
      'migrate',
      'diff',
      '--config',
      migrateConfigPath,
      ...fromArgs,
      '--to-schema-datamodel',
      write('schema.prisma', to),
      '--script',
    ],
    {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
    },
  );
  return provider === 'sqlite' ? fixSqliteJsonDefaults(sql) : sql;
}

/** Writes the migration folder and returns its path, or null when the schema has not changed. */
export function writeMigration({ name, schemaPath, migrationsDir, now = new Date() }: MigrationRequest): string | null {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`migration name "${name}" must be snake_case`);
  mkdirSync(migrationsDir, { recursive: true });
  const previous = readdirSync(migrationsDir)
    .filter((entry) => /^\d{14}_/.test(entry))
    .sort()
    .at(-1);
  const from = previous ? readFileSync(path.join(migrationsDir, previous, 'schema.prisma'), 'utf8') : null;
  const to = readFileSync(schemaPath, 'utf8');
  const workDir = mkdtempSync(path.join(tmpdir(), 'migration-diff-'));
  let sqliteSql: string;
  let postgresSql: string;
  try {
    sqliteSql = diff('sqlite', from, to, workDir);
    postgresSql = diff('postgresql', from, to, workDir);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  if (EMPTY_DIFF.test(sqliteSql) && EMPTY_DIFF.test(postgresSql)) return null;
  const stamp = now.toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  if (existsSync(dir)) throw new Error(`${dir} exists already`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'sqlite.sql'), sqliteSql);
  writeFileSync(path.join(dir, 'postgresql.sql'), postgresSql);
  writeFileSync(path.join(dir, 'schema.prisma'), to);
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { schema: { type: 'string' }, migrations: { type: 'string' } },
  });
  const name = positionals[0];
  if (!name || !/^[a-z0-9_]+$/.test(name)) {
    console.error('usage: npm run db:migration -- <snake_case_name> [--schema <file>] [--migrations <dir>]');
    process.exit(2);
  }
  const migrationsDir = path.resolve(values.migrations ?? path.join(projectRoot, 'prisma', 'migrations'));
  const dir = writeMigration({ name, schemaPath: path.resolve(values.schema ?? sqliteSchemaPath), migrationsDir });
  if (!dir) {
    console.log('the schema has not changed since the last migration; nothing written');
  } else {
    const inProject = path.relative(projectRoot, dir);
    console.log(`wrote ${inProject.startsWith('..') ? dir : inProject}`);
  }
}
