// The SQLite adapter keeps its prepared statements (src/db/sqlite-adapter.ts): one statement per SQL
// text, reused with other arguments, the least recently used dropped past the bound. Its writes wait
// for the write-ahead log's fsync off the event loop, writes close together sharing one (WalSync).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { keepPreparedStatements, WalSync, withLiteralLimit } from '../src/db/sqlite-adapter.ts';
import { testEngine } from './support/database.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';

function connection(): Database.Database {
  const db = new Database(':memory:');
  db.exec("CREATE TABLE car (id INTEGER PRIMARY KEY, stocknum TEXT); INSERT INTO car VALUES (1, 'A1'), (2, 'B2'), (3, 'C3');");
  return db;
}

describe('kept prepared statements', () => {
  it('prepare the same SQL once and answer each call with its own arguments, as Prisma’s adapter calls them', () => {
    const db = connection();
    const kept = keepPreparedStatements(db);
    const sql = 'SELECT id, stocknum FROM car WHERE id = ?';
    const first = db.prepare(sql).bind([1]);
    expect(first.reader).toBe(true);
    expect(first.columns().map((column) => column.name)).toEqual(['id', 'stocknum']);
    expect(first.raw().all()).toEqual([[1, 'A1']]);
    expect(db.prepare(sql).bind([3]).raw().all()).toEqual([[3, 'C3']]);
    // The columns are asked of SQLite once per kept statement, and each call sees the same answer.
    expect(db.prepare(sql).bind([3]).columns()).toBe(first.columns());
    expect(kept.size).toBe(1);
    const underlying = kept.get(sql);
    db.prepare(sql).bind([2]);
    expect(kept.get(sql)).toBe(underlying);

    const update = db.prepare('UPDATE car SET stocknum = ? WHERE id = ?');
    expect(update.readonly).toBe(false);
    expect(db.prepare(sql).readonly).toBe(true);
    expect(update.bind(['Z9', 2]).run().changes).toBe(1);
    expect(db.prepare('UPDATE car SET stocknum = ? WHERE id = ?').bind(['Y8', 3]).run().changes).toBe(1);
    expect(db.prepare(sql).bind([2]).raw().all()).toEqual([[2, 'Z9']]);
    db.prepare('BEGIN').run();
    db.prepare('ROLLBACK').run();
    db.close();
  });

  it('keep at most their bound, dropping the least recently used', () => {
    const db = connection();
    const kept = keepPreparedStatements(db, 3);
    for (const id of [1, 2, 3]) db.prepare(`SELECT ${id} AS n`);
    db.prepare('SELECT 1 AS n'); // used again: now the most recent
    db.prepare('SELECT 4 AS n');
    expect([...kept.keys()]).toEqual(['SELECT 3 AS n', 'SELECT 1 AS n', 'SELECT 4 AS n']);
    db.close();
  });
});

/** A sync whose completion the test decides: each call is recorded with the function that ends it. */
function controlledSync() {
  const calls: (() => void)[] = [];
  const sync = () =>
    new Promise<void>((resolve) => {
      calls.push(resolve);
    });
  return { calls, sync };
}

