// The CLIs as an operator runs them, as real processes, when what they need does not answer (a key
// change that Redis could not announce is test/keys-cli.test.ts's):
// - PostgreSQL: every CLI (keys, documents, outbox, secrets, db:migrate, db:seed) with the database refusing
//   connections, and frozen behind a TCP proxy this test controls: one line, exit 1, within
//   CLI_TIMEOUT_MS;
// - SQLite: while another connection holds the write lock (as the service seeding the demo data
//   does), every CLI that only reads finishes, and one that writes waits for the lock and succeeds;
//   held past CLI_TIMEOUT_MS, the writer ends with the one line.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlitePath } from '../src/config/index.ts';
import { testSettings, createTestApp, type TestApp } from './support/app.ts';
import { testEngine } from './support/database.ts';
import { freePort, runScript, type Finished } from './support/processes.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

/** Each command is a process that starts tsx: seconds apiece on a busy machine. */
const CLI_TEST_TIMEOUT_MS = 180_000;
const CLI_TIMEOUT_MS = 4_000;

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
  app.clock.set(new Date());
});

/** Every CLI of package.json that opens the database, with a command that does. */
const CLIS: readonly { name: string; script: string; args: readonly string[] }[] = [
  { name: 'keys', script: 'scripts/keys.ts', args: ['list'] },
  { name: 'documents', script: 'scripts/documents.ts', args: ['list'] },
  { name: 'outbox', script: 'scripts/outbox.ts', args: ['list'] },
  { name: 'secrets', script: 'scripts/secrets.ts', args: ['status'] },
  { name: 'db:migrate', script: 'scripts/migrate.ts', args: [] },
  { name: 'db:seed', script: 'scripts/seed.ts', args: [] },
  { name: 'seed', script: 'scripts/seed.ts', args: [] },
];

/** Each command of CLIS once (`seed` and `db:seed` are one script: run together, they would race each other). */
const DISTINCT_CLIS = CLIS.filter((one, index) => CLIS.findIndex((other) => other.script === one.script) === index);

function cli(script: string, args: readonly string[], settings: Record<string, string>): Promise<Finished & { ms: number }> {
  const started = Date.now();
  return runScript(script, args, {
    ...testSettings,
    DATABASE_URL: app.config.databaseUrl,
    CLI_TIMEOUT_MS: String(CLI_TIMEOUT_MS),
    ...settings,
  }).then((result) => ({
    ...result,
    ms: Date.now() - started,
  }));
}

/** A failure an operator reads: exit 1 and one line on stderr, no stack trace. */
function expectOneLineFailure(result: Finished, pattern: RegExp, label: string): void {
  const report = `${label}: ${JSON.stringify(result)}`;
  expect(result.code, report).toBe(1);
  expect(result.stderr.trimEnd().split('\n'), report).toHaveLength(1);
  expect(result.stderr, report).toMatch(pattern);
}

it('lists every CLI of package.json that opens the database', async () => {
  const { scripts } = (await import('../package.json', { with: { type: 'json' } })).default as { scripts: Record<string, string> };
  const databaseClis = Object.entries(scripts)
    .filter(([, command]) => /^tsx scripts\/(keys|documents|outbox|secrets|migrate|seed)\.ts$/.test(command))
    .map(([name]) => name);
  expect(databaseClis.sort()).toEqual(CLIS.map(({ name }) => name).sort());
});

describe.runIf(testEngine === 'postgresql')('every CLI while PostgreSQL does not answer', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let proxy: TcpProxy;
  beforeAll(async () => {
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.config.databaseUrl).port || 5432) });
  });
  afterAll(() => proxy.stop());

  it('refusing connections: one line naming DATABASE_URL, exit 1', async () => {
    const refused = new URL(app.config.databaseUrl);
    refused.port = String(await freePort());
    const results = await Promise.all(CLIS.map(({ script, args }) => cli(script, args, { DATABASE_URL: refused.toString() })));
    for (const [index, result] of results.entries()) expectOneLineFailure(result, /DATABASE_URL/, CLIS[index]!.name);
  });

  it('frozen: one line saying CLI_TIMEOUT_MS ran out, exit 1, none left waiting', async () => {
    const frozen = new URL(app.config.databaseUrl);
    frozen.port = String(proxy.port);
    proxy.freeze();
    try {
      const results = await Promise.all(CLIS.map(({ script, args }) => cli(script, args, { DATABASE_URL: frozen.toString() })));
      for (const [index, result] of results.entries()) {
        expectOneLineFailure(
          result,
          new RegExp(`not finished after ${CLI_TIMEOUT_MS} ms, the database or Redis did not answer`),
          CLIS[index]!.name,
        );
      }
    } finally {
      proxy.thaw();
    }
  });
});

describe.runIf(testEngine === 'sqlite')(
  'every CLI while another process holds the SQLite write lock',
  { timeout: CLI_TEST_TIMEOUT_MS },
  () => {
    /** Holds the write lock (a transaction begun IMMEDIATE) for `ms`, as a long write of the service. */
    function holdWriteLock(ms: number): Promise<void> {
      const holder = new Database(sqlitePath(app.config.databaseUrl));
      holder.exec('BEGIN IMMEDIATE');
      return new Promise((resolve) =>
        setTimeout(() => {
          holder.exec('ROLLBACK');
          holder.close();
          resolve();
        }, ms),
      );
    }

    it('the readers finish, and a writer waits for the lock and succeeds', async () => {
      // Longer than better-sqlite3's default busy timeout (5 s) and the migrations' own (10 s).
      const HOLD_MS = 12_000;
      const released = holdWriteLock(HOLD_MS);
      const started = Date.now();
      const [readers, writer] = await Promise.all([
        Promise.all(DISTINCT_CLIS.map(({ script, args }) => cli(script, args, { CLI_TIMEOUT_MS: '60000' }))),
        cli('scripts/keys.ts', ['create', '--name', 'while-busy', '--permission', 'read:car'], { CLI_TIMEOUT_MS: '60000' }),
      ]);
      await released;
      for (const [index, result] of readers.entries()) expect(result, DISTINCT_CLIS[index]!.name).toMatchObject({ code: 0, stderr: '' });
      expect(writer, JSON.stringify(writer)).toMatchObject({ code: 0, stderr: '' });
      expect(writer.stdout).toMatch(/^dlr_/);
      // It waited for the lock rather than failing before it was released.
      expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_MS);
      expect(await app.db.apiKey.count({ where: { name: 'while-busy' } })).toBe(1);
    });

    it('a writer ends with the one line once CLI_TIMEOUT_MS has run out', async () => {
      const released = holdWriteLock(CLI_TIMEOUT_MS + 20_000);
      const result = await cli('scripts/keys.ts', ['create', '--name', 'too-busy', '--permission', 'read:car'], {});
      await released;
      expectOneLineFailure(
        result,
        new RegExp(`the database did not answer within ${CLI_TIMEOUT_MS} ms \\(CLI_TIMEOUT_MS\\)|not finished after ${CLI_TIMEOUT_MS} ms`),
        'keys create',
      );
      expect(await app.db.apiKey.count({ where: { name: 'too-busy' } })).toBe(0);
    });
  },
);
