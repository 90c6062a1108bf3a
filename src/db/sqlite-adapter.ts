// Not Prisma's SQLite adapter alone: it does not serialise plain queries against open transactions on
// the one connection (they would see, and be rolled back with, uncommitted rows), so one lock covers
// both. Reads outside a transaction run on a second, read-only connection (WAL: last committed state).
// Each connection keeps its prepared statements, which the adapter prepares anew on every call, with
// Prisma's `LIMIT ? OFFSET ?` written as numbers so a kept statement is not re-planned per binding.
// The writer runs with synchronous = NORMAL and each write waits for a group fsync of the log on
// libuv's thread pool after the lock is released: as durable as FULL, without blocking the event loop.
import { open } from 'node:fs/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';

type Factory = PrismaBetterSqlite3;
type Adapter = Awaited<ReturnType<Factory['connect']>>;

class Lock {
  #tail: Promise<void> = Promise.resolve();

  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
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

const PREPARED_STATEMENTS_KEPT = 500;

function connectionOf(adapter: Adapter): Connection | undefined {
  const client = (adapter as unknown as { client?: unknown }).client;
  return client !== null && typeof client === 'object' && typeof (client as Connection).prepare === 'function'
    ? (client as Connection)
    : undefined;
}

// A better-sqlite3 statement can be bound only once, so a kept one takes the arguments on each call. Its
// columns are asked once: the adapter asks on every read, and the SQL text it is kept under fixes them.
function reusable(statement: Statement): Statement {
  let asked: ReturnType<Statement['columns']> | undefined;
  const columns = () => (asked ??= statement.columns());
  return {
    get reader() {
      return statement.reader;
    },
    get readonly() {
      return statement.readonly;
    },
    run: (...args: unknown[]) => statement.run(...args),
    columns,
    bind: (args: unknown[]) => ({
      reader: statement.reader,
      run: () => statement.run(...args),
      columns,
      raw: () => ({ all: () => statement.raw(true).all(...args) }),
    }),
  } as unknown as Statement;
}

export function keepPreparedStatements(connection: Connection, kept = PREPARED_STATEMENTS_KEPT): Map<string, Statement> {
  const prepare = connection.prepare.bind(connection) as (sql: string) => Statement;
  const statements = new Map<string, Statement>();
  connection.prepare = ((sql: string) => {
    let statement = statements.get(sql);
    if (statement) {
      statements.delete(sql); // the Map's order is the recency order
    } else {
      statement = reusable(prepare(sql));
      if (statements.size >= kept) statements.delete(statements.keys().next().value!);
    }
    statements.set(sql, statement);
    return statement;
  }) as Connection['prepare'];
  return statements;
}

type Query = Parameters<Adapter['queryRaw']>[0];

function integerText(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  if (typeof value === 'bigint') return String(value);
  return typeof value === 'string' && /^-?\d{1,15}$/.test(value) ? value : undefined;
}

const TRAILING_LIMIT = / LIMIT \? OFFSET \?$/;

/** The trailing `LIMIT ? OFFSET ?` as its two whole numbers (the last two arguments); anything else is left. */
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

function onlyReads(connection: Connection, sql: string): boolean {
  try {
    return connection.prepare(sql).readonly;
  } catch {
    return false;
  }
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!handle) return;
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Group commit: one fsync at a time; a write that arrives during one waits for the next. */
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
      const transaction = await adapter.startTransaction(isolationLevel).catch((error: unknown) => {
        release();
        throw error;
      });
      const finish = (end: () => Promise<void>): Promise<void> => end().finally(release);
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
