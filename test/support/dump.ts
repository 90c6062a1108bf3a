// Every value of every table, read with the engine's own driver rather than through Prisma: what a
// database dump (or a stolen backup) holds. Tests scan it for secrets.
import Database from 'better-sqlite3';
import pg from 'pg';
import { engineOf, sqlitePath } from '../../src/config/index.ts';

export interface DumpedValue {
  table: string;
  column: string;
  /** The value as text (binary values as UTF-8 and as hex, so either spelling of a secret is found). */
  text: string;
}

function asText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value)) return `${value.toString('utf8')} ${value.toString('hex')}`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function flatten(table: string, rows: Record<string, unknown>[]): DumpedValue[] {
  return rows.flatMap((row) =>
    Object.entries(row)
      .filter(([, value]) => value !== null && value !== undefined)
      .map(([column, value]) => ({ table, column, text: asText(value) })),
  );
}

export async function dumpDatabase(databaseUrl: string): Promise<{ tables: string[]; values: DumpedValue[] }> {
  if (engineOf(databaseUrl) === 'sqlite') {
    const sqlite = new Database(sqlitePath(databaseUrl), { readonly: true });
    try {
      const tables = (
        sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]
      ).map((row) => row.name);
      return {
        tables,
        values: tables.flatMap((table) => flatten(table, sqlite.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[])),
      };
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    const tables = rows.map((row) => row.table_name);
    const values: DumpedValue[] = [];
    for (const table of tables)
      values.push(...flatten(table, (await client.query<Record<string, unknown>>(`SELECT * FROM "${table}"`)).rows));
    return { tables, values };
  } finally {
    await client.end();
  }
}
