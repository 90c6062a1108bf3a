// The key CLI as an operator runs it: a child process with DATABASE_URL, output on stdout.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership } from './support/fixtures.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

let app: TestApp;
let databaseUrl: string;

async function keys(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

beforeAll(async () => {
  app = await createTestApp();
  // The CLI opens its own connection to the test app's database and uses the real clock.
  databaseUrl = app.config.databaseUrl;
  app.clock.set(new Date());
});

// Each case starts the CLI (tsx) several times; on a busy machine one start can take seconds.
describe('npm run keys', { timeout: 120_000 }, () => {
  it('create --all-permissions prints only the secret, which then works', async () => {
    const result = await keys('create', '--name', 'demo', '--all-permissions');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^dlr_[0-9A-Za-z]{12}_[0-9A-Za-z]{38}\n$/);
    const key = result.stdout.trim();
    const response = await app.request('/api/v1/apikeys/apikey_details.json', { key });
    expect(response.status).toBe(200);
    expect((await response.json()).permissions).toContain('create:partner_token');
    // Only a hash is stored: the secret appears nowhere in the key tables.
    const secrets = await app.db.apiKeySecret.findMany();
    expect(JSON.stringify(secrets)).not.toContain(key.slice(17));
  });

  it('creates a restricted key, lists it as JSON, rotates and revokes it', async () => {
    const dealership = await makeDealership(app.db);
    const created = await keys('create', '--name', 'crm', '--permission', 'read:car', '--dealership', String(dealership.id), '--json');
    expect(created.code).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: number; key: string };

    const listed = JSON.parse((await keys('list', '--json')).stdout) as { id: number; permissions: string[]; dealership_ids: number[] }[];
    expect(listed.find((row) => row.id === id)).toMatchObject({ permissions: ['read:car'], dealership_ids: [dealership.id] });

    const rotated = await keys('rotate', String(id), '--overlap-hours', '0');
    expect(rotated.code).toBe(0);
    const newKey = rotated.stdout.trim();
    app.clock.set(new Date(Date.now() + 1000));
    expect(newKey).not.toBe(key);
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key: newKey })).status).toBe(200);
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key })).status).toBe(401);

    expect((await keys('revoke', String(id))).code).toBe(0);
    // Without Redis to announce it, the service sees the revocation within API_KEY_CACHE_TTL_MS.
    app.clock.set(new Date(Date.now() + 1000 + app.config.apiKeyCacheTtlMs));
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key: newKey })).status).toBe(401);
  });

  it('refuses an unknown permission and explains usage', async () => {
    const result = await keys('create', '--name', 'x', '--permission', 'delete:everything');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/"delete:everything" is not a permission/);
    expect(result.stdout).toBe('');
  });
});
