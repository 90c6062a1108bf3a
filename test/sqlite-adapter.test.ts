// The SQLite adapter keeps its prepared statements (src/db/sqlite-adapter.ts): one statement per SQL
// text, reused with other arguments, the least recently used dropped past the bound.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { keepPreparedStatements } from '../src/db/sqlite-adapter.ts';

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
