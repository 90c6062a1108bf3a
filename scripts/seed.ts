// npm run seed [-- --dev] [--scale demo|platform] [--fraction F] (also npm run db:seed): migrates,
// then fills an empty database with the demo data, its secrets encrypted with
// SECRETS_ENCRYPTION_KEYS (or, with --dev, the development key). With --scale platform it then adds
// a platform's data on top of the demo (prisma/seed-platform.ts): the full platform on PostgreSQL,
// a tenth of it on SQLite, or the given fraction of it. Bad options exit with code 2.
import { parseArgs } from 'node:util';
import { ConfigError, loadCliTimeoutMs, loadConfig, processEnvironment, type Config } from '../src/config/index.ts';
import { DatabaseStartupError } from '../src/startup.ts';
import { createCliDb, exitWhenOverdue, failCli } from './cli-database.ts';
import { createDb } from '../src/db/client.ts';
import { prepareDatabase } from '../src/db/prepare.ts';
import { seedDemoData } from '../prisma/seed.ts';
import { DEFAULT_FRACTION, seedPlatformData } from '../prisma/seed-platform.ts';
import { createLogger } from '../src/logger.ts';
import { loadEnvFile } from '../src/config/env-file.ts';

/** The largest --fraction: ten platforms is already hours of data. */
const MOST_FRACTION = 10;

function usage(message: string): never {
  console.error(`npm run seed: ${message}`);
  process.exit(2);
}

let scale: 'demo' | 'platform';
let fraction: number | undefined;
try {
  const { values } = parseArgs({
    options: { dev: { type: 'boolean' }, scale: { type: 'string', default: 'demo' }, fraction: { type: 'string' } },
    strict: true,
  });
  if (values.scale !== 'demo' && values.scale !== 'platform') usage(`--scale must be demo or platform, not "${values.scale}"`);
  scale = values.scale;
  if (values.fraction !== undefined) {
    fraction = Number(values.fraction);
    if (values.fraction.trim() === '' || !Number.isFinite(fraction) || fraction <= 0 || fraction > MOST_FRACTION) {
      usage(`--fraction must be a number above 0 and at most ${MOST_FRACTION}, not "${values.fraction}"`);
    }
    if (scale !== 'platform') usage('--fraction is for --scale platform');
  }
} catch (error) {
  usage(error instanceof Error ? error.message : String(error));
}

loadEnvFile();
let config: Config;
try {
  config = loadConfig(processEnvironment());
} catch (error) {
  failCli(error);
}
// The platform's data takes minutes by design: only the demo's seed is bounded by CLI_TIMEOUT_MS as a whole.
let timeoutMs: number;
try {
  timeoutMs = scale === 'demo' ? exitWhenOverdue() : loadCliTimeoutMs();
} catch (error) {
  failCli(error);
}
const db = createCliDb(config.databaseUrl, timeoutMs);
try {
  await prepareDatabase(config, db, createLogger(config.logLevel), seedDemoData).catch((error: unknown) =>
    failCli(error instanceof ConfigError ? error : new DatabaseStartupError(config.databaseUrl, error)),
  );
} finally {
  await db.$disconnect();
}

if (scale === 'platform') {
  const platformFraction = fraction ?? DEFAULT_FRACTION[config.engine];
  // No statement timeout: one statement inserts up to a million rows.
  const platformDb = createDb(config.databaseUrl);
  try {
    console.log(`adding a platform's data (fraction ${platformFraction}) on ${config.engine}:`);
    const result = await seedPlatformData(platformDb, {
      engine: config.engine,
      fraction: platformFraction,
      log: (line) => console.log(`  ${line}`),
    });
    if (result.made) {
      console.log(`made the platform's data (fraction ${result.fraction}) in ${result.seconds} s`);
    } else {
      console.error(`npm run seed: the database ${result.reason}`);
      process.exitCode = result.why === 'present' ? 0 : 1;
    }
  } catch (error) {
    console.error(`npm run seed: the platform's data could not be made: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  } finally {
    await platformDb.$disconnect();
  }
}
