// npm run scale [-- --instances 3 --postgres-url … --redis-url … --compiled --keep]
//
// Starts real gateway instances (default 3) at the same moment on one fresh PostgreSQL database and
// one Redis, with identical production settings (no development mode), then runs the checks of
// scripts/scale-checks.ts against them and prints a short report; exit code 0 when every check held.
// The database is dropped at the end unless --keep. By default the instances run the TypeScript
// through tsx (no build); --compiled builds if needed and runs dist/, as `npm start` does.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, projectRoot } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { newEncryptionKeyText } from '../src/config/secrets.ts';
import { runAdminSql } from './cli-database.ts';
import { freePort } from './free-port.ts';
import { formatReport, runScaleChecks, type LogLine, type ScaleInstance } from './scale-checks.ts';
import { startSmtpServer } from '../test/support/smtp-server.ts';

const START_TIMEOUT_MS = 180_000;
/** Short, so the mail server below (slower than this) would make a lease run out mid-send. */
const OUTBOX_LEASE_MS = 1_500;
/** One key's budget per window: above what the other checks spend, small enough to exhaust. */
const KEY_REQUESTS = 40;

const { values: options } = parseArgs({
  options: {
    instances: { type: 'string', default: '3' },
    'postgres-url': { type: 'string', default: process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
    'redis-url': { type: 'string', default: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379' },
    compiled: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
  },
});
const instanceCount = Number(options.instances);
if (!Number.isInteger(instanceCount) || instanceCount < 2 || instanceCount > 10) {
  console.error('--instances must be a whole number from 2 to 10');
  process.exit(2);
}

const children = new Set<ChildProcess>();

function runToEnd(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim()}`)),
    );
  });
}

const admin = (sql: string): Promise<void> => runAdminSql(options['postgres-url'], sql);

/** Starts one instance; resolves once it logs that it listens, with every log line it prints kept. */
function startInstance(name: string, env: NodeJS.ProcessEnv): Promise<ScaleInstance & { child: ChildProcess }> {
  const args = options.compiled ? ['dist/src/index.js'] : ['--import', 'tsx', 'src/index.ts'];
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: LogLine[] = [];
  let partial = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`${name} did not listen within ${START_TIMEOUT_MS / 1000} s: ${JSON.stringify(lines.slice(-3))} ${stderr.trim()}`),
        ),
      START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = partial + chunk.toString();
      const complete = text.split('\n');
      partial = complete.pop() ?? '';
      for (const raw of complete) {
        let line: LogLine;
        try {
          line = JSON.parse(raw) as LogLine;
        } catch {
          continue;
        }
        lines.push(line);
        if (String(line.msg).startsWith('listening on')) {
          clearTimeout(timer);
          resolve({ name, baseUrl: `http://127.0.0.1:${env.PORT}`, lines, child });
        }
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} ended (${code}) before listening: ${JSON.stringify(lines.slice(-3))} ${stderr.trim()}`));
    });
  });
}

async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

async function main(): Promise<number> {
  if (options.compiled) await runToEnd('npm', ['run', '--silent', 'build', '--', '--if-stale'], process.env);
  const databaseName = `dgw_scale_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE "${databaseName}"`);
  const databaseUrl = new URL(options['postgres-url']);
  databaseUrl.pathname = `/${databaseName}`;
  const smtp = await startSmtpServer();
  smtp.replyDelayMs = OUTBOX_LEASE_MS + 500;
  // One set of production settings for every instance: only the port differs.
  const shared: Record<string, string> = {
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: options['redis-url'],
    PUBLIC_URL: 'https://gateway.scale.test',
    SESSION_SIGNING_SECRET: randomBytes(36).toString('base64'),
    SECRETS_ENCRYPTION_KEYS: newEncryptionKeyText('scale'),
    SEED_DEMO_DATA: 'true',
    SMTP_URL: smtp.url,
    OUTBOX_LEASE_MS: String(OUTBOX_LEASE_MS),
    OUTBOX_POLL_INTERVAL_MS: '500',
    RATE_LIMIT_KEY_REQUESTS: String(KEY_REQUESTS),
    // An hour's window, so the budget check never straddles the start of a new one.
    RATE_LIMIT_WINDOW_SECONDS: '3600',
    // This run's counters apart from any other deployment's in the same Redis.
    RATE_LIMIT_REDIS_PREFIX: `dgw:scale:${randomBytes(4).toString('hex')}:`,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
  // ENV_FILE=off: a developer's .env must not add settings to the ones this run chose.
  const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENV_FILE: 'off' };
  const config = loadConfig(shared);
  const db = createDb(config.databaseUrl, { poolMax: 2 });
  const started = performance.now();
  try {
    const names = Array.from({ length: instanceCount }, (_, index) => `instance ${index + 1}`);
    const ports = await Promise.all(names.map(() => freePort()));
    // All at once, as an orchestrator rolls out a new deployment onto an empty database.
    const instances = await Promise.all(
      names.map((name, index) => startInstance(name, { ...baseEnv, ...shared, PORT: String(ports[index]) })),
    );
    const startedMs = Math.round(performance.now() - started);
    const createKey = async (name: string): Promise<string> =>
      (
        await runToEnd(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', 'create', '--name', name, '--all-permissions'], {
          ...baseEnv,
          DATABASE_URL: shared.DATABASE_URL,
        })
      ).trim();
    const key = await createKey('scale');
    const results = await runScaleChecks({ instances, key, db, config, createKey, smtp });
    console.log(
      [
        `# npm run scale: ${instanceCount} instances (${options.compiled ? 'compiled dist/' : 'tsx'}) on one PostgreSQL database (${databaseName}) and one Redis (${path.basename(options['redis-url'])}), all listening after ${startedMs} ms`,
        `# file storage: ${config.fileStorage}; pool per instance: ${config.databasePoolMax} connections`,
        '',
        formatReport(results),
      ].join('\n'),
    );
    return results.every((result) => result.outcome.ok) ? 0 : 1;
  } finally {
    await stopAll();
    await smtp.close();
    await db.$disconnect();
    if (options.keep) console.log(`kept the database: ${databaseUrl.toString()}`);
    else
      await admin(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`).catch((error: unknown) =>
        console.error(`could not drop ${databaseName}: ${String(error)}`),
      );
  }
}

process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
process.on('SIGTERM', () => void stopAll().then(() => process.exit(143)));

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await stopAll();
    process.exit(1);
  },
);