const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe('the write-ahead log’s fsync (WalSync)', () => {
  it('answers a write only after an fsync that began after it', async () => {
    const { calls, sync } = controlledSync();
    const wal = new WalSync('db.sqlite-wal', sync);
    const first = wal.flushed();
    expect(calls).toHaveLength(1);
    // Written while the first fsync runs: that one may have started before the write.
    const second = wal.flushed();
    expect(calls).toHaveLength(1);
    calls[0]!();
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false);
    expect(calls).toHaveLength(2);
    calls[1]!();
    expect(await settled(second)).toBe(true);
  });

  it('makes the writes that wait for the same fsync share it', async () => {
    const { calls, sync } = controlledSync();
    const wal = new WalSync('db.sqlite-wal', sync);
    void wal.flushed();
    const waiting = [wal.flushed(), wal.flushed(), wal.flushed()];
    calls[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(2);
    calls[1]!();
    await Promise.all(waiting);
    expect(calls).toHaveLength(2);
    // Idle again: the next write starts its own.
    void wal.flushed();
    expect(calls).toHaveLength(3);
  });

  it('fails the write when the fsync fails, and the next write tries again', async () => {
    let attempt = 0;
    const wal = new WalSync('db.sqlite-wal', async () => {
      attempt += 1;
      if (attempt === 1) throw new Error('EIO');
    });
    await expect(wal.flushed()).rejects.toThrow('EIO');
    await expect(wal.flushed()).resolves.toBeUndefined();
  });

  it('runs the service’s writer with synchronous = NORMAL in WAL mode, and SQLite’s own fsync in memory', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dgw-wal-'));
    const url = `file:${path.join(dir, 'wal.db')}`;
    const writerSetting = async (db: ReturnType<typeof createDb>): Promise<number> => {
      // A transaction's statements run on the writer connection (plain reads go to the read-only one).
      const [row] = await db.$transaction((tx) => tx.$queryRawUnsafe<{ synchronous: number | bigint }[]>('PRAGMA synchronous'));
      return Number(row?.synchronous);
    };
    try {
      await migrate(url);
      const db = createDb(url);
      expect(await writerSetting(db)).toBe(1);
      await db.sharedSetting.create({ data: { name: 'wal-test', value: 'written', updated_at: new Date() } });
      await db.$disconnect();
      const reopened = new Database(path.join(dir, 'wal.db'), { readonly: true });
      expect(reopened.prepare("SELECT value FROM shared_settings WHERE name = 'wal-test'").get()).toEqual({ value: 'written' });
      reopened.close();

      const inMemory = createDb('file::memory:');
      expect(await writerSetting(inMemory)).toBe(2);
      await inMemory.$disconnect();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Records every SQL text better-sqlite3 prepares from now until `restore()`. Connections made after the
 * call are seen: the adapter's kept statements capture `prepare` when they connect.
 */
function recordPrepares(): { prepared: string[]; restore: () => void } {
  const prepared: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    prepared.push(source);
    return prepare.call(this, source);
  } as typeof prepare;
  return {
    prepared,
    restore: () => {
      Database.prototype.prepare = prepare;
    },
  };
}

describe('LIMIT and OFFSET written into the SQL (withLiteralLimit)', () => {
  const argType = { scalarType: 'int', arity: 'scalar' } as const;
  const query = (sql: string, args: unknown[]) => ({ sql, args, argTypes: args.map(() => argType) });

  it('writes a trailing LIMIT ? OFFSET ? as its two whole numbers, and leaves anything else as it is', () => {
    const sql = 'SELECT id FROM car WHERE id IN (?,?) ORDER BY id ASC LIMIT ? OFFSET ?';
    expect(withLiteralLimit(query(sql, [1, 2, -1, 0]))).toEqual(
      query('SELECT id FROM car WHERE id IN (?,?) ORDER BY id ASC LIMIT -1 OFFSET 0', [1, 2]),
    );
    expect(withLiteralLimit(query(sql, [1, 2, '25', 10n])).sql).toMatch(/ LIMIT 25 OFFSET 10$/);
    for (const unchanged of [
      query(sql, [1, 2, 'ten', 0]),
      query(sql, [1, 2, 1.5, 0]),
      query(sql, [1, 2, '1; DROP TABLE car', 0]),
      query('SELECT id FROM car WHERE id = ? LIMIT 5', [1]),
      query('SELECT id FROM (SELECT id FROM car LIMIT ? OFFSET ?) WHERE id > ?', [5, 0, 1]),
    ])
      expect(withLiteralLimit(unchanged)).toBe(unchanged);
  });

  it('leaves no statement of a read for SQLite to plan again on each run, and pages as before', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dgw-limit-'));
    const url = `file:${path.join(dir, 'limit.db')}`;
    const { prepared, restore } = recordPrepares();
    try {
      await migrate(url);
      const db = createDb(url);
      const names = ['a', 'b', 'c', 'd', 'e'];
      for (const name of names) await db.sharedSetting.create({ data: { name, value: name, updated_at: new Date() } });
      const page = (take?: number, skip?: number) =>
        db.sharedSetting
          .findMany({ orderBy: { name: 'asc' }, take, skip, select: { name: true } })
          .then((rows) => rows.map((row) => row.name));
      expect(await page()).toEqual(names);
      expect(await page(2, 1)).toEqual(['b', 'c']);
      expect(await page(undefined, 3)).toEqual(['d', 'e']);
      expect(await page(-2)).toEqual(['d', 'e']);
      expect(await db.sharedSetting.findFirst({ where: { name: { gt: 'b' } }, orderBy: { name: 'asc' } })).toMatchObject({ name: 'c' });
      const reads = prepared.filter((sql) => /^SELECT/.test(sql) && !/sqlite_master|PRAGMA/i.test(sql));
      for (const sql of reads) expect(sql).not.toMatch(/LIMIT \?|OFFSET \?/);
      expect(reads.length).toBeGreaterThan(4);
      // The same read again is answered by the kept statement: nothing new is prepared.
      const before = prepared.length;
      expect(await page(2, 1)).toEqual(['b', 'c']);
      expect(prepared.length).toBe(before);
      // A read inside a transaction (the writer connection's own path) is written the same way.
      const inTransaction = await db.$transaction((tx) =>
        tx.sharedSetting.findMany({ orderBy: { name: 'asc' }, take: 2, skip: 3, select: { name: true } }),
      );
      expect(inTransaction.map((row) => row.name)).toEqual(['d', 'e']);
      for (const sql of prepared.slice(before)) expect(sql).not.toMatch(/LIMIT \?|OFFSET \?/);
      expect(prepared.slice(before).some((sql) => / LIMIT 2 OFFSET 3$/.test(sql))).toBe(true);
      await db.$disconnect();
    } finally {
      restore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(testEngine === 'sqlite')('every documented read on SQLite', () => {
  it('reaches SQLite with its LIMIT and OFFSET written in, so no statement is planned again on each run', async () => {
    const { prepared, restore } = recordPrepares();
    try {
      const { app, key } = await createDemoApp();
      const before = prepared.length;
      for (const [field, path] of Object.entries(DEMO_READ_PATHS)) {
        expect((await app.request(path, { key })).status, field).toBeLessThan(400);
      }
      const reads = prepared.slice(before).filter((sql) => /^SELECT/i.test(sql));
      expect(reads.length).toBeGreaterThan(Object.keys(DEMO_READ_PATHS).length);
      for (const sql of reads) expect(sql).not.toMatch(/LIMIT \?|OFFSET \?/);
      await app.db.$disconnect();
    } finally {
      restore();
    }
  });
});
