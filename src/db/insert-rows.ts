// Rows written with one raw INSERT rather than Prisma's createMany. Prisma 7 keeps no query plan for
// createMany (nor createManyAndReturn): each call compiles one with its WebAssembly query compiler,
// about 2.5 ms of CPU, more than the rest of the statement; a raw statement needs no plan. Every
// createMany of the request paths goes through here (test/insert-rows.test.ts walks src/ for one left).
//
// The values are text, numbers, instants and nulls: those every engine binds alike (a Date as Prisma
// writes it, ISO text on SQLite and a UTC timestamp on PostgreSQL), so the statement is the same on
// both. An enum column takes its value's text (PostgreSQL gives the untyped parameter the column's
// type: lead_files.file_type); booleans, which SQLite stores as numbers, are not among the values.
import type { Db, Prisma } from './client.ts';
import { Prisma as PrismaValues } from '../generated/prisma/sqlite/client.ts';

type InsertedValue = string | number | Date | null;

/**
 * Inserts `rows` into `table` (its SQL name) in one statement, none for no rows; every row names the
 * same columns. The table and column names are the code's, never a caller's text. Answers how many
 * rows were written.
 */
export async function insertRows(
  client: Prisma.TransactionClient | Db,
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
 * Inserts one row into `table` (its SQL name), with the values insertRows takes, and answers the
 * new row's `id`. A raw statement, for rows a hot write path makes on every call (a change's
 * event): Prisma's `create` costs about three times its CPU (its query is parameterised, looked
 * up in the plan cache and rendered from fragments on each call; a raw one is sent as it is).
 */
export async function insertRowReturningId(
  client: Prisma.TransactionClient | Db,
  table: string,
  row: Readonly<Record<string, InsertedValue>>,
): Promise<number> {
  const columns = Object.keys(row);
  const [inserted] = await client.$queryRaw<{ id: number | bigint }[]>`INSERT INTO ${PrismaValues.raw(table)} (${PrismaValues.raw(
    columns.join(', '),
  )}) VALUES (${PrismaValues.join(columns.map((column) => row[column] ?? null))}) RETURNING id`;
  if (!inserted) throw new Error(`insertRowReturningId(${table}): the database answered no row`);
  return Number(inserted.id);
}
