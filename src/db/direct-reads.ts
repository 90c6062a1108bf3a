// Reads sent straight to the driver adapter, for the few hot point reads whose plan never changes
// (src/domain/key-dealerships.ts, the figures of src/domain/car-performance.ts). Prisma spends most of an uncached read's CPU on its own
// work around the SQL (building the query, planning it, interpreting the plan, mapping and copying every
// value): for the key details' four statements, about 0.6 ms a request where the statements themselves
// take 0.15. Here the SQL is the text Prisma writes for the same query, on the same adapter (so the same
// connection, kept statements, locks, spans and failure handling), and every value is mapped as Prisma
// maps it, from the datamodel. test/direct-reads.test.ts holds the statements and the records equal to
// Prisma's, on both engines, for every read built on this and every reach it is sent with.
import type { ArgType, SqlDriverAdapter, SqlDriverAdapterFactory, SqlQuery } from '@prisma/driver-adapter-utils';
import type PrismaTypes from '../generated/pothos-types.ts';
import { getDatamodel } from '../generated/pothos-types.ts';

type ModelName = keyof PrismaTypes & string;

interface Connected {
  /** What runs a statement: the adapter Prisma connected, with its wrappers (spans, failure injection). */
  adapter: SqlDriverAdapter | undefined;
  /** The schema Prisma qualifies its tables with, as the connected adapter tells it (once, at connect). */
  schema: string;
  provider: 'sqlite' | 'postgres';
  /** The client's statement log (tests count statements with it), called as Prisma calls it. */
  onQuery: ((sql: string) => void) | undefined;
}

const connectedByDb = new WeakMap<object, Connected>();

/**
 * The factory, remembering the adapter it connects (and forgetting it when Prisma disposes of it), so
 * that `db`'s direct reads run on the connection Prisma runs on. Called by createDb for every client.
 */
export function rememberAdapter(
  factory: SqlDriverAdapterFactory,
  onQuery: ((sql: string) => void) | undefined,
): { factory: SqlDriverAdapterFactory; attach(db: object): void } {
  const provider = factory.provider === 'postgres' ? 'postgres' : 'sqlite';
  const connected: Connected = { adapter: undefined, schema: '', provider, onQuery };
  const remembering: SqlDriverAdapterFactory = {
    ...factory,
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const adapter = await factory.connect();
      const dispose = adapter.dispose.bind(adapter);
      connected.adapter = adapter;
      connected.schema = adapter.getConnectionInfo?.().schemaName ?? (provider === 'postgres' ? 'public' : 'main');
      adapter.dispose = async () => {
        if (connected.adapter === adapter) connected.adapter = undefined;
        await dispose();
      };
      return adapter;
    },
  };
  return { factory: remembering, attach: (db) => connectedByDb.set(db, connected) };
}

/** Whether `db` is a client createDb made (not a transaction's client or a scoped one). */
export function isBaseClient(db: object): boolean {
  return connectedByDb.has(db);
}

// ---------------------------------------------------------------------------------------------------
// The SQL Prisma writes for a findMany (or a groupBy with one aggregate): its columns qualified by
// schema and table; a filter on one column by a list, and the caller's dealerships when given; an
// optional grouping and order; and the window Prisma always adds for "every row" (SQLite
// `LIMIT -1 OFFSET 0`, PostgreSQL `OFFSET 0`).

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

/**
 * The columns of a read, in the order Prisma selects them: a whole row in the datamodel's order, a
 * selection in the order it is given (Prisma's is its `select`'s, with `id` first when ordering needs it).
 */
