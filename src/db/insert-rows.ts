// Raw INSERTs: Prisma compiles a plan for every createMany; ARCHITECTURE.md lists who may run them.
import type { Prisma } from './client.ts';
import { Prisma as PrismaValues } from '../generated/prisma/sqlite/client.ts';

type InsertedValue = string | number | Date | null;

/** One INSERT of rows that all name the same columns (the code's names, never a caller's text). */
export async function insertRows(
  client: Prisma.TransactionClient,
  table: string,
  rows: readonly Readonly<Record<string, InsertedValue>>[],
): Promise<number> {
  const [first] = rows;
  if (!first) return 0;
  const columns = Object.keys(first);
  const values = rows.map((row) => {
    const names = Object.keys(row);
    if (names.length !== columns.length || columns.some((column) => !Object.hasOwn(row, column)))
      throw new Error(`insertRows(${table}): every row must name the columns ${columns.join(', ')}`);
    return PrismaValues.sql`(${PrismaValues.join(columns.map((column) => row[column] ?? null))})`;
  });
  return client.$executeRaw`INSERT INTO ${PrismaValues.raw(table)} (${PrismaValues.raw(columns.join(', '))}) VALUES ${PrismaValues.join(values)}`;
}

/** A JSON column's value is bound as its text; `undefined` leaves the column to its default. */
type ColumnValue = InsertedValue | boolean | readonly unknown[] | { readonly [key: string]: unknown } | undefined;

function boundValue(value: Exclude<ColumnValue, undefined>): InsertedValue | boolean {
  return value === null || value instanceof Date || typeof value !== 'object' ? value : JSON.stringify(value);
}

/** A subquery in `returning` sees the table before the insert on PostgreSQL, after it on SQLite. */
export async function insertRowReturning<Row>(
  client: Prisma.TransactionClient,
  table: string,
  row: Readonly<Record<string, ColumnValue>>,
  returning: PrismaValues.Sql = PrismaValues.sql`*`,
): Promise<Row> {
  const columns = Object.keys(row).filter((column) => row[column] !== undefined);
  const values = columns.map((column) => boundValue(row[column] ?? null));
  const into = PrismaValues.raw(`${table} (${columns.join(', ')})`);
  const [inserted] = await client.$queryRaw<Row[]>`INSERT INTO ${into} VALUES (${PrismaValues.join(values)}) RETURNING ${returning}`;
  if (!inserted) throw new Error(`insertRowReturning(${table}): the database answered no row`);
  return inserted;
}
