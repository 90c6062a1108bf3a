// Derives the PostgreSQL variant of prisma/schema.prisma. The data model is written once (for
// SQLite, the embedded default); this rewrite only changes the provider, the datasource url and
// where the client is generated, and drops the Pothos generator (its types come from the SQLite
// client and hold for both engines).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const sqliteSchemaPath = path.join(projectRoot, 'prisma', 'schema.prisma');
export const postgresSchemaPath = path.join(projectRoot, 'prisma', 'generated', 'postgresql.prisma');

export type Provider = 'sqlite' | 'postgresql';

/** Rewrites a schema written for SQLite so that it targets PostgreSQL. */
export function toPostgresSchema(sqliteSchema: string): string {
  const replace = (text: string, pattern: RegExp, replacement: string): string => {
    if (!pattern.test(text)) throw new Error(`prisma/schema.prisma no longer matches ${pattern}`);
    return text.replace(pattern, replacement);
  };
  let schema = replace(sqliteSchema, /provider\s*=\s*"sqlite"/, 'provider = "postgresql"');
  schema = replace(schema, /url\s*=\s*"file:[^"]*"/, 'url      = "postgresql://localhost/unused"');
  schema = replace(schema, /output\s*=\s*"\.\.\/src\/generated\/prisma\/sqlite"/, 'output     = "../../src/generated/prisma/postgresql"');
  schema = replace(schema, /generator pothos \{[^}]*\}\n/, '');
  return `// GENERATED from prisma/schema.prisma by scripts/prisma-schemas.ts. Do not edit.\n${schema}`;
}

/** Writes prisma/generated/postgresql.prisma and returns the schema path of each provider. */
export function writeProviderSchemas(): Record<Provider, string> {
  mkdirSync(path.dirname(postgresSchemaPath), { recursive: true });
  writeFileSync(postgresSchemaPath, toPostgresSchema(readFileSync(sqliteSchemaPath, 'utf8')));
  return { sqlite: sqliteSchemaPath, postgresql: postgresSchemaPath };
}
