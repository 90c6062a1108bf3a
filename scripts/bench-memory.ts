// `npm run bench:memory`: the service's resident memory under a stream of distinct reads and keys,
// which every cache tier must survive within its bounds (src/lib/bounded-cache.ts).
//
//   npm run bench:memory [-- --reads 200000] [--keys 10000] [--connections 16] [--ceiling 460]
//
// Starts the compiled service (as `npm start` runs it) on a fresh SQLite file with the demo data,
// issues `--keys` keys straight into its database, then sends `--reads` GET requests, each distinct
// (its own query string, so its own entry in every tier) and spread over the keys, and prints the RSS
// of the listening process every 10,000 requests, its peak, and the RSS after a write (which starts a
// new cache generation), then the peak against the documented ceiling (docs/benchmarks.md, `--ceiling`
// in MB). Loopback only; it reports, it does not fail (figures on a shared machine vary).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { issueKey } from '../src/auth/api-keys.ts';
import { allPermissions } from '../src/auth/permissions.ts';
import { createDb } from '../src/db/client.ts';
import { build, distDir, isStale } from './build.mjs';
import { npmStartRuntime } from './npm-start-runtime.ts';
import { freePort } from './free-port.ts';

/**
 * The documented ceiling on the resident size under any stream of distinct reads and keys
 * (docs/benchmarks.md): the service at ready (about 290 MB: its code, schema, Prisma's query compiler
 * and the demo data) plus the memory tiers' byte bounds (24 + 24 + 16 MB, docs/caching.md) plus the
 * young generation's two 16 MB halves (npm start's --max-semi-space-size=16; it was 32 and 8 before)
 * plus room for the key cache's 10,000 verdicts, Prisma's plans and garbage not yet collected.
 */
const RSS_CEILING_MB = 460;

const { values } = parseArgs({
  options: {
    reads: { type: 'string', default: '200000' },
    keys: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '16' },
    ceiling: { type: 'string', default: String(RSS_CEILING_MB) },
  },
});
const reads = Number(values.reads);
const keyCount = Number(values.keys);
const connections = Number(values.connections);
const ceiling = Number(values.ceiling);

const folder = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));
const databaseUrl = `file:${path.join(folder, 'dealership.db')}`;
const rssMb = (pid: number): number =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) / 1024;

async function main(): Promise<void> {
  if (isStale()) await build();
  const port = await freePort();
  const runtime = npmStartRuntime(path.join(distDir, '..'));
  const child = spawn('node', [...runtime.nodeFlags, 'dist/src/index.js', '--dev'], {
    env: {
      ...process.env,
      ...runtime.variables,
      ENV_FILE: 'off',
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      SEED_DEMO_DATA: 'true',
      RATE_LIMIT_KEY_REQUESTS: '1000000000',
      RATE_LIMIT_DEALERSHIP_REQUESTS: '1000000000',
      RATE_LIMIT_KEY_COST: '1000000000000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let ready = false; !ready; ) {
      ready = await fetch(`${base}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pid = child.pid!;
    const db = createDb(databaseUrl);
    const keys: string[] = [];
    for (let n = 0; n < keyCount; n += 1)
      keys.push((await issueKey(db, { name: `memory ${n}`, permissions: [...allPermissions], dealershipIds: [], expiresAt: null })).key);
    await db.$disconnect();
    console.log(`ready: RSS ${rssMb(pid).toFixed(0)} MB; ${keyCount} keys issued`);
    let sent = 0;
    let peak = 0;
    const paths = ['/api/v1/apikeys/apikey_details.json', '/api/v1/cars/1/performance.json', '/manufacturers/1/offers.json'];
    const worker = async (): Promise<void> => {
      while (sent < reads) {
        const n = sent;
        sent += 1;
        const url = `${base}${paths[n % paths.length]}?${'n'.repeat(8)}=${n}`;
        const init = { headers: { authorization: `Bearer ${keys[n % keys.length]}` } };
        // A keep-alive connection the server closed as it was reused: sent again on a new one.
        const response = await fetch(url, init).catch(() => fetch(url, init));
        await response.arrayBuffer();
        if (n % 10_000 === 0 || (process.env.BENCH_SNAP && n === 5000)) {
          const rss = rssMb(pid);
          peak = Math.max(peak, rss);
          console.log(`${n} reads: RSS ${rss.toFixed(0)} MB`);
          if (process.env.BENCH_SNAP && (n === 5000 || n === 20000)) process.kill(pid, 'SIGUSR2');
        }
      }
    };
    await Promise.all(Array.from({ length: connections }, worker));
    peak = Math.max(peak, rssMb(pid));
    const write = await fetch(`${base}/api/v1/cars/1/reserve?reserved=false`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys[0]}` },
    });
    await write.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const afterWrite = rssMb(pid);
    peak = Math.max(peak, afterWrite);
    console.log(
      `after ${reads} distinct reads over ${keyCount} keys: peak RSS ${peak.toFixed(0)} MB; after a write: ${afterWrite.toFixed(0)} MB`,
    );
    console.log(
      `ceiling ${ceiling} MB: peak ${peak.toFixed(0)} MB is ${peak <= ceiling ? 'within it' : `OVER it by ${(peak - ceiling).toFixed(0)} MB`}`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