function wholeRow(model: ModelName, only?: readonly string[]): Column[] {
  const fields = models[model]?.fields;
  if (!fields) throw new Error(`direct reads: no model ${model}`);
  const chosen = only
    ? only.map((name) => {
        const field = fields.find((candidate) => candidate.name === name);
        if (!field) throw new Error(`direct reads: ${model} has no column ${name}`);
        return field;
      })
    : fields;
  return chosen
    .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
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

/**
 * How a read keeps to a caller's dealerships when given their ids, as src/db/scoped.ts decides it
 * (`dealershipConditionOf`): by a column of its own rows, or by a column of the row its owner relation
 * points at (`ownerTable`, through `foreignKey`), joined as Prisma joins it.
 */
type DealershipCondition = { column: string } | { ownerTable: string; foreignKey: string; column: string };

/** An aggregate selected before the columns, as Prisma's groupBy writes it (`COUNT(*) AS "_count$_all"`). */
interface Aggregate {
  sql: 'COUNT(*)' | 'SUM';
  /** The column SUM adds up. */
  of?: string;
  alias: string;
}

/** One read: built once, sent with its lists of values each time. */
interface RowRead {
  model: ModelName;
  table: string;
  columns: Column[];
  /** The column the list filters on; undefined for every row. */
  filter: string | undefined;
  orderBy: readonly string[];
  aggregate: Aggregate | undefined;
  groupBy: string | undefined;
  /** The dealership condition, when the read is sent with the caller's dealerships. */
  condition: DealershipCondition | undefined;
}

export function rowRead(
  model: ModelName,
  table: string,
  options: {
    filter?: string;
    orderBy?: string | readonly string[];
    columns?: readonly string[];
    aggregate?: Aggregate;
    groupBy?: string;
    /** The model's dealership condition (src/db/scoped.ts), and the owner's table when it goes through one. */
    condition?: { column: string } | { owner: string; foreignKey: string; column: string };
    ownerTable?: string;
  },
): RowRead {
  const rule = options.condition;
  let condition: DealershipCondition | undefined;
  if (rule && 'owner' in rule) {
    if (options.ownerTable === undefined) throw new Error(`direct reads: ${model} is kept through ${rule.owner}, whose table is not given`);
    condition = { ownerTable: options.ownerTable, foreignKey: rule.foreignKey, column: rule.column };
  } else condition = rule;
  const orderBy = options.orderBy === undefined ? [] : typeof options.orderBy === 'string' ? [options.orderBy] : options.orderBy;
  return {
    model,
    table,
    columns: wholeRow(model, options.columns),
    filter: options.filter,
    orderBy,
    aggregate: options.aggregate,
    groupBy: options.groupBy,
    condition,
  };
}

/** The most values one IN list is given here; beyond it Prisma may split the statement, so the caller asks Prisma. */
export const MOST_LISTED_VALUES = 500;

// The argument types Prisma sends with these statements (its `dbType: null` is no type here, as it is
// to the adapters, which read a dbType only for dates and times).
const INT_ARG: ArgType = { arity: 'scalar', scalarType: 'int' };
const PG_INT_ARG: ArgType = { arity: 'scalar', scalarType: 'int', dbType: 'INTEGER' };
const BIGINT_ARG: ArgType = { arity: 'scalar', scalarType: 'bigint' };

/** The alias Prisma gives the owner's table in a scope join. */
const OWNER_ALIAS = 'j0';

function statement(
  connected: Connected,
  read: RowRead,
  values: readonly number[] | null,
  dealershipIds: readonly number[] | undefined,
): SqlQuery {
  const postgres = connected.provider === 'postgres';
  const schema = connected.schema;
  const quote = (name: string) => (postgres ? `"${name}"` : `\`${name}\``);
  const table = `${quote(schema)}.${quote(read.table)}`;
  const column = (name: string) => `${table}.${quote(name)}`;
  const selected = read.columns.map((col) => (postgres && col.isEnum ? `${column(col.name)}::text` : column(col.name)));
  const aggregate = read.aggregate;
  if (aggregate)
    selected.unshift(
      `${aggregate.of === undefined ? aggregate.sql : `${aggregate.sql}(${column(aggregate.of)})`} AS ${quote(aggregate.alias)}`,
    );
  const args: unknown[] = [];
  const argTypes: ArgType[] = [];
  const placeholder = () => (postgres ? `$${args.length}` : '?');
  // An empty list is `IN (NULL)`, as Prisma writes it (it still sends the statement).
  const inList = (list: readonly number[]): string => {
    const marks: string[] = [];
    for (const value of list) {
      args.push(value);
      argTypes.push(postgres ? PG_INT_ARG : INT_ARG);
      marks.push(placeholder());
    }
    return `IN (${marks.length > 0 ? marks.join(',') : 'NULL'})`;
  };
  let from = table;
  let where = '1=1';
  if (read.filter !== undefined && values !== null) where = `${column(read.filter)} ${inList(values)}`;
  const condition = read.condition;
  if (condition && dealershipIds !== undefined) {
    if ('ownerTable' in condition) {
      const owner = quote(OWNER_ALIAS);
      from += ` LEFT JOIN ${quote(schema)}.${quote(condition.ownerTable)} AS ${owner} ON (${owner}.${quote('id')}) = (${column(condition.foreignKey)})`;
      where = `(${where} AND (${owner}.${quote(condition.column)} ${inList(dealershipIds)} AND (${owner}.${quote('id')} IS NOT NULL)))`;
    } else {
      where = `(${where} AND ${column(condition.column)} ${inList(dealershipIds)})`;
    }
  }
  let sql = `SELECT ${selected.join(', ')} FROM ${from} WHERE ${where}`;
  if (read.groupBy !== undefined) sql += ` GROUP BY ${column(read.groupBy)}`;
  if (read.orderBy.length > 0) sql += ` ORDER BY ${read.orderBy.map((name) => `${column(name)} ASC`).join(', ')}`;
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
 * Prisma would return them, kept to `dealershipIds` by the read's dealership condition when given;
 * undefined when `db` has no connected adapter to read through (the caller then asks Prisma). An
 * aggregate comes first in each record, under its alias, as a number (or null: a sum of no rows).
 */
export async function readRows(
  db: object,
  read: RowRead,
  values: readonly number[] | null,
  dealershipIds?: readonly number[],
): Promise<Record<string, unknown>[] | undefined> {
  const connected = connectedByDb.get(db);
  const adapter = connected?.adapter;
  if (!connected || !adapter) return undefined;
  if (dealershipIds !== undefined && !read.condition) throw new Error(`direct reads: ${read.model} has no dealership condition`);
  const query = statement(connected, read, values, dealershipIds);
  connected.onQuery?.(query.sql);
  const result = await adapter.queryRaw(query);
  const columns = read.columns;
  const aggregate = read.aggregate;
  const first = aggregate ? 1 : 0;
  const records: Record<string, unknown>[] = new Array(result.rows.length);
  for (let r = 0; r < result.rows.length; r++) {
    const row = result.rows[r] as unknown[];
    const record: Record<string, unknown> = {};
    if (aggregate) record[aggregate.alias] = row[0] === null ? null : Number(row[0]);
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c] as Column;
      record[column.name] = mapValue(column.type, row[c + first]);
    }
    records[r] = record;
  }
  return records;
}
