// The service behind PgBouncer in transaction mode (docs/operations.md, "Several instances"): any transaction may
// run on any server connection, so nothing may rely on session state. A real PgBouncer, started
// here with fewer server connections than the clients open, in front of the suite's PostgreSQL.
// PostgreSQL only; skipped where Debian's pgbouncer is not installed (apt-get install pgbouncer).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { migrate, readMigrations } from '../src/db/migrate.ts';
import { checkSessionSecret } from '../src/domain/shared-settings.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { instanceDeps, createClock, testSettings } from './support/app.ts';
import { onFileEnd } from './support/cleanup.ts';
import { createEmptyDatabase, postgresAdminUrl, testEngine } from './support/database.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';
import { PDF_BYTES, samplePayload } from './support/fixtures-leads.ts';
import { freePort } from './support/processes.ts';

const PGBOUNCER = '/usr/sbin/pgbouncer';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PgBouncer in transaction mode with `poolSize` server connections; resolves once it accepts connections. */
async function startPgBouncer(poolSize: number): Promise<{ port: number; stop(): Promise<void> }> {
  const server = new URL(postgresAdminUrl);
  const dir = mkdtempSync(path.join(tmpdir(), 'pgbouncer-'));
  // PgBouncer refuses to run as root; as another user it must be able to write its log here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(path.join(dir, 'users.txt'), `"${server.username || 'postgres'}" ""\n`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 200',
      // Debian 12's PgBouncer (1.18) predates prepared-statement support: a named prepared statement
      // reaching another server connection would fail here.
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      'ignore_startup_parameters = extra_float_digits,options',
    ].join('\n'),
  );
  const asUser = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child: ChildProcess = spawn(PGBOUNCER, [...asUser, path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGINT');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const client = new pg.Client({ host: '127.0.0.1', port, user: server.username || 'postgres', database: 'postgres' });
    const ready = await client.connect().then(
      () => true,
      () => false,
    );
    await client.end().catch(() => undefined);
    if (ready) return { port, stop };
    if (child.exitCode !== null) break;
    await sleep(50);
  }
  const log = existsSync(path.join(dir, 'pgbouncer.log')) ? readFileSync(path.join(dir, 'pgbouncer.log'), 'utf8') : '';
  await stop();
  throw new Error(`pgbouncer did not start: ${log.slice(-2_000)}`);
}

describe.runIf(testEngine === 'postgresql' && existsSync(PGBOUNCER))('behind PgBouncer in transaction mode', () => {
  it('migrates once from three instances, then serves writes and transactions with fewer server connections than clients', async () => {
    const bouncer = await startPgBouncer(2);
    onFileEnd(() => bouncer.stop());
    const database = await createEmptyDatabase();
    onFileEnd(() => database.drop());
    const direct = new URL(database.url);
    const viaBouncer = new URL(database.url);
    viaBouncer.host = `127.0.0.1:${bouncer.port}`;

    // Three instances starting together, the first seeding under the lock (a query through the pooler).
    const seeded: number[] = [];
    const results = await Promise.all(
      [1, 2, 3].map((instance) =>
        migrate(viaBouncer.toString(), async () => {
          const seeder = new pg.Client({ connectionString: viaBouncer.toString() });
          await seeder.connect();
          try {
            const { rows } = await seeder.query<{ count: string }>('SELECT count(*) AS count FROM dealerships');
            if (Number(rows[0]?.count) === 0) {
              await seeder.query(`INSERT INTO dealerships (name, slug, updated_at) VALUES ('Pooled Motors', 'pooled-motors', now())`);
              seeded.push(instance);
            }
          } finally {
            await seeder.end();
          }
        }),
      ),
    );
    expect(results.filter((applied) => applied.length > 0)).toEqual([readMigrations('postgresql').map((migration) => migration.name)]);
    expect(seeded).toHaveLength(1);

    // Two instances' clients, 4 connections each, over 2 server connections.
    const config = loadConfig({ ...testSettings, DATABASE_URL: viaBouncer.toString() });
    expect(config.fileStorage).toBe('database');
    const clock = createClock(new Date());
    const instances = [createDb(viaBouncer.toString(), { poolMax: 4 }), createDb(viaBouncer.toString(), { poolMax: 4 })];
    onFileEnd(() => Promise.all(instances.map((db) => db.$disconnect())).then(() => undefined));
    const apps = instances.map((db) => createApp(instanceDeps({ config, db, now: clock.now })));
    const appOf = (index: number) => apps[index % apps.length]!;
    expect(await Promise.all(instances.map((db) => checkSessionSecret(db, testSettings.SESSION_SIGNING_SECRET)))).toContain('recorded');

    const db = instances[0]!;
    const dealership = await makeDealership(db);
    const car = await makeCar(db, dealership.id);
    const { key } = await makeKey(db, { permissions: ['create:lead', 'update:lead', 'reserve:car'], dealershipIds: [dealership.id] });
    const call = (yoga: (typeof apps)[number], method: string, url: string, body?: unknown) =>
      Promise.resolve(
        yoga.fetch(`http://gateway.test${url}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        }),
      );

    // Many transactions at once from both instances: leads with a file each, and a reservation race.
    const leads = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        call(appOf(index), 'POST', '/api/v1/leads', {
          lead: samplePayload(dealership.id, {
            email: `pooled${index}@example.com`,
            lead_files_attributes: [{ file_type: 'resume', file: PDF_BYTES.toString('base64') }],
          }),
        }),
      ),
    );
    expect(leads.map((response) => response.status)).toEqual(Array(8).fill(201));
    const reservations = await Promise.all(
      Array.from({ length: 6 }, (_, index) => call(appOf(index), 'PUT', `/api/v1/cars/${car.id}/reserve?reserved=true`)),
    );
    expect(reservations.map((response) => response.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(await instances[1]!.storedFile.count()).toBe(8);

    // Nothing is left held on a server connection. pg_locks lists the whole server's locks: only this
    // database's count (other test files migrate theirs, under the same lock key, at the same time).
    const observer = new pg.Client({ connectionString: direct.toString() });
    await observer.connect();
    try {
      const { rows } = await observer.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
      expect(rows).toEqual([]);
    } finally {
      await observer.end();
    }
  }, 240_000);
});
