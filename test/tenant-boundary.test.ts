// The tenant boundary, held by the type checker (ScopedDb, src/db/scoped.ts) and by this walk: in the
// resolvers and domain rules, only the modules ARCHITECTURE.md lists ("The tenant boundary") hold the
// unscoped client, as `Db` or `context.unscopedDb`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../src/db/client.ts';
import { forDealerships, type ScopedDb } from '../src/db/scoped.ts';
import { typescriptSources } from './support/source-files.ts';

const root = path.resolve(import.meta.dirname, '..');

/** A file reaches the unscoped client when it names the `Db` type or the context's escape hatch. */
const UNSCOPED = /\bunscopedDb\b|\bDb\b(?!Clients)/;

describe('the tenant boundary', () => {
  it('lets only the modules ARCHITECTURE.md names hold the unscoped client in src/schema and src/domain', () => {
    const architecture = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');
    const section = architecture.slice(architecture.indexOf('## The tenant boundary'), architecture.indexOf('### Raw statements'));
    const listed = section
      .split('\n')
      .filter((line) => line.startsWith('| src/'))
      .flatMap((line) =>
        line
          .split('|')[1]!
          .split(',')
          .map((name) => name.trim()),
      );
    expect(listed.length).toBeGreaterThan(5);
    const holding = [...typescriptSources('src/schema'), ...typescriptSources('src/domain')].filter((file) => {
      // Comments may speak of the client; code may not hold it.
      const code = readFileSync(path.join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return UNSCOPED.test(code);
    });
    expect(holding.sort()).toEqual([...listed].sort());
  });

  it('lets only the modules ARCHITECTURE.md names ("Raw statements") run raw statements in src/schema, src/domain and src/notifications', () => {
    const architecture = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');
    const section = architecture.slice(
      architecture.indexOf('### Raw statements'),
      architecture.indexOf('## Where each dependency comes from'),
    );
    const listed = section
      .split('\n')
      .filter((line) => line.startsWith('| src/'))
      .flatMap((line) =>
        line
          .split('|')[1]!
          .split(',')
          .map((name) => name.trim()),
      );
    expect(listed.length).toBeGreaterThan(5);
    const raw = /\$(queryRaw|executeRaw)(Unsafe)?\b|\binsertRow(s|Returning)\b/;
    const running = [
      ...typescriptSources('src/schema'),
      ...typescriptSources('src/domain'),
      ...typescriptSources('src/notifications'),
    ].filter((file) => raw.test(readFileSync(path.join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')));
    expect(running.sort()).toEqual([...listed].sort());
  });

  it('makes handing the unscoped client to what takes the caller’s a compile error (npm run typecheck)', () => {
    const unscoped = {} as Db;
    // @ts-expect-error: the service's own client is not a caller's; only forActor/forDealerships make one.
    const scoped: ScopedDb = unscoped;
    expect(scoped).toBe(unscoped);
    // Every dealership, said on purpose, is the one way to give it the whole database.
    expect(forDealerships(unscoped, null)).toBe(unscoped);
  });
});
