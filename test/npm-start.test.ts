// `npm start` runs the compiled service (building dist/ first when it is stale) and passes SIGTERM on
// to it: a SIGTERM to the npm process stops the server, and npm exits 0.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/config/index.ts';
import { createMigratedDatabase, type TestDatabase } from './support/database.ts';
import { keepAliveClient, sleep } from './support/http-client.ts';
import { freePort } from '../scripts/free-port.ts';
import { NO_ENV_FILE } from './support/processes.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createMigratedDatabase();
});

afterAll(async () => {
  await database.drop();
});

describe('npm start', () => {
  it('serves from dist/ and stops, exiting 0, when npm gets SIGTERM', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: projectRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...NO_ENV_FILE,
        DATABASE_URL: database.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        SEED_DEMO_DATA: 'false',
        PUBLIC_URL: 'http://127.0.0.1',
        SESSION_SIGNING_SECRET: 'npm-start-test-signing-secret-0123456789',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    npm.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.once('exit', (code, signal) => resolve({ code, signal })),
    );

    const client = keepAliveClient(port);
    let health = await client.send('GET', '/health');
    // The first start may compile dist/ (prestart) before it listens.
    while (!('status' in health) && npm.exitCode === null) {
      await sleep(100);
      health = await client.send('GET', '/health');
    }
    client.close();
    expect(health, stderr).toMatchObject({ status: 200 });
    expect(existsSync(path.join(projectRoot, 'dist', 'src', 'index.js'))).toBe(true);

    npm.kill('SIGTERM');
    expect(await exited, stderr).toEqual({ code: 0, signal: null });
    // The server went with it: nothing listens on the port any more.
    expect(await keepAliveClient(port).send('GET', '/health')).toMatchObject({ error: 'ECONNREFUSED' });
  }, 240_000);
});
