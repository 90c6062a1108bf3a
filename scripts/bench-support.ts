// What the benchmarks (scripts/bench.ts, scripts/bench-scale.ts) share: their child processes (each
// in its own process group, killed on exit), the environment they run in, the listening process's
// CPU time and memory read from /proc, a fresh database per run, keys issued with the keys CLI, load
// driven with autocannon, the GraphQL document of a REST path, and the report's medians and tables.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { Kind, print, visit, type DocumentNode, type OperationTypeNode } from 'graphql';
import { buildOperationNodeForField } from '@graphql-tools/utils';
import { createSofa } from 'sofa-api';
import type { Engine } from '../src/config/index.ts';
import { DEVELOPMENT_KEY } from '../src/config/secrets.ts';
import { restFieldNames, restSchema } from '../src/rest/rest-schema.ts';
import { getSchema } from '../src/schema/index.ts';
import { runAdminSql } from './cli-database.ts';
import { freePort } from './free-port.ts';

/** Give up on a server that has not answered /health by then (a first start may seed the demo data). */
const START_TIMEOUT_MS = 180_000;
const CLOCK_TICKS_PER_SECOND = 100;

export const run = promisify(execFile);
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ─── options ───

/** A positive number option (`--rounds 3`), or its fallback when not given; anything else stops the run with a clear line. */
export function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}

/** The engines of `--engine sqlite|postgresql`: both when not given. */
export function enginesOption(raw: string | undefined): Engine[] {
  const engines: Engine[] = raw === undefined ? ['sqlite', 'postgresql'] : raw === 'sqlite' || raw === 'postgresql' ? [raw] : [];
  if (engines.length === 0) throw new Error('--engine must be sqlite or postgresql');
  return engines;
}

// ─── child processes ───

const children = new Set<ChildProcess>();

function killTree(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Each child leads its own process group, so npm/tsx wrappers and the server go together.
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killTree(child, 'SIGTERM');
  const timer = setTimeout(() => killTree(child, 'SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

/** Stops every child still running (on the way out, and on Ctrl-C). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map((child) => stopChild(child)));
}

process.on('exit', () => {
  for (const child of children) killTree(child, 'SIGKILL');
});

export interface StartCommand {
  command: string;
  args: string[];
  /** How the report names it. */
  shown: string;
}

/** The environment of every child: loopback, quiet, in-memory caches, nothing inherited that changes behaviour. */
// The rate limits stay on, so their per-request counting is measured, with budgets no run can spend:
// one key drives thousands of requests a second here, and 429s would be measured instead of reads.
const UNSPENDABLE_BUDGETS = {
  RATE_LIMIT_KEY_REQUESTS: '1000000000',
  RATE_LIMIT_DEALERSHIP_REQUESTS: '1000000000',
  RATE_LIMIT_KEY_COST: '1000000000000',
};

export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // ENV_FILE=off: a developer's .env must not bring back the settings removed below.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ENV_FILE: 'off',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEED_DEMO_DATA: 'true',
    ...UNSPENDABLE_BUDGETS,
    ...extra,
  };
  for (const name of ['NODE_ENV', 'REDIS_URL', 'RESPONSE_CACHE', 'API_KEY_CACHE_TTL_MS', 'SMTP_URL', 'PORT'])
    if (!(name in extra)) delete env[name];
  return env;
}

// The service reads the secrets a seed encrypted: one keyring for both. The development key (a
// public phrase) unless SECRETS_ENCRYPTION_KEYS is set, so a database made with
// `npm run seed -- --dev` (demo or platform) can be read by a production-mode child.
const encryptionKeys = process.env.SECRETS_ENCRYPTION_KEYS ?? `${DEVELOPMENT_KEY.id}:${DEVELOPMENT_KEY.key.toString('base64')}`;

/** The settings production mode requires, with the benches' values: a child runs as `npm run start:production` runs it. */
export const PRODUCTION_SETTINGS = {
  NODE_ENV: 'production',
  PUBLIC_URL: 'http://127.0.0.1',
  SESSION_SIGNING_SECRET: 'bench-session-signing-secret-0123456789abcdef',
  SECRETS_ENCRYPTION_KEYS: encryptionKeys,
} as const;

/** How the benches start the service: compiled, in production mode, with its node flags (its prestart builds when stale). */
export const START_PRODUCTION: StartCommand = {
  command: 'npm',
  args: ['run', '--silent', 'start:production'],
  shown: 'npm run start:production',
};

export interface Server<Role extends string = string> {
  role: Role;
  /** How errors and the report name it. */
  label: string;
  port: number;
  child: ChildProcess;
  /** The process that listens on the port (npm and tsx may sit between it and `child`). */
  pid: number;
  command: string;
  startupMs: number;
  /** CPU time (user + system) the listening process had used when /health first answered 200. */
  startupCpuMs: number;
}

export async function startServer<Role extends string>(
  role: Role,
  label: string,
  dir: string,
  command: StartCommand,
  env: NodeJS.ProcessEnv,
): Promise<Server<Role>> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command.command, command.args, {
    cwd: dir,
    env: { ...env, PORT: String(port) },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  while (performance.now() - started < START_TIMEOUT_MS) {
    if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode} before answering /health:\n${stderr}`);
    const healthy = await fetch(`http://127.0.0.1:${port}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) {
      const startupMs = performance.now() - started;
      const pid = listeningPid(port, child.pid ?? 0);
      return { role, label, port, child, pid, command: command.shown, startupMs, startupCpuMs: cpuMs(pid) };
    }
    await sleep(25);
  }
  throw new Error(`${label} did not answer /health within ${START_TIMEOUT_MS / 1000} s:\n${stderr}`);
}

// ─── /proc: which process listens, its CPU time and memory ───

