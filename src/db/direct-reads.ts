// Reads of whole rows sent straight to the driver adapter, for the few hot point reads whose plan never
// changes (src/domain/key-dealerships.ts). Prisma spends most of an uncached read's CPU on its own
// work around the SQL (building the query, planning it, interpreting the plan, mapping and copying every
// value): for the key details' four statements, about 0.6 ms a request where the statements themselves
// take 0.15. Here the SQL is the text Prisma writes for the same query, on the same adapter (so the same
// connection, kept statements, locks, spans and failure handling), and every value is mapped as Prisma
// maps it, from the datamodel. test/direct-reads.test.ts holds the statements and the records equal to
// Prisma's, on both engines, for every read built on this.
import type { ArgType, SqlQuery, SqlResultSet } from '@prisma/driver-adapter-utils';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';

type ModelName = keyof PrismaTypes & string;

/** What runs a statement: the adapter Prisma connected, with its wrappers (spans, failure injection). */
interface Queryable {
  queryRaw(query: SqlQuery): Promise<SqlResultSet>;
  getConnectionInfo?(): { schemaName?: string };
}

interface Connected {
  adapter: Queryable | undefined;
  provider: 'sqlite' | 'postgres';
  /** The client's statement log (tests count statements with it), called as Prisma calls it. */
  onQuery: ((sql: string) => void) | undefined;
}

const connectedByDb = new WeakMap<object, Connected>();

interface AdapterFactory {
  readonly provider: string;
  readonly adapterName: string;
  connect(): Promise<unknown>;
}

/**
 * The factory, remembering the adapter it connects (and forgetting it when Prisma disposes of it), so
 * that `db`'s direct reads run on the connection Prisma runs on. Called by createDb for every client.
 */
export function rememberAdapter<F extends AdapterFactory>(
  factory: F,
  onQuery: ((sql: string) => void) | undefined,
): { factory: F; attach(db: object): void } {
  const connected: Connected = { adapter: undefined, provider: factory.provider === 'postgres' ? 'postgres' : 'sqlite', onQuery };
  const remembering = {
    ...factory,
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const adapter = (await factory.connect()) as Queryable & { dispose(): Promise<void> };
      const dispose = adapter.dispose.bind(adapter);
      connected.adapter = adapter;
      adapter.dispose = async () => {
        if (connected.adapter === adapter) connected.adapter = undefined;
        await dispose();
      };
      return adapter;
    },
  } as F;
  return { factory: remembering, attach: (db) => connectedByDb.set(db, connected) };
}

/** Whether `db` is a client createDb made (not a transaction's client or a scoped one). */
export function isBaseClient(db: object): boolean {
  return connectedByDb.has(db);
}

// ---------------------------------------------------------------------------------------------------
// The SQL Prisma writes for a findMany of whole rows: every scalar and enum column in the datamodel's
// order, qualified by schema and table; a filter on one column by a list; an optional order; and the
// window Prisma always adds for "every row" (SQLite `LIMIT -1 OFFSET 0`, PostgreSQL `OFFSET 0`).

type Field = { name: string; kind: string; type: string };
const models = getDatamodel().datamodel.models as unknown as Record<string, { fields: readonly Field[] }>;

/**
 * The column types this reader maps, those of the reads built on it (test/direct-reads.test.ts compares
 * each with Prisma); a model with any other type is refused when its read is built, until it is added
 * here and to that test.
 */
const MAPPED_TYPES = new Set(['Int', 'String', 'DateTime']);

/** A column of a read: its name and how a value of it is mapped. */
interface Column {
  name: string;
  type: string;
  isEnum: boolean;
}

/** The columns of a model's whole row, in the datamodel's order (the order Prisma selects them in). */
function wholeRow(model: ModelName, only?: readonly string[]): Column[] {
  const fields = models[model]?.fields;
  if (!fields) throw new Error(`direct reads: no model ${model}`);
  return fields
    .filter((field) => (field.kind === 'scalar' || field.kind === 'enum') && (!only || only.includes(field.name)))
    .map((field) => {
      if (field.kind === 'scalar' && !MAPPED_TYPES.has(field.type))
        throw new Error(`direct reads: ${model}.${field.name} is ${field.type}, which this reader does not map`);
      return { name: field.name, type: field.type, isEnum: field.kind === 'enum' };
    });
}

