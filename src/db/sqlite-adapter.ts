// SQLite through one better-sqlite3 connection, with every statement serialised against open
// transactions. Prisma's adapter locks transactions against each other but not against plain
// queries, which run on the same connection: a query from another request would then see the
// open transaction's uncommitted rows and, worse, be rolled back with it after it had answered.
// Here a transaction holds the one lock from BEGIN to COMMIT/ROLLBACK, and plain queries take it
// too. (PostgreSQL has a pool of connections and needs none of this.)
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

function serialise(adapter: Adapter): Adapter {
  const lock = new Lock();
  const wrapped: Adapter = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) => lock.run(() => adapter.queryRaw(query)),
    executeRaw: (query) => lock.run(() => adapter.executeRaw(query)),
    executeScript: (script) => lock.run(() => adapter.executeScript(script)),
    dispose: () => adapter.dispose(),
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
  const factory = new PrismaBetterSqlite3({ url, ...(busyTimeoutMs !== undefined ? { timeout: busyTimeoutMs } : {}) });
  return {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => serialise(await factory.connect()),
  } as Factory;
}
