// Creates the next migration from the change to prisma/schema.prisma, as SQL for each engine:
//   npm run db:migration -- add_something
// Each migration folder holds sqlite.sql, postgresql.sql and schema.prisma (the data model it
// leads to), so the next diff starts from that snapshot and needs no database at all.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot, sqliteSchemaPath, toPostgresSchema, writeProviderSchemas } from './prisma-schemas.ts';
import { readFileSync } from 'node:fs';

const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run db:migration -- <snake_case_name>');
  process.exit(2);
}
const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');
mkdirSync(migrationsDir, { recursive: true });
const previous = readdirSync(migrationsDir).filter((entry) => /^\d{14}_/.test(entry)).sort().at(-1);
const schemas = writeProviderSchemas();

function diff(toSchema: string, fromSchema: string | null): string {
  const from = fromSchema ? ['--from-schema-datamodel', fromSchema] : ['--from-empty'];
  return execFileSync('npx', ['--no-install', 'prisma', 'migrate', 'diff', ...from, '--to-schema-datamodel', toSchema, '--script'], {
    cwd: projectRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

let previousSqlite: string | null = null;
let previousPostgres: string | null = null;
if (previous) {
  previousSqlite = path.join(migrationsDir, previous, 'schema.prisma');
  previousPostgres = path.join(projectRoot, 'prisma', 'generated', 'previous-postgresql.prisma');
  writeFileSync(previousPostgres, toPostgresSchema(readFileSync(previousSqlite, 'utf8')));
}
/**
 * Prisma 6.19 writes Json defaults for SQLite unquoted (`DEFAULT []`), which SQLite rejects; quote
 * them as the PostgreSQL script does.
 */
export function fixSqliteJsonDefaults(sql: string): string {
  return sql.replace(/(JSONB(?: NOT NULL)? DEFAULT )(\[\]|\{\})/g, "$1'$2'");
}

const sqliteSql = fixSqliteJsonDefaults(diff(schemas.sqlite, previousSqlite));
const postgresSql = diff(schemas.postgresql, previousPostgres);
if (/^-- This is an empty migration\.\s*$/.test(sqliteSql.trim()) || sqliteSql.trim() === '') {
  console.log('prisma/schema.prisma has not changed since the last migration; nothing written');
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const dir = path.join(migrationsDir, `${stamp}_${name}`);
if (existsSync(dir)) throw new Error(`${dir} exists already`);
mkdirSync(dir);
writeFileSync(path.join(dir, 'sqlite.sql'), sqliteSql);
writeFileSync(path.join(dir, 'postgresql.sql'), postgresSql);
copyFileSync(sqliteSchemaPath, path.join(dir, 'schema.prisma'));
console.log(`wrote ${path.relative(projectRoot, dir)}`);