function socketInode(port: number): string | null {
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      // State 0A is LISTEN.
      if (local && fields[3] === '0A' && Number.parseInt(local.split(':')[1] ?? '', 16) === port) return fields[9] ?? null;
    }
  }
  return null;
}

function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: fields are counted after its closing parenthesis.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parentOf.set(Number(entry), Number(statFields(Number(entry))[1]));
    } catch {
      // The process ended while the table was read.
    }
  }
  const found = [root];
  for (let i = 0; i < found.length; i += 1) for (const [pid, parent] of parentOf) if (parent === found[i]) found.push(pid);
  return found;
}

function listeningPid(port: number, root: number): number {
  const inode = socketInode(port);
  if (!inode) return root;
  for (const pid of descendants(root)) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      }
    } catch {
      // Not ours to read, or gone.
    }
  }
  return root;
}

/** User + system CPU time of the process, in milliseconds. */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  // After the command name: state is field 3, so utime (14) and stime (15) are at 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** cpuMs of a process that may have ended meanwhile: NaN then. */
export function cpuMsIfRunning(pid: number): number {
  try {
    return cpuMs(pid);
  } catch {
    return Number.NaN;
  }
}

export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

// ─── databases and keys ───

export interface Database {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database: a SQLite file in a temporary directory, or a PostgreSQL database dgw_bench_<random>[_label]; drop() removes it. */
export async function createDatabase(engine: Engine, label: string, postgresUrl: string): Promise<Database> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(path.join(tmpdir(), `dgw-bench-${label}-`));
    return { url: `file:${path.join(dir, 'bench.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `dgw_bench_${randomBytes(4).toString('hex')}${label === 'service' ? '' : `_${label}`}`;
  const admin = (sql: string): Promise<void> => runAdminSql(postgresUrl, sql);

  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

/** A key made with the keys CLI of the checkout in `dir` (which migrates the database first): `--name bench` and `args`. */
export async function issueKey(dir: string, env: NodeJS.ProcessEnv, args: readonly string[] = ['--all-permissions']): Promise<string> {
  const { stdout } = await run('npm', ['run', '--silent', 'keys', '--', 'create', '--name', 'bench', ...args], { cwd: dir, env });
  const key = stdout
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.startsWith('dlr_'));
  if (!key) throw new Error(`the keys CLI in ${dir} printed no key:\n${stdout}`);
  return key;
}

// ─── load ───

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One request as the load generator sends it. */
export interface RequestSpec {
  method: HttpMethod;
  path: string;
  body?: string;
}

export interface Sample {
  rps: number;
  /** Requests answered in the run. */
  total: number;
  p50: number;
  p99: number;
  cpuMsPerRequest: number;
  failures: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
}

export function requestInit(request: RequestSpec, key: string): { method: HttpMethod; headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  return { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) };
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** A fixed number of requests instead of a duration (writes that cannot repeat for ever). */
  amount?: number;
  /** The n-th request (from 0) when each one differs: its path and body. */
  nth?: (n: number) => RequestSpec;
}

/** Drives `request` at the server for `seconds` (or `amount` requests); CPU is the listening process's utime+stime over the run. */
export async function drive(server: Pick<Server, 'port' | 'pid'>, request: RequestSpec, key: string, load: LoadOptions): Promise<Sample> {
  const before = cpuMs(server.pid);
  let sent = 0;
  const nth = load.nth;
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}${request.path}`,
    connections: load.amount === undefined ? load.connections : Math.min(load.connections, load.amount),
    ...(load.amount === undefined ? { duration: load.seconds } : { amount: load.amount }),
    timeout: 30,
    ...requestInit(request, key),
    ...(nth
      ? {
          requests: [
            {
              setupRequest: (raw) => {
                const next = nth(sent);
                sent += 1;
                return { ...raw, method: next.method, path: next.path, ...(next.body === undefined ? {} : { body: next.body }) };
              },
            },
          ],
        }
      : {}),
  });
  const spent = cpuMs(server.pid) - before;
  const total = result.requests.total;
  return {
    rps: total / (result.duration || load.seconds),
    total,
    // No answer within the run: no latency to speak of (autocannon would say 0).
    p50: total > 0 ? result.latency.p50 : Number.NaN,
    p99: total > 0 ? result.latency.p99 : Number.NaN,
    cpuMsPerRequest: total > 0 ? spent / total : Number.NaN,
    failures: result.errors + result.timeouts + result.non2xx,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([status, { count }]) => [status, count])),
  };
}

// ─── GraphQL twins of REST paths ───

const graphNameOf = Object.fromEntries(Object.entries(restFieldNames).map(([graphName, restName]) => [restName, graphName]));

/** The document as the graph reads it: a field the REST door renames (`id`) selected by its graph name under the REST name. */
function inGraphNames(document: DocumentNode): DocumentNode {
  return visit(document, {
    Field(field) {
      const graphName = graphNameOf[field.name.value];
      if (!graphName || field.alias) return undefined;
      return { ...field, alias: field.name, name: { ...field.name, value: graphName } };
    },
  });
}

/** The GraphQL document of each root field with exactly the selection its REST path answers (built as Sofa builds it), by field name. */
export function restSelectionDocuments(fields: readonly { kind: OperationTypeNode; field: string }[]): Map<string, string> {
  const schema = restSchema(getSchema());
  const { models } = createSofa({ basePath: '', schema });
  const documents = new Map<string, string>();
  for (const { kind, field } of fields) {
    const operation = buildOperationNodeForField({ schema, kind, field, models, ignore: [], circularReferenceDepth: 1 });
    documents.set(field, print(inGraphNames({ kind: Kind.DOCUMENT, definitions: [operation] })));
  }
  return documents;
}
