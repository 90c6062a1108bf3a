// Starting the service and its CLIs as real processes with good and bad settings: every failure is
// one log line naming the setting and what to do (no stack trace) and a non-zero exit; development
// mode is explicit and says loudly that it is not for production.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/client.ts';
import { sessionSecretFingerprint } from '../src/domain/shared-settings.ts';
import { sealProcessorKey } from '../src/domain/stored-secrets.ts';
import { envelopeKeyId, keyringOf, open } from '../src/config/secrets.ts';
import { TEST_ENCRYPTION_KEY, testKeyring, testSettings } from './support/app.ts';
import { createEmptyDatabase, createMigratedDatabase, type TestDatabase } from './support/database.ts';
import { freePort, occupyPort, runScript, startService, type Finished } from './support/processes.ts';

const PROCESS_TIMEOUT = 120_000;
const STACK_FRAME = /^\s+at .+\(?.*:\d+:\d+\)?$/m;

let database: TestDatabase;
let unreachableDatabaseUrl: string;

beforeAll(async () => {
  database = await createMigratedDatabase();
  unreachableDatabaseUrl = `postgresql://postgres@127.0.0.1:${await freePort()}/dealership`;
});
afterAll(async () => {
  await database.drop();
});

/** The one fatal line of a failed start, checked for shape: JSON, level fatal, no stack anywhere. */
function fatalLine(result: Finished): { settings: string[]; msg: string } {
  expect(result.code).toBe(1);
  expect(result.stdout + result.stderr).not.toMatch(STACK_FRAME);
  const lines = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { level: number; settings: string[]; msg: string });
  const fatal = lines.filter((line) => line.level === 60);
  expect(fatal).toHaveLength(1);
  expect(lines.at(-1)).toBe(fatal[0]);
  expect(result.stderr.trim()).toBe('');
  return fatal[0]!;
}

