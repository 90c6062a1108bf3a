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
// every call (about 8% of an uncached read's CPU), and the service sends a few hundred distinct SQL
// texts, so each connection remembers the most recent PREPARED_STATEMENTS_KEPT of them.
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
 * What Prisma's adapter does with a prepared statement (`prepare(sql).bind(args)`, then `reader`,
 * `run()`, `columns()`, `raw().all()`; or `prepare(sql).run()`), over one statement kept across calls.
 * A better-sqlite3 statement can be bound only once, so the arguments are passed to each call instead.
 */
function reusable(statement: Statement): Statement {
  const bound = (args: unknown[]) => ({
    reader: statement.reader,
    run: () => statement.run(...args),
    columns: () => statement.columns(),
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
    columns: () => statement.columns(),
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

/** Whether SQLite says the statement only reads (false when it cannot tell, e.g. it does not prepare). */
function onlyReads(connection: Connection, sql: string): boolean {
  try {
    return connection.prepare(sql).readonly;
  } catch {
    return false;
  }
}

function serialise(adapter: Adapter, reader?: Adapter): Adapter {
  const lock = new Lock();
  const writerConnection = connectionOf(adapter);
  if (writerConnection) keepPreparedStatements(writerConnection);
  const readerConnection = reader ? connectionOf(reader) : undefined;
  if (readerConnection) keepPreparedStatements(readerConnection);
  const wrapped: Adapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) =>
      reader && readerConnection && onlyReads(readerConnection, query.sql)
        ? reader.queryRaw(query)
        : lock.run(() => adapter.queryRaw(query)),
    executeRaw: (query) => lock.run(() => adapter.executeRaw(query)),
    executeScript: (script) => lock.run(() => adapter.executeScript(script)),
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
        queryRaw: (query) => transaction.queryRaw(query),
        executeRaw: (query) => transaction.executeRaw(query),
        commit: () => finish(() => transaction.commit()),
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
  const readerFactory = /^file::memory:|^:memory:|mode=memory/.test(url)
    ? undefined
    : new PrismaBetterSqlite3({ url, readonly: true, ...timeout });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => serialise(await factory.connect(), readerFactory ? await readerFactory.connect() : undefined),
  } as Factory;
}
