// Derives the PostgreSQL variant of prisma/schema.prisma. The data model is written once (for
// SQLite, the embedded default); this rewrite only changes the provider and where the client is
// generated, and drops the Pothos generator (its types come from the SQLite client and hold for
// both engines).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const sqliteSchemaPath = path.join(projectRoot, 'prisma', 'schema.prisma');
export const postgresSchemaPath = path.join(projectRoot, 'prisma', 'generated', 'postgresql.prisma');

export type Provider = 'sqlite' | 'postgresql';

function replaceOnce(text: string, pattern: RegExp, replacement: string): string {
  if (!pattern.test(text)) throw new Error(`the schema no longer matches ${pattern}`);
  return text.replace(pattern, replacement);
}

/** The `datasource db { … }` block and everything around it, or an error naming what is missing. */
function splitDatasource(schema: string): { before: string; body: string; after: string } {
  const match = /datasource\s+db\s*\{([^}]*)\}/.exec(schema);
  if (!match) throw new Error('the schema has no `datasource db { … }` block');
  return { before: schema.slice(0, match.index), body: match[1]!, after: schema.slice(match.index + match[0].length) };
}

/**
 * Rewrites a schema written for SQLite so that it targets PostgreSQL. Accepts the schemas of
 * earlier migrations too, which were written for Prisma 6 and still carry a datasource url.
 */
export function toPostgresSchema(sqliteSchema: string): string {
  const { before, body, after } = splitDatasource(sqliteSchema);
  const datasource = replaceOnce(body, /provider\s*=\s*"sqlite"/, 'provider = "postgresql"').replace(/^\s*url\s*=.*\n/m, '');
  let schema = `${before}datasource db {${datasource}}${after}`;
  schema = replaceOnce(
    schema,
    /output\s*=\s*"\.\.\/src\/generated\/prisma\/sqlite"/,
    'output       = "../../src/generated/prisma/postgresql"',
  );
  schema = replaceOnce(schema, /generator pothos \{[^}]*\}\n/, '');
  return `// GENERATED from prisma/schema.prisma by scripts/prisma-schemas.ts. Do not edit.\n${schema}`;
}

/**
 * The schema as the Prisma 6.19 CLI that writes migrations reads it (scripts/migration-new.ts).
 * Its datasource must name a url, which Prisma 7 forbids in the schema; the url is never opened,
 * as `migrate diff` between two schema files reads no database. Its generators are replaced by one
 * that asks for the TypeScript query compiler (`engineType = "client"`): with any other, 6.19
 * first downloads a native query engine, which these machines cannot. Generators do not change
 * the SQL a diff writes.
 */
export function forMigrationCli(schema: string, provider: Provider): string {
  const { before, body, after } = splitDatasource(schema.replace(/^generator\s+\w+\s*\{[^}]*\}\n?/gm, ''));
  const url = provider === 'sqlite' ? 'file:./unused.db' : 'postgresql://localhost/unused';
  const withoutUrl = body.replace(/^\s*url\s*=.*\n/m, '');
  const generator = 'generator client {\n  provider   = "prisma-client"\n  output     = "./unused"\n  engineType = "client"\n}\n\n';
  return `${generator}${before}datasource db {${withoutUrl.replace(/\n?$/, '\n')}  url      = "${url}"\n}${after}`;
}

/** Writes prisma/generated/postgresql.prisma and returns the schema path of each provider. */
export function writeProviderSchemas(): Record<Provider, string> {
  mkdirSync(path.dirname(postgresSchemaPath), { recursive: true });
  writeFileSync(postgresSchemaPath, toPostgresSchema(readFileSync(sqliteSchemaPath, 'utf8')));
  return { sqlite: sqliteSchemaPath, postgresql: postgresSchemaPath };
}
