// The key CLI as an operator runs it: a child process with DATABASE_URL, output on stdout. A key
// change is stored first, then announced over Redis: a Redis that cannot be reached or does not
// answer (frozen behind a TCP proxy that forwards nothing) leaves a committed change, exit code 0
// and one warning line saying when the instances see it instead (docs/permissions.md).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { redisKeyPrefixOf } from '../src/domain/shared-settings.ts';
import { connectRedis, redisKeyChangeFeed } from '../src/redis/client.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';
import { freePort } from './support/processes.ts';
import { startTcpProxy } from './support/tcp-proxy.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');

let app: TestApp;
let databaseUrl: string;

async function keys(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return keysWith({}, ...args);
}

async function keysWith(settings: Record<string, string>, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: databaseUrl, ...settings },
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

const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const WARNING =
  /^warning: key (\d+) changed and the change is stored, but the key-change broadcast could not be sent now: Redis \(REDIS_URL\) did not answer within 2000 ms\. Running instances see the change within API_KEY_CACHE_TTL_MS \((\d+) ms\), when the verdict they remember expires, instead of at once; open subscription streams of the key at their next event or heartbeat after that\n$/;

describe('keys revoke and the key-change broadcast', { timeout: 120_000 }, () => {
  /** Revokes a fresh key with REDIS_URL as given; the revocation is stored, and the key is refused once the TTL has passed. */
  async function revokeThrough(url: string): Promise<{ id: number; stdout: string; stderr: string; code: number }> {
    const { id, key } = await makeKey(app.db, { permissions: ['read:car'] });
    // The app's clock may be ahead after an earlier test: its verdict is remembered from now on.
    app.clock.set(new Date());
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key })).status).toBe(200);
    const result = await keysWith({ REDIS_URL: url }, 'revoke', String(id));
    expect((await app.db.apiKey.findUniqueOrThrow({ where: { id } })).revoked_at).not.toBeNull();
    // The test app was not told (it listens to no Redis): it sees the revocation once its verdict expires.
    app.clock.set(new Date(Date.now() + 1000 + app.config.apiKeyCacheTtlMs));
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key })).status).toBe(401);
    return { id, ...result };
  }

  it('announces the revocation to the instances when Redis answers: exit 0, nothing on stderr', async () => {
    const prefix = await redisKeyPrefixOf(app.db, null);
    const listener = connectRedis(redisUrl.toString(), pino({ level: 'silent' }), prefix);
    const heard: number[] = [];
    try {
      await listener.ready();
      redisKeyChangeFeed(listener, pino({ level: 'silent' })).subscribe((apiKeyId) => heard.push(apiKeyId));
      // Subscribed once the subscriber connection has answered a command after SUBSCRIBE.
      await listener.subscriber.call('PING');
      const result = await revokeThrough(redisUrl.toString());
      expect(result, JSON.stringify(result)).toMatchObject({ code: 0, stderr: '', stdout: `key #${result.id} revoked\n` });
      expect(heard).toContain(result.id);
    } finally {
      listener.client.disconnect();
      listener.subscriber.disconnect();
    }
  });

  it('Redis frozen (a proxy that forwards nothing, for longer than the 2 s the CLI waits): the revocation is committed, exit 0, one warning line', async () => {
    const proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    proxy.freeze();
    try {
      const result = await revokeThrough(`redis://127.0.0.1:${proxy.port}`);
      expect(result.code, JSON.stringify(result)).toBe(0);
      expect(result.stdout).toBe(`key #${result.id} revoked\n`);
      const warning = WARNING.exec(result.stderr);
      expect(warning, result.stderr).not.toBeNull();
      expect(Number(warning?.[1])).toBe(result.id);
      expect(Number(warning?.[2])).toBe(5000);
    } finally {
      proxy.thaw();
      await proxy.stop();
    }
  });

  it('Redis refusing connections: the revocation is committed, exit 0, one warning line', async () => {
    const result = await revokeThrough(`redis://127.0.0.1:${await freePort()}`);
    expect(result.code, JSON.stringify(result)).toBe(0);
    expect(result.stderr).toMatch(WARNING);
  });
});
