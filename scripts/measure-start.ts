// Start-up time and memory of the compiled service (`npm run measure:start`):
//   tsx scripts/measure-start.ts [--starts N] [--requests M] [--tsx]
//
// Builds dist/ if it is stale, prepares a throw-away SQLite database with the demo data (one start
// that migrates and seeds), then starts `node dist/src/index.js` on it N times (default 5) and times
// each from spawn to the first 200 from /health, and to the answer of a REST read sent right after
// (the REST door is built for its first request). On the last start it sends M requests (default
// 1,000; a mix of REST and GraphQL reads, 8 at a time) and prints the process's resident memory (RSS)
// after that warm-up. Each start is reported as wall-clock time and as the CPU time the process used
// until it answered (the figure that does not depend on how busy the machine is). --tsx starts
// src/index.ts through tsx instead, for comparison. Measures only: nothing here passes or fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueKey } from '../src/auth/api-keys.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { createDb } from '../src/db/client.ts';
import { build, distDir, isStale } from './build.mjs';
import { freePort } from './free-port.ts';
import { npmStartRuntime } from './npm-start-runtime.ts';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '5' },
    requests: { type: 'string', default: '1000' },
    tsx: { type: 'boolean', default: false },
  },
});
const starts = Number(values.starts);
const requests = Number(values.requests);

const folder = mkdtempSync(path.join(tmpdir(), 'measure-start-'));
const databaseUrl = `file:${path.join(folder, 'dealership.db')}`;

const runtime = npmStartRuntime(path.join(distDir, '..'));

function startService(port: number): ChildProcess {
  const entry = values.tsx
    ? ['--import', 'tsx', path.join(distDir, '..', 'src', 'index.ts')]
    : [...runtime.nodeFlags, path.join(distDir, 'src', 'index.js')];
  // --dev as `npm start` passes it: development values for the settings production requires.
  return spawn(process.execPath, [...entry, '--dev'], {
    // The per-key limits off: the memory figure is of 1,000 answered reads, not of 429s.
    env: {
      ...process.env,
      ...runtime.variables,
      ENV_FILE: 'off',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FILE_STORAGE_DIR: path.join(folder, 'files'),
      RATE_LIMIT_KEY_REQUESTS: '0',
      RATE_LIMIT_KEY_COST: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Milliseconds from `since` until /health answers 200. */
async function untilHealthy(port: number, since: number, child: ChildProcess): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      if (response.status === 200) return performance.now() - since;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** User + system CPU time the process has used so far (Linux /proc, in clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMegabytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '')) / 1024;
}

if (isStale()) await build();

// The first start creates the database, migrates and seeds it; it is not one of the measured starts.
let port = await freePort();
let child = startService(port);
const seedMs = await untilHealthy(port, performance.now(), child);
await stop(child);
console.log(`first start (migrate + seed demo data): ${seedMs.toFixed(0)} ms`);

const db = createDb(databaseUrl);
const { key } = await issueKey(db, { name: 'measure-start', permissions: allPermissions, dealershipIds: [], expiresAt: null });
const car = await db.car.findFirstOrThrow({ select: { id: true } });
await db.$disconnect();

const timings: number[] = [];
const cpuTimings: number[] = [];
const firstReadTimings: number[] = [];
for (let run = 0; run < starts; run += 1) {
  port = await freePort();
  const spawnedAt = performance.now();
  child = startService(port);
  timings.push(await untilHealthy(port, spawnedAt, child));
  cpuTimings.push(cpuMs(child.pid ?? 0));
  // The REST door is built for its first request, so the first REST answer is timed too.
  const first = await fetch(`http://127.0.0.1:${port}/api/v1/apikeys/apikey_details.json`, { headers: { authorization: `Bearer ${key}` } });
  await first.arrayBuffer();
  if (first.status !== 200) throw new Error(`the first REST read answered ${first.status}`);
  firstReadTimings.push(performance.now() - spawnedAt);
  if (run < starts - 1) await stop(child);
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const list = (values: number[]): string => values.map((ms) => ms.toFixed(0)).join(', ');
console.log(
  `${values.tsx ? 'tsx src/index.ts' : `node ${[...runtime.nodeFlags, 'dist/src/index.js'].join(' ')} (as npm start runs it)`}: start-up to /health on the existing database`,
);
console.log(`  wall clock: median ${median(timings).toFixed(0)} ms (runs: ${list(timings)} ms)`);
console.log(`  CPU time:   median ${median(cpuTimings).toFixed(0)} ms (runs: ${list(cpuTimings)} ms)`);
console.log(
  `  first REST answer (apikey_details, right after /health): median ${median(firstReadTimings).toFixed(0)} ms after spawn (runs: ${list(firstReadTimings)} ms)`,
);

const rssBefore = rssMegabytes(child.pid ?? 0);
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const calls: (() => Promise<Response>)[] = [
  () => fetch(`http://127.0.0.1:${port}/api/v1/apikeys/apikey_details.json`, { headers }),
  () => fetch(`http://127.0.0.1:${port}/api/v1/cars/${car.id}/performance.json`, { headers }),
  () =>
    fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: '{ cars(first: 20) { edges { node { id make model year } } } }' }),
    }),
  () => fetch(`http://127.0.0.1:${port}/health`),
];
let sent = 0;
const statuses = new Map<number, number>();
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (sent < requests) {
      const call = calls[sent % calls.length];
      sent += 1;
      if (!call) continue;
      const response = await call();
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  }),
);
const rssAfter = rssMegabytes(child.pid ?? 0);
await stop(child);
console.log(
  `RSS: ${rssBefore.toFixed(0)} MB when ready, ${rssAfter.toFixed(0)} MB after ${requests} requests (statuses ${JSON.stringify(Object.fromEntries(statuses))})`,
);
rmSync(folder, { recursive: true, force: true });
