// Benchmark of the postcode search (spec 4.15):
//   node --expose-gc --import tsx scripts/bench-postcode.ts [--locations N] [--searches M]
//
// Builds a throw-away SQLite database (or uses the empty database of BENCH_DATABASE_URL) with one
// manufacturer whose dealership locations sit at real postcodes, then calls
// GET /manufacturers/{id}/search_by_postcode through the app (yoga.fetch, no port) and prints:
// the cold first search (which loads the postcode data set), the warm per-search latency, the
// geocoder alone, and the process RSS before and after the data set is loaded.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { issueKey } from '../src/auth/api-keys.ts';
import { loadConfig } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { PostcodeGeocoder } from '../src/domain/geocoding.ts';
import { createKeyVerifier } from '../src/auth/key-cache.ts';
import { createFileStorage } from '../src/storage/file-storage.ts';
import { createApp } from '../src/gateway/yoga.ts';
import { memoryCounters } from '../src/rate-limit/counters.ts';

const { values } = parseArgs({
  options: { locations: { type: 'string', default: '600' }, searches: { type: 'string', default: '500' } },
});
const locationCount = Number(values.locations);
const searchCount = Number(values.searches);

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (value: number): string => `${value.toFixed(2)} ms`;
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

const sqliteFile = path.join(tmpdir(), `bench-postcode-${process.pid}.db`);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? `file:${sqliteFile}`;
await migrate(databaseUrl);
const db = createDb(databaseUrl);

try {
  // Locations at postcodes of the eastern states (not all numbers are postcodes: those locations
  // cannot be placed, as in real data). The data set is not loaded here, so the first search is cold.
  const manufacturer = await db.manufacturer.create({ data: { name: 'Bench Motors', slug: `bench-${process.pid}` } });
  const dealershipCount = Math.max(1, Math.ceil(locationCount / 3));
  let n = 0;
  for (let d = 0; d < dealershipCount; d += 1) {
    const dealership = await db.dealership.create({
      data: {
        name: `Bench Dealer ${d}`,
        slug: `bench-dealer-${process.pid}-${d}`,
        manufacturers: { create: { manufacturer_id: manufacturer.id } },
        // A dealership without a website has nowhere to send the searcher: the search leaves it out.
        websites: { create: { name: `Bench Dealer ${d}`, slug: `bench-site-${process.pid}-${d}`, url: `https://bench-${d}.example.com` } },
      },
    });
    for (let l = 0; l < 3 && n < locationCount; l += 1, n += 1) {
      const postcode = 2000 + ((n * 37) % 2999);
      // Every other location has coordinates (somewhere in south-east Australia); the rest fall back to their postcode.
      const point = n % 2 === 0 ? { lat: -28 - ((n * 7) % 110) / 10, long: 141 + ((n * 11) % 120) / 10 } : {};
      await db.location.create({
        data: {
          dealership_id: dealership.id,
          name: `Bench Location ${n}`,
          address: { create: { street: '1 Bench St', city: 'Bench', state: 'VIC', postcode, ...point } },
          contact_detail: { create: { phone: '03 9000 0000' } },
        },
      });
    }
  }
  const { key } = await issueKey(db, { name: 'bench', permissions: ['search:location'], dealershipIds: [], expiresAt: null });
  const config = { ...loadConfig({ APP_MODE: 'development', DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }) };
  const now = (): Date => new Date();
  const appGeocoder = new PostcodeGeocoder();
  const app = createApp({
    config,
    db,
    logger: pino({ level: 'silent' }),
    now,
    keys: createKeyVerifier({ db, now, ttlMs: config.apiKeyCacheTtlMs }),
    readCache: null,
    rateCounters: memoryCounters(),
    files: createFileStorage(config, db),
    geocoder: appGeocoder,
  });
  const search = async (postcode: string): Promise<number> => {
    const started = performance.now();
    const response = await app.fetch(`http://bench.test/manufacturers/${manufacturer.id}/search_by_postcode?postcode=${postcode}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await response.json()) as unknown[];
    if (response.status !== 200 || body.length === 0) throw new Error(`search ${postcode}: ${response.status} ${JSON.stringify(body)}`);
    return performance.now() - started;
  };

  // A malformed postcode is refused before the geocoder: this warms the app (schema, Sofa, key check), not the data set.
  await search('none').catch(() => undefined);
  global.gc?.();
  const before = process.memoryUsage();
  const cold = await search('3000');
  global.gc?.();
  const after = process.memoryUsage();

  const postcodes = [...(await appGeocoder.centroids()).keys()];
  const warm: number[] = [];
  for (let i = 0; i < searchCount; i += 1) warm.push(await search(postcodes[(i * 13) % postcodes.length] ?? '3000'));
  warm.sort((a, b) => a - b);

  const lookups: number[] = [];
  for (let i = 0; i < 10_000; i += 1) {
    const started = performance.now();
    await appGeocoder.locate(postcodes[i % postcodes.length] ?? '3000');
    lookups.push(performance.now() - started);
  }
  // Loads the data set a second time, so it comes after every memory figure.
  const loadStarted = performance.now();
  await new PostcodeGeocoder().centroids();
  const loadTime = performance.now() - loadStarted;

  console.log(`engine                     ${config.engine}`);
  console.log(`locations                  ${locationCount} (in ${dealershipCount} dealerships), ${postcodes.length} postcodes known`);
  console.log(`cold search (first)        ${ms(cold)}  (includes loading the data set)`);
  console.log(`data set load alone        ${ms(loadTime)}`);
  console.log(
    `warm search, ${searchCount} runs     mean ${ms(warm.reduce((a, b) => a + b, 0) / warm.length)}, p50 ${ms(percentile(warm, 0.5))}, p95 ${ms(percentile(warm, 0.95))}, max ${ms(warm.at(-1) ?? NaN)}`,
  );
  console.log(`geocoder locate (warm)     mean ${((lookups.reduce((a, b) => a + b, 0) / lookups.length) * 1000).toFixed(2)} µs`);
  const settled = global.gc ? '' : '  (run with node --expose-gc --import tsx for settled figures)';
  console.log(`RSS before first search    ${mb(before.rss)} (heap used ${mb(before.heapUsed)})`);
  console.log(`RSS after loading data     ${mb(after.rss)} (heap used ${mb(after.heapUsed)})${settled}`);
} finally {
  await db.$disconnect();
  if (!process.env.BENCH_DATABASE_URL)
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${sqliteFile}${suffix}`, { force: true });
}