/** A settings file in a folder of its own, for ENV_FILE. */
function writeEnvFile(lines: readonly string[]): { file: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gateway-env-'));
  const file = path.join(dir, 'gateway.env');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const serviceSettings = () => ({ ...testSettings, LOG_LEVEL: 'info', DATABASE_URL: database.url });

describe('a start outside development mode', () => {
  it.concurrent(
    'refuses to start without PUBLIC_URL, SESSION_SIGNING_SECRET and SECRETS_ENCRYPTION_KEYS, naming each and the way out',
    async () => {
      const fatal = fatalLine(await runScript('src/index.ts', [], { DATABASE_URL: database.url }));
      expect(fatal.settings).toEqual(['PUBLIC_URL', 'SESSION_SIGNING_SECRET', 'SECRETS_ENCRYPTION_KEYS']);
      expect(fatal.msg).toMatch(/^cannot start: fix these settings: PUBLIC_URL is required: set it to this service's public origin/);
      expect(fatal.msg).toContain('SESSION_SIGNING_SECRET is required');
      expect(fatal.msg).toContain('SECRETS_ENCRYPTION_KEYS is required');
      expect(fatal.msg).toContain('npm run --silent secrets -- new-key');
      expect(fatal.msg).toContain('APP_MODE=development or --dev');
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'reports every bad setting at once, echoing no secret',
    async () => {
      const fatal = fatalLine(
        await runScript('src/index.ts', [], {
          ...testSettings,
          PORT: 'abc',
          LOG_LEVEL: 'loud',
          DATABASE_URL: 'mysql://root:hunter2@db/dealership',
          SESSION_SIGNING_SECRET: 'too-short-secret',
          SECRETS_ENCRYPTION_KEYS: 'k1:c2hvcnQ=',
          PUBLIC_URL: 'ftp://gateway.example.com',
          SEED_DEMO_DATA: 'maybe',
          SMTP_URL: 'http://mail.example.com',
        }),
      );
      expect(fatal.settings).toEqual([
        'PORT',
        'DATABASE_URL',
        'LOG_LEVEL',
        'SEED_DEMO_DATA',
        'PUBLIC_URL',
        'SESSION_SIGNING_SECRET',
        'SECRETS_ENCRYPTION_KEYS',
        'SMTP_URL',
      ]);
      expect(fatal.msg).toContain('PORT must be a whole number from 0 to 65535 (got "abc")');
      expect(fatal.msg).toContain('DATABASE_URL must start with file: (SQLite');
      expect(fatal.msg).toContain('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")');
      expect(fatal.msg).toContain('PUBLIC_URL must be an http:// or https:// URL');
      expect(fatal.msg).toContain('SESSION_SIGNING_SECRET must be at least 32 characters');
      expect(fatal.msg).toContain('SECRETS_ENCRYPTION_KEYS key "k1" must be 32 bytes in base64');
      for (const secret of ['hunter2', 'too-short-secret', 'c2hvcnQ=']) expect(fatal.msg).not.toContain(secret);
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'names DATABASE_URL when the database does not answer',
    async () => {
      const fatal = fatalLine(await runScript('src/index.ts', [], { ...serviceSettings(), DATABASE_URL: unreachableDatabaseUrl }));
      expect(fatal.settings).toEqual(['DATABASE_URL']);
      expect(fatal.msg).toMatch(
        /^cannot start: DATABASE_URL: nothing answers at 127\.0\.0\.1:\d+\/dealership: start the database server or fix DATABASE_URL$/,
      );
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'names DATABASE_URL when the SQLite file cannot be created',
    async () => {
      const fatal = fatalLine(
        await runScript('src/index.ts', [], { ...serviceSettings(), DATABASE_URL: 'file:/etc/hostname/dealership.db' }),
      );
      expect(fatal.settings).toEqual(['DATABASE_URL']);
      expect(fatal.msg).toBe(
        'cannot start: DATABASE_URL: /etc/hostname/dealership.db cannot be created: a part of its directory is a file: choose another path in DATABASE_URL',
      );
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'names PORT when the port is in use',
    async () => {
      const taken = await occupyPort();
      try {
        const fatal = fatalLine(await runScript('src/index.ts', [], { ...serviceSettings(), PORT: String(taken.port) }));
        expect(fatal.settings).toEqual(['PORT']);
        expect(fatal.msg).toBe(
          `cannot start: PORT ${taken.port} is already in use on 0.0.0.0: stop the other process or set PORT to a free port`,
        );
      } finally {
        await taken.release();
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'refuses development mode together with NODE_ENV=production',
    async () => {
      const fatal = fatalLine(await runScript('src/index.ts', ['--dev'], { DATABASE_URL: database.url, NODE_ENV: 'production' }));
      expect(fatal.settings).toEqual(['APP_MODE']);
      expect(fatal.msg).toContain('APP_MODE development cannot be combined with NODE_ENV=production');
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    "reports the rules between settings and the .env file's bad values in the same one line",
    async () => {
      const envFile = writeEnvFile(['PORT=http', 'HTTP_HEADERS_TIMEOUT_MS=60000', 'HTTP_REQUEST_TIMEOUT_MS=1000']);
      try {
        const fatal = fatalLine(
          await runScript('src/index.ts', [], {
            ...testSettings,
            DATABASE_URL: database.url,
            ENV_FILE: envFile.file,
            FILE_STORAGE: 's3',
            RATE_LIMIT_KEY_COST: '10',
          }),
        );
        expect(fatal.settings).toEqual(['PORT', 'HTTP_HEADERS_TIMEOUT_MS', 'S3_BUCKET', 'RATE_LIMIT_KEY_COST']);
        expect(fatal.msg).toContain('PORT must be a whole number from 0 to 65535 (got "http")');
        expect(fatal.msg).toContain('HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS');
        expect(fatal.msg).toContain('S3_BUCKET is required with FILE_STORAGE=s3');
        expect(fatal.msg).toContain('RATE_LIMIT_KEY_COST must be 0 (no budget) or at least GRAPHQL_MAX_COST (5000)');
      } finally {
        envFile.remove();
      }
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'names ENV_FILE when it names no file',
    async () => {
      const fatal = fatalLine(await runScript('src/index.ts', [], { ...serviceSettings(), ENV_FILE: '/nonexistent/gateway.env' }));
      expect(fatal.settings).toEqual(['ENV_FILE']);
      expect(fatal.msg).toBe(
        'cannot start: fix these settings: ENV_FILE names a file that does not exist: /nonexistent/gateway.env (set ENV_FILE=off to read none)',
      );
    },
    PROCESS_TIMEOUT,
  );

  it(
    'reads the settings the environment does not set from the .env file, the environment winning, logs their names only and warns of a name that is no setting',
    async () => {
      const { PUBLIC_URL, SESSION_SIGNING_SECRET, SECRETS_ENCRYPTION_KEYS } = testSettings;
      const envFile = writeEnvFile([
        '# the secrets and the public URL come from the file',
        `PUBLIC_URL=${PUBLIC_URL}`,
        `SESSION_SIGNING_SECRET="${SESSION_SIGNING_SECRET}"`,
        `SECRETS_ENCRYPTION_KEYS=${SECRETS_ENCRYPTION_KEYS}`,
        'LOG_LEVEL=loud',
        'PROT=4001',
      ]);
      try {
        const service = await startService([], {
          DATABASE_URL: database.url,
          LOG_LEVEL: 'info',
          ENV_FILE: envFile.file,
          PORT: String(await freePort()),
        });
        try {
          const read = service.lines.find((line) => line.msg === 'settings read from the env file') as
            | { file: string; settings: string[] }
            | undefined;
          expect(read?.file).toBe(envFile.file);
          expect(read?.settings.sort()).toEqual(['PROT', 'PUBLIC_URL', 'SECRETS_ENCRYPTION_KEYS', 'SESSION_SIGNING_SECRET']);
          expect(JSON.stringify(service.lines)).not.toContain(SESSION_SIGNING_SECRET);
          expect(JSON.stringify(service.lines)).not.toContain(SECRETS_ENCRYPTION_KEYS.split(':')[1]);
          // The one warning: a name that is no setting (a typo of PORT) is pointed out, not silently ignored.
          expect(service.lines.filter((line) => line.level === 40 || line.level === 60)).toEqual([
            expect.objectContaining({
              file: envFile.file,
              names: ['PROT'],
              msg: expect.stringMatching(/^the env file sets variables that are not settings/),
            }),
          ]);
        } finally {
          expect(await service.stop()).toBe(0);
        }
      } finally {
        envFile.remove();
      }
    },
    PROCESS_TIMEOUT,
  );

  it(
    'starts with the settings given, with no development warning and no demo data',
    async () => {
      const service = await startService([], { ...serviceSettings(), PORT: String(await freePort()) });
      try {
        expect(service.lines.filter((line) => line.level === 40 || line.level === 60)).toEqual([]);
        expect(service.lines.some((line) => String(line.msg).includes('seeded demo data'))).toBe(false);
      } finally {
        await service.stop();
      }
    },
    PROCESS_TIMEOUT,
  );
});

describe('instances sharing a database', () => {
  it(
    'refuse to start with another SESSION_SIGNING_SECRET than the one recorded, until record-session-secret changes it',
    async () => {
      const shared = await createMigratedDatabase();
      const first = 'first-session-signing-secret-0123456789abcdef';
      const second = 'second-session-signing-secret-0123456789abcdef';
      const settings = (secret: string) => ({ ...serviceSettings(), DATABASE_URL: shared.url, SESSION_SIGNING_SECRET: secret });
      const db: Db = createDb(shared.url);
      try {
        const service = await startService([], { ...settings(first), PORT: String(await freePort()) });
        await service.stop();
        expect(service.lines.some((line) => String(line.msg).startsWith('recorded the fingerprint of SESSION_SIGNING_SECRET'))).toBe(true);
        // Only a fingerprint is stored: an HMAC under the secret, neither the secret nor its plain hash.
        // (The file sweep's lease, src/domain/leads/file-sweep.ts, may be recorded beside it.)
        const recorded = await db.sharedSetting.findMany({ where: { name: { not: 'file_sweep_lease' } } });
        expect(recorded.map((row) => [row.name, row.value])).toEqual([
          ['session_signing_secret_fingerprint', sessionSecretFingerprint(first)],
        ]);
        for (const row of await db.sharedSetting.findMany()) {
          expect(row.value).not.toContain(first);
          expect(row.value).not.toContain(createHash('sha256').update(first).digest('base64url'));
        }

        const refused = fatalLine(await runScript('src/index.ts', [], { ...settings(second), PORT: String(await freePort()) }));
        expect(refused.settings).toEqual(['SESSION_SIGNING_SECRET']);
        expect(refused.msg).toContain('SESSION_SIGNING_SECRET differs from the one recorded by the instances already using this database');
        expect(refused.msg).toContain('npm run --silent secrets -- record-session-secret');
        expect(refused.msg).not.toContain(first);
        expect(refused.msg).not.toContain(second);

        // The rotation: record the new secret, after which the new one starts and the old one is refused.
        const rotated = await runScript('scripts/secrets.ts', ['record-session-secret'], {
          DATABASE_URL: shared.url,
          SESSION_SIGNING_SECRET: second,
        });
        expect(rotated.code).toBe(0);
        expect(rotated.stdout).toBe('recorded the new SESSION_SIGNING_SECRET: restart every instance with it\n');
        const restarted = await startService([], { ...settings(second), PORT: String(await freePort()) });
        await restarted.stop();
        expect(fatalLine(await runScript('src/index.ts', [], { ...settings(first), PORT: String(await freePort()) })).settings).toEqual([
          'SESSION_SIGNING_SECRET',
        ]);
      } finally {
        await db.$disconnect();
        await shared.drop();
      }
    },
    PROCESS_TIMEOUT * 2,
  );
});

describe('development mode', () => {
  it(
    'is what --dev turns on: it logs a warning that it is not for production, seeds the demo data and serves it',
    async () => {
      const empty = await createEmptyDatabase();
      const port = await freePort();
      try {
        const service = await startService(['--dev'], { DATABASE_URL: empty.url, PORT: String(port) });
        try {
          const [warning] = service.lines;
          expect(warning).toMatchObject({
            level: 40,
            mode: 'development',
            development_defaults: ['PUBLIC_URL', 'SESSION_SIGNING_SECRET', 'SECRETS_ENCRYPTION_KEYS'],
          });
          expect(String(warning!.msg)).toMatch(
            /^DEVELOPMENT MODE, NOT FOR PRODUCTION: PUBLIC_URL, SESSION_SIGNING_SECRET, SECRETS_ENCRYPTION_KEYS use public development values/,
          );
          expect(service.lines.some((line) => line.msg === 'database was empty: seeded demo data')).toBe(true);
          const health = await fetch(`http://127.0.0.1:${port}/health`);
          expect(health.status).toBe(200);
          // The demo's processor keys are encrypted too, under the development key.
          const db = createDb(empty.url);
          try {
            const stored = await db.paymentProcessor.findMany();
            expect(stored.length).toBe(9);
            expect(new Set(stored.map((row) => envelopeKeyId(row.authorization_key)))).toEqual(new Set(['dev']));
          } finally {
            await db.$disconnect();
          }
        } finally {
          await service.stop();
        }
      } finally {
        await empty.drop();
      }
    },
    PROCESS_TIMEOUT,
  );
});

describe('the CLIs', () => {
  it.concurrent(
    'keys answers an unknown option or command with its usage and exit code 2, not a stack trace',
    async () => {
      for (const args of [['create', '--bogus'], ['frobnicate'], []]) {
        const result = await runScript('scripts/keys.ts', args, { DATABASE_URL: database.url });
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stdout, args.join(' ')).toBe('');
        expect(result.stderr, args.join(' ')).toContain('\n\nUsage: npm run --silent keys -- <command> [options]');
        expect(result.stderr, args.join(' ')).not.toMatch(STACK_FRAME);
      }
      expect((await runScript('scripts/keys.ts', ['create', '--bogus'], {})).stderr).toMatch(/^Unknown option '--bogus'/);
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'keys names DATABASE_URL in one line when the database does not answer',
    async () => {
      const result = await runScript('scripts/keys.ts', ['list'], { DATABASE_URL: unreachableDatabaseUrl });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^DATABASE_URL: nothing answers at 127\.0\.0\.1:\d+\/dealership: start the database server or fix DATABASE_URL\n$/,
      );
    },
    PROCESS_TIMEOUT,
  );

  it.concurrent(
    'secrets answers an unknown command or option with its usage',
    async () => {
      for (const args of [['rotate'], ['status', '--bogus']]) {
        const result = await runScript('scripts/secrets.ts', args, { DATABASE_URL: database.url });
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr, args.join(' ')).toContain('Usage: npm run --silent secrets -- <command> [options]');
        expect(result.stderr, args.join(' ')).not.toMatch(STACK_FRAME);
      }
    },
    PROCESS_TIMEOUT,
  );

  it(
    'secrets new-key, reencrypt and status rotate the stored secrets to a new key',
    async () => {
      const db: Db = createDb(database.url);
      try {
        const dealership = await db.dealership.create({
          data: { name: 'Rotation Motors', slug: `rotation-${randomBytes(3).toString('hex')}` },
        });
        await db.paymentProcessor.createMany({
          data: ['sk_live_one', 'sk_live_two'].map((plaintext, index) => ({
            dealership_id: dealership.id,
            authorization_type: 'api_key',
            authorization_key: sealProcessorKey(testKeyring, plaintext),
            merchant_id: `m-${index}`,
          })),
        });
        const generated = await runScript('scripts/secrets.ts', ['new-key', 'k2027'], {});
        expect(generated.code).toBe(0);
        const newKeyText = generated.stdout.trim();
        expect(newKeyText).toMatch(/^k2027:[A-Za-z0-9+/]{43}=$/);
        const oldKeyText = testSettings.SECRETS_ENCRYPTION_KEYS;

        // Without the old key the values cannot be read: nothing changes, and the key id is named.
        const refused = await runScript('scripts/secrets.ts', ['reencrypt'], {
          DATABASE_URL: database.url,
          SECRETS_ENCRYPTION_KEYS: newKeyText,
        });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(`encrypted with key "${TEST_ENCRYPTION_KEY.id}", which SECRETS_ENCRYPTION_KEYS does not hold`);

        const rotated = await runScript('scripts/secrets.ts', ['reencrypt'], {
          DATABASE_URL: database.url,
          SECRETS_ENCRYPTION_KEYS: `${newKeyText},${oldKeyText}`,
        });
        expect(rotated.code).toBe(0);
        expect(rotated.stdout).toBe(
          [
            'PaymentProcessor.authorization_key: 2 re-encrypted, 0 encrypted from plaintext, 0 already under "k2027"',
            // Webhook secrets and the stored answers that hold them rotate with them (test/secrets.test.ts
            // rotates stored ones); none are stored here.
            'WebhookSubscription.secret: 0 re-encrypted, 0 encrypted from plaintext, 0 already under "k2027"',
            'WebhookSubscription.previous_secret: 0 re-encrypted, 0 encrypted from plaintext, 0 already under "k2027"',
            'IdempotencyRecord.response_body: 0 re-encrypted, 0 encrypted from plaintext, 0 already under "k2027"',
            '',
          ].join('\n'),
        );

        const status = await runScript('scripts/secrets.ts', ['status', '--json'], {
          DATABASE_URL: database.url,
          SECRETS_ENCRYPTION_KEYS: newKeyText,
        });
        expect(JSON.parse(status.stdout)).toEqual({
          current_key: 'k2027',
          columns: {
            'PaymentProcessor.authorization_key': { k2027: 2 },
            'WebhookSubscription.secret': {},
            'WebhookSubscription.previous_secret': {},
            'IdempotencyRecord.response_body': {},
          },
        });
        const newKeyring = keyringOf([{ id: 'k2027', key: Buffer.from(newKeyText.slice('k2027:'.length), 'base64') }]);
        const stored = await db.paymentProcessor.findMany({ where: { dealership_id: dealership.id }, orderBy: { id: 'asc' } });
        expect(stored.map((row) => open(newKeyring, 'PaymentProcessor.authorization_key', row.authorization_key))).toEqual([
          'sk_live_one',
          'sk_live_two',
        ]);
      } finally {
        await db.$disconnect();
      }
    },
    PROCESS_TIMEOUT,
  );
});
