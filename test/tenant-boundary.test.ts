// The tenant boundary, held by the type checker (ScopedDb, src/db/scoped.ts) and by this walk: in the
// resolvers and domain rules, only the modules scripts/docs/tenant-boundary.ts declares hold the
// unscoped client, as `Db` or `context.unscopedDb`, or run raw statements.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Db, Prisma } from '../src/db/client.ts';
import { forDealerships, type ScopedDb, type ScopedTx } from '../src/db/scoped.ts';
import { modulesOf, RAW_STATEMENT_MODULES, UNSCOPED_CLIENT_HOLDERS } from '../scripts/docs/tenant-boundary.ts';
import { typescriptSources } from './support/source-files.ts';

const root = path.resolve(import.meta.dirname, '..');

/** A file reaches the unscoped client when it names the `Db` type or the context's escape hatch. */
const UNSCOPED = /\bunscopedDb\b|\bDb\b(?!Clients)/;

/** The TypeScript files under `folders` whose code (comments may speak of anything) matches `pattern`. */
function codeMatching(folders: readonly string[], pattern: RegExp): string[] {
  return folders
    .flatMap((folder) => typescriptSources(folder))
    .filter((file) => pattern.test(readFileSync(path.join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')));
}

describe('the tenant boundary', () => {
  it('lets only the declared modules hold the unscoped client in src/schema and src/domain', () => {
    const listed = modulesOf(UNSCOPED_CLIENT_HOLDERS);
    expect(listed.length).toBeGreaterThan(5);
    expect(codeMatching(['src/schema', 'src/domain'], UNSCOPED).sort()).toEqual([...listed].sort());
  });

  it('lets only the declared modules run raw statements in src/schema, src/domain and src/notifications', () => {
    const listed = modulesOf(RAW_STATEMENT_MODULES);
    expect(listed.length).toBeGreaterThan(5);
    const raw = /\$(queryRaw|executeRaw)(Unsafe)?\b|\binsertRow(s|Returning)\b|\breadRows\b/;
    expect(codeMatching(['src/schema', 'src/domain', 'src/notifications'], raw).sort()).toEqual([...listed].sort());
  });

  it('makes handing the unscoped client to what takes the caller’s a compile error (npm run typecheck)', () => {
    const unscoped = {} as Db;
    // @ts-expect-error: the service's own client is not a caller's; only forActor/forDealerships make one.
    const scoped: ScopedDb = unscoped;
    expect(scoped).toBe(unscoped);
    // Every dealership, said on purpose, is the one way to give it the whole database.
    expect(forDealerships(unscoped, null)).toBe(unscoped);
  });

  it('hands a transaction opened from the caller’s client a scoped transaction client (npm run typecheck)', () => {
    const open = (db: ScopedDb) => db.$transaction(async (tx) => tx);
    expectTypeOf<Awaited<ReturnType<typeof open>>>().toEqualTypeOf<ScopedTx>();
    // @ts-expect-error: a transaction of the service's own client is not a caller's.
    const tx: ScopedTx = {} as Prisma.TransactionClient;
    expect(tx).toBeDefined();
  });
});
