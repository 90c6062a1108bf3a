// SQLite through one better-sqlite3 connection, with every statement serialised against open
// transactions. Prisma's adapter locks transactions against each other but not against plain
// queries, which run on the same connection: a query from another request would then see the
// open transaction's uncommitted rows and, worse, be rolled back with it after it had answered.
// Here a transaction holds the one lock from BEGIN to COMMIT/ROLLBACK, and plain queries take it
// too. (PostgreSQL has a pool of connections and needs none of this.)
//
// Reads do not wait in that line: a statement SQLite calls read-only, outside a transaction, runs on a
// second, read-only connection to the same file. In WAL mode (src/db/migrate.ts) it reads the last
// committed state, so it never sees an open transaction's rows, and a read no longer queues behind a
// write's whole transaction (the tail latency of reads under writes).
//
// Both connections keep their prepared statements: Prisma's adapter prepares every statement again on
// every call (a measurable share of an uncached read's CPU: docs/benchmarks.md), and the service sends a few hundred distinct SQL
// texts, so each connection remembers the most recent PREPARED_STATEMENTS_KEPT of them. Prisma ends
// every read in `LIMIT ? OFFSET ?`, which SQLite plans anew for each binding: those two numbers are
// written into the SQL (withLiteralLimit), or a kept statement would still be parsed on every run.
//
// A write is on disk before it is answered, but the disk is waited for off the event loop. better-sqlite3
// is synchronous: with SQLite's default (synchronous = FULL) every COMMIT calls fsync on the one
// thread that serves every request, several milliseconds on an ordinary disk during which nothing
// else runs, and with the lock held. In WAL mode the writer runs with synchronous = NORMAL (the commit
// writes the log without waiting for the disk) and each write then waits for an fsync of the log on
// libuv's thread pool (WalSync below), after the lock is released: what is answered is as durable as
// under FULL, the thread serves other requests meanwhile, and writes that commit close together share one fsync.
import { open } from 'node:fs/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';

type Factory = PrismaBetterSqlite3;
type Adapter = Awaited<ReturnType<Factory['connect']>>;
type Transaction = Awaited<ReturnType<Adapter['startTransaction']>>;

/** A FIFO lock: acquire() resolves with the function that releases it. */
class Lock {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => released);
    return acquired;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }
}

type Connection = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement<unknown[]>;

/** How many prepared statements each connection keeps (least recently used first out). */
const PREPARED_STATEMENTS_KEPT = 500;

/** The better-sqlite3 connection inside Prisma's adapter (its `client`), if the adapter still has one. */
function connectionOf(adapter: Adapter): Connection | undefined {
  const client = (adapter as unknown as { client?: unknown }).client;
  return client !== null && typeof client === 'object' && typeof (client as Connection).prepare === 'function'
    ? (client as Connection)
    : undefined;
}

/**
 * A kept statement's columns, asked once: Prisma's adapter asks on every read, and they are fixed by the SQL text the statement is kept under (Prisma names every column; it
 * never selects `*`). Read-only to the adapter, which only maps over them.
 */
const columnsByStatement = new WeakMap<Statement, ReturnType<Statement['columns']>>();
function columnsOf(statement: Statement): ReturnType<Statement['columns']> {
  let columns = columnsByStatement.get(statement);
  if (!columns) {
    columns = statement.columns();
    columnsByStatement.set(statement, columns);
  }
  return columns;
}

/**
 * What Prisma's adapter does with a prepared statement (`prepare(sql).bind(args)`, then `reader`,
 * `run()`, `columns()`, `raw().all()`; or `prepare(sql).run()`), over one statement kept across calls.
 * A better-sqlite3 statement can be bound only once, so the arguments are passed to each call instead.
 */
function reusable(statement: Statement): Statement {
  const columns = () => columnsOf(statement);
  const bound = (args: unknown[]) => ({
    reader: statement.reader,
    run: () => statement.run(...args),
    columns,
    raw: () => ({ all: () => statement.raw(true).all(...args) }),
  });
  return {
    get reader() {
      return statement.reader;
    },
    get readonly() {
      return statement.readonly;
    },
    run: (...args: unknown[]) => statement.run(...args),
    columns,
    bind: (args: unknown[]) => bound(args),
  } as unknown as Statement;
}

/** Makes the connection's `prepare` return a kept statement for SQL it prepared recently. */
export function keepPreparedStatements(connection: Connection, kept = PREPARED_STATEMENTS_KEPT): Map<string, Statement> {
  const prepare = connection.prepare.bind(connection) as (sql: string) => Statement;
  const statements = new Map<string, Statement>();
  connection.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (statement) {
      statements.delete(sql); // the Map's order is the recency order
    } else {
      statement = prepare(sql);
      if (statements.size >= kept) statements.delete(statements.keys().next().value!);
    }
    statements.set(sql, statement);
    return reusable(statement);
  }) as Connection['prepare'];
  return statements;
}

type Query = Parameters<Adapter['queryRaw']>[0];

/** A whole number as SQL text, or undefined for anything else (a LIMIT or OFFSET Prisma bound). */
function integerText(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  if (typeof value === 'bigint') return String(value);
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? value : undefined;
}

/** Prisma's SQLite reads end in `LIMIT ? OFFSET ?` (`LIMIT -1 OFFSET 0` when the query takes every row). */
const TRAILING_LIMIT = / LIMIT \? OFFSET \?$/;