/** Prisma's reading of a date-time the driver returned as text (its `normalizeDateTime`): a zone-less value is UTC. */
const TIME_PART = /\d{2}:\d{2}:\d{2}(?:\.\d+)?(Z|[+-]\d{2}(:?\d{2})?)?$/;
/** `2024-06-11T05:35:46.073+00:00` or `…Z`: what both adapters return, which needs no normalising. */
function isFullTimestamp(text: string): boolean {
  const length = text.length;
  if (length < 20 || text.charCodeAt(10) !== 84 /* T */) return false;
  if (text.charCodeAt(length - 1) === 90 /* Z */) return true;
  const sign = text.charCodeAt(length - 6);
  return (sign === 43 /* + */ || sign === 45) /* - */ && text.charCodeAt(length - 3) === 58 /* : */;
}
function dateOf(value: unknown): Date {
  if (typeof value !== 'string') return new Date(value as number);
  if (isFullTimestamp(value)) return new Date(value);
  const time = TIME_PART.exec(value);
  if (time === null) return new Date(`${value}T00:00:00Z`);
  const [whole, zone, minutes] = time;
  let text = value;
  if (zone !== undefined && zone !== 'Z' && minutes === undefined) text = `${value}:00`;
  else if (zone === undefined) text = `${value}Z`;
  if (whole.length === value.length) return new Date(`1970-01-01T${text}`);
  const separator = time.index - 1;
  if (text[separator] === ' ') text = `${text.slice(0, separator)}T${text.slice(separator + 1)}`;
  return new Date(text);
}

/** A value as Prisma returns it: Int a number, DateTime a Date, String and enums as they are. */
function mapValue(type: string, value: unknown): unknown {
  if (value === null) return null;
  switch (type) {
    case 'Int':
      return typeof value === 'number' ? value : Number(value);
    case 'DateTime':
      return dateOf(value);
    default:
      return value;
  }
}

/** One whole-row read, built once per model and filter column. */
interface RowRead {
  model: ModelName;
  table: string;
  columns: Column[];
  /** The column the list filters on; undefined for every row. */
  filter: string | undefined;
  orderBy: string | undefined;
}

export function rowRead(
  model: ModelName,
  table: string,
  options: { filter?: string; orderBy?: string; columns?: readonly string[] },
): RowRead {
  return { model, table, columns: wholeRow(model, options.columns), filter: options.filter, orderBy: options.orderBy };
}

/** The most values one IN list is given here; beyond it Prisma may split the statement, so the caller asks Prisma. */
export const MOST_LISTED_VALUES = 500;

// The argument types Prisma sends with these statements (its `dbType: null` is no type here, as it is
// to the adapters, which read a dbType only for dates and times).
const INT_ARG: ArgType = { arity: 'scalar', scalarType: 'int' };
const PG_INT_ARG: ArgType = { arity: 'scalar', scalarType: 'int', dbType: 'INTEGER' };
const BIGINT_ARG: ArgType = { arity: 'scalar', scalarType: 'bigint' };

function statement(connected: Connected, adapter: Queryable, read: RowRead, values: readonly number[] | null): SqlQuery {
  const postgres = connected.provider === 'postgres';
  const schema = adapter.getConnectionInfo?.().schemaName ?? (postgres ? 'public' : 'main');
  const quote = (name: string) => (postgres ? `"${name}"` : `\`${name}\``);
  const table = `${quote(schema)}.${quote(read.table)}`;
  const column = (name: string) => `${table}.${quote(name)}`;
  const selected = read.columns.map((col) => (postgres && col.isEnum ? `${column(col.name)}::text` : column(col.name))).join(', ');
  const args: unknown[] = [];
  const argTypes: ArgType[] = [];
  const placeholder = () => (postgres ? `$${args.length}` : '?');
  let where = '1=1';
  if (read.filter !== undefined && values !== null) {
    const marks: string[] = [];
    for (const value of values) {
      args.push(value);
      argTypes.push(postgres ? PG_INT_ARG : INT_ARG);
      marks.push(placeholder());
    }
    // An empty list is `IN (NULL)`, as Prisma writes it (it still sends the statement).
    where = `${column(read.filter)} IN (${marks.length > 0 ? marks.join(',') : 'NULL'})`;
  }
  let sql = `SELECT ${selected} FROM ${table} WHERE ${where}`;
  if (read.orderBy !== undefined) sql += ` ORDER BY ${column(read.orderBy)} ASC`;
  if (postgres) {
    args.push('0');
    argTypes.push(BIGINT_ARG);
    sql += ` OFFSET ${placeholder()}`;
  } else {
    args.push(-1, '0');
    argTypes.push(INT_ARG, BIGINT_ARG);
    sql += ' LIMIT ? OFFSET ?';
  }
  return { sql, args, argTypes };
}

/**
 * The rows of `read` whose filter column is one of `values` (every row when `values` is null), as
 * Prisma would return them; undefined when `db` has no connected adapter to read through (the caller
 * then asks Prisma). Scoping is the caller's: this reads exactly what it is given.
 */
export async function readRows(
  db: object,
  read: RowRead,
  values: readonly number[] | null,
): Promise<Record<string, unknown>[] | undefined> {
  const connected = connectedByDb.get(db);
  const adapter = connected?.adapter;
  if (!connected || !adapter) return undefined;
  const query = statement(connected, adapter, read, values);
  connected.onQuery?.(query.sql);
  const result = await adapter.queryRaw(query);
  const columns = read.columns;
  const records: Record<string, unknown>[] = new Array(result.rows.length);
  for (let r = 0; r < result.rows.length; r++) {
    const row = result.rows[r] as unknown[];
    const record: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c] as Column;
      record[column.name] = mapValue(column.type, row[c]);
    }
    records[r] = record;
  }
  return records;
}
