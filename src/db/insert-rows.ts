// Rows written with raw INSERTs rather than Prisma's create and createMany. Prisma 7 keeps no query
// plan for createMany (nor createManyAndReturn): each call compiles one with its WebAssembly query
// compiler, which costs more than the rest of the statement (docs/benchmarks.md); a raw statement needs no plan.
// Every createMany of the request paths goes through here (test/insert-rows.test.ts walks src/ for one
// left). The one-row inserts are for the rows a lead POST writes every time (its lead and its event):
// even with its plan cached, Prisma's create costs about three times the CPU of the raw statement.
//
// insertRows's values are text, numbers, instants and nulls: those every engine binds alike (a Date as
// Prisma writes it, ISO text on SQLite and a UTC timestamp on PostgreSQL), so the statement is the same
// on both. An enum column takes its value's text (PostgreSQL gives the untyped parameter the column's
// type: lead_files.file_type). The one-row inserts also take booleans and JSON values (ColumnValue).
// Raw statements pass the scoped client's dealership condition by: ARCHITECTURE.md ("Raw statements")
// lists the modules that may run them.
import type { Prisma } from './client.ts';
import { Prisma as PrismaValues } from '../generated/prisma/sqlite/client.ts';

type InsertedValue = string | number | Date | null;

/**
 * Inserts `rows` into `table` (its SQL name) in one statement, none for no rows; every row names the
 * same columns. The table and column names are the code's, never a caller's text. Answers how many
 * rows were written.
 */
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

/**
 * A column's value in a one-row insert: what insertRows takes, a boolean (bound as Prisma binds it:
 * 1 or 0 on SQLite), or a JSON column's value, which must be an array or a plain object (bound as its
 * JSON text, which PostgreSQL reads into the column's json type). `undefined` leaves the column to its
 * default, as with Prisma.
 */
type ColumnValue = InsertedValue | boolean | readonly unknown[] | { readonly [key: string]: unknown } | undefined;

function boundValue(value: Exclude<ColumnValue, undefined>): InsertedValue | boolean {
  return value === null || value instanceof Date || typeof value !== 'object' ? value : JSON.stringify(value);
}

/**
 * Inserts one row into `table` (its SQL name) and answers what `returning` lists (the whole row by
 * default) as `Row`. For the whole row that is the model's row type, which the answer equals on either
 * engine, because Prisma reads a raw statement's columns by their types as it reads its own
 * (test/insert-rows.test.ts holds a lead written this way equal to one Prisma's create wrote). A
 * `returning` list may hold a subquery (both engines allow one): what the same write would otherwise
 * ask in a statement of its own. Ask it of other tables than `table`: PostgreSQL's subquery sees the
 * database as it was before the insert, SQLite's sees the new row.
 */
export async function insertRowReturning<Row>(
  client: Prisma.TransactionClient,
  table: string,
  row: Readonly<Record<string, ColumnValue>>,
  returning: PrismaValues.Sql = PrismaValues.sql`*`,
): Promise<Row> {
  const columns = Object.keys(row).filter((column) => row[column] !== undefined);
  const values = columns.map((column) => boundValue(row[column] ?? null));
  const [inserted] = await client.$queryRaw<Row[]>`INSERT INTO ${PrismaValues.raw(table)} (${PrismaValues.raw(
    columns.join(', '),
  )}) VALUES (${PrismaValues.join(values)}) RETURNING ${returning}`;
  if (!inserted) throw new Error(`insertRowReturning(${table}): the database answered no row`);
  return inserted;
}