/**
 * The query with a trailing `LIMIT ? OFFSET ?` written as its two whole numbers. SQLite plans a
 * statement whose LIMIT is a bound parameter for the value bound, and so parses and plans it again on
 * every run after a new binding (checked with a probe on sqlite3Reprepare: every statement of an
 * uncached read, on every request). With the numbers in the text, a kept statement is parsed once.
 * They are the statement's last two placeholders, so its last two arguments; a number is all a
 * literal can hold here, and anything else leaves the query as it is.
 */
export function withLiteralLimit(query: Query): Query {
  if (!TRAILING_LIMIT.test(query.sql)) return query;
  const limit = integerText(query.args.at(-2));
  const offset = integerText(query.args.at(-1));
  if (limit === undefined || offset === undefined) return query;
  return {
    sql: `${query.sql.slice(0, -' LIMIT ? OFFSET ?'.length)} LIMIT ${limit} OFFSET ${offset}`,
    args: query.args.slice(0, -2),
    argTypes: query.argTypes.slice(0, -2),
  };
}

/** Whether SQLite says the statement only reads (false when it cannot tell, e.g. it does not prepare). */
function onlyReads(connection: Connection, sql: string): boolean {
  try {
    return connection.prepare(sql).readonly;
  } catch {
    return false;
  }
}

/** fsync of `file` (a no-op when it does not exist: a log checkpointed and removed has nothing left to write). */
async function syncFile(file: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Group commit for the write-ahead log: `flushed()` resolves once everything written before the call
 * is on disk. One fsync runs at a time; a write that arrives while one runs (which may have started
 * before the write) waits for the next, which then covers every write made until it starts.
 */
export class WalSync {
  readonly #file: string;
  readonly #sync: (file: string) => Promise<void>;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(walFile: string, sync: (file: string) => Promise<void> = syncFile) {
    this.#file = walFile;
    this.#sync = sync;
  }

  flushed(): Promise<void> {
    if (this.#next) return this.#next;
    const running = this.#running;
    if (!running) return this.#start();
    const after = () => {
      this.#next = null;
      return this.#start();
    };
    this.#next = running.then(after, after);
    return this.#next;
  }

  #start(): Promise<void> {
    const running = this.#sync(this.#file).finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
    return running;
  }
}

/**
 * The log of a writer in WAL mode, now synced by WalSync instead of by each COMMIT; undefined (and
 * SQLite's own fsync kept) for any other journal mode or an in-memory database.
 */
function walSyncOf(connection: Connection | undefined, file: string | undefined): WalSync | undefined {
  if (!connection || !file) return undefined;
  if (connection.pragma('journal_mode', { simple: true }) !== 'wal') return undefined;
  connection.pragma('synchronous = NORMAL');
  return new WalSync(`${file}-wal`);
}

function serialise(adapter: Adapter, reader?: Adapter, file?: string): Adapter {
  const lock = new Lock();
  const writerConnection = connectionOf(adapter);
  if (writerConnection) keepPreparedStatements(writerConnection);
  const readerConnection = reader ? connectionOf(reader) : undefined;
  if (readerConnection) keepPreparedStatements(readerConnection);
  const walSync = walSyncOf(writerConnection, file);
  /** A write's answer, once the write is on disk. */
  const durable = async <T>(result: Promise<T>): Promise<T> => {
    const value = await result;
    if (walSync) await walSync.flushed();
    return value;
  };
  const wrapped: Adapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (sent) => {
      const query = withLiteralLimit(sent);
      return reader && readerConnection && onlyReads(readerConnection, query.sql)
        ? reader.queryRaw(query)
        : durable(lock.run(() => adapter.queryRaw(query)));
    },
    executeRaw: (query) => durable(lock.run(() => adapter.executeRaw(query))),
    executeScript: (script) => durable(lock.run(() => adapter.executeScript(script))),
    dispose: async () => {
      await reader?.dispose();
      await adapter.dispose();
    },
    async startTransaction(isolationLevel) {
      const release = await lock.acquire();
      let transaction: Transaction;
      try {
        transaction = await adapter.startTransaction(isolationLevel);
      } catch (error) {
        release();
        throw error;
      }
      const finish = async (end: () => Promise<void>): Promise<void> => {
        try {
          await end();
        } finally {
          release();
        }
      };
      return {
        provider: transaction.provider,
        adapterName: transaction.adapterName,
        options: transaction.options,
        queryRaw: (query) => transaction.queryRaw(withLiteralLimit(query)),
        executeRaw: (query) => transaction.executeRaw(query),
        // The lock goes with the COMMIT; the answer waits for the disk.
        commit: () => durable(finish(() => transaction.commit())),
        rollback: () => finish(() => transaction.rollback()),
      };
    },
  };
  if (adapter.getConnectionInfo) wrapped.getConnectionInfo = () => adapter.getConnectionInfo!();
  return wrapped;
}

/** `busyTimeoutMs`: how long a statement waits for a lock held by another process (better-sqlite3's `timeout`). */
export function serialisedSqliteAdapter(url: string, busyTimeoutMs?: number): Factory {
  const timeout = busyTimeoutMs !== undefined ? { timeout: busyTimeoutMs } : {};
  const factory = new PrismaBetterSqlite3({ url, ...timeout });
  // An in-memory database is private to its connection: a second one would be another database.
  const inMemory = /^file::memory:|^:memory:|mode=memory/.test(url);
  const readerFactory = inMemory ? undefined : new PrismaBetterSqlite3({ url, readonly: true, ...timeout });
  const file = inMemory ? undefined : url.replace(/^file:/, '').replace(/\?.*$/, '');
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => serialise(await factory.connect(), readerFactory ? await readerFactory.connect() : undefined, file),
  } as Factory;
}
