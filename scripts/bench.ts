// `npm run bench`: the service against honest peers, in one run, on SQLite and on PostgreSQL.
//
//   npm run bench [-- --quick] [--engine sqlite|postgresql] [--duration 2] [--rounds 3]
//                 [--connections 32] [--baseline-dir /path/to/another/checkout] [--only <target name part>]
//
// For each engine it prepares a fresh database (a SQLite file in a temporary directory, or a
// PostgreSQL database dgw_bench_<random> dropped at the end), issues a key with the keys CLI, and
// starts, each as a child process on a free loopback port:
// - service            the service as `npm run start:production` runs it (compiled, production mode,
//                      its node flags); its first start migrates and seeds the demo data;
// - service, no cache  the same with RESPONSE_CACHE=false, for the uncached rows (on SQLite over its
//                      own copy of the seeded file: one SQLite file serves one instance);
// - bare               scripts/bench-bare-handler.ts: node:http + Prisma through the service's domain
//                      functions, for every REST read with a JSON body (every read here: the floor the ORM sets);
// - main               with --baseline-dir: another checkout of this project (today's main) over its
//                      own copy of the demo data, started the same way;
// - main, no cache     that checkout with RESPONSE_CACHE=false over a third copy: the uncached
//                      reads' peer.
// It checks every answer once (status; REST body = GraphQL data; bare body = service body), warms
// up, then runs rounds in which every target is driven on every server in turn (interleaved, so a
// noisy neighbour hurts all alike), and prints the medians of the rounds per target and server:
// req/s, p50, p99, CPU ms per request (utime+stime of the listening process over the requests
// served) and the ratios, each as the median of the rounds' ratios with their min–max (the goals'
// lines too), then each server's start-up time to /health with the CPU it took, RSS, and the load
// average at the start and at the end of each engine's run. Loopback only; it stops by itself and kills
// its children on exit and on Ctrl-C.
import { copyFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, isDeepStrictEqual } from 'node:util';
import { OperationTypeNode } from 'graphql';
import { projectRoot, type Engine } from '../src/config/index.ts';
import {
  childEnv,
  createDatabase as createSupportDatabase,
  drive as driveLoad,
  issueKey as issueSupportKey,
  requestInit,
  restSelectionDocuments,
  rssMb,
  run,
  startServer as startSupportServer,
  stopAllChildren,
  stopChild,
  type Database,
  type RequestSpec,
  type Sample,
  type Server as SupportServer,
  enginesOption,
  PRODUCTION_SETTINGS,
  START_PRODUCTION,
  positive,
  type StartCommand,
} from './bench-support.ts';
import { fixed, loadText, median, perRound, spread, table } from './bench-figures.ts';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    engine: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '32' },
    'baseline-dir': { type: 'string' },
    /** Only the targets whose name holds this text (`--only 'lead POST'`): a side-by-side check of one path. */
    only: { type: 'string' },
    'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
  },
});

const engines = enginesOption(options.engine);
const durationSeconds = positive('duration', options.duration, options.quick ? 1 : 2);
const rounds = Math.round(positive('rounds', options.rounds, options.quick ? 1 : 3));
const connections = Math.round(positive('connections', options.connections, 32));
const warmUpSeconds = 1;
const baselineDir = options['baseline-dir'] ? path.resolve(options['baseline-dir']) : null;
if (baselineDir && !existsSync(path.join(baselineDir, 'src', 'index.ts')))
  throw new Error(`--baseline-dir ${baselineDir} is not a checkout of this project`);

// ─── what is measured ───

type Role = 'service' | 'service-nocache' | 'bare' | 'main' | 'main-nocache';
const roleLabels: Record<Role, string> = {
  service: 'service',
  'service-nocache': 'service, no cache',
  bare: 'bare handler',
  main: 'main',
  'main-nocache': 'main, no cache',
};
const isBaseline = (role: Role): boolean => role === 'main' || role === 'main-nocache';
/** Whose figures a row is compared with under "× main": the baseline's instance of the same kind. */
const baselineOf = (role: Role): Role => (role === 'service-nocache' ? 'main-nocache' : 'main');

interface Read {
  name: string;
  method: 'GET' | 'POST';
  restPath: string;
  restBody?: unknown;
  status: number;
  kind: OperationTypeNode;
  field: string;
  variables: Record<string, unknown>;
}

// Lead fields without a stock number (the graph door names the category by its enum value), so the repeated POSTs do not pile leads onto car 1, whose
// performance (with its lead list) is one of the reads.
const lead = {
  name: 'Jordan Lee',
  email: 'jordan.bench@example.com',
  phone: '0412 345 678',
  dealership_id: 1,
  category: 'Used Vehicle Enquiry',
  source: 'Website',
  message: 'Is it still available?',
  send_customer_email: false,
};

const reads: Read[] = [
  {
    name: 'apikey_details',
    method: 'GET',
    restPath: '/api/v1/apikeys/apikey_details.json',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'apikey_details',
    variables: {},
  },
  {
    name: 'car performance',
    method: 'GET',
    restPath: '/api/v1/cars/1/performance.json',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'car_performance',
    variables: { id: '1' },
  },
  {
    name: 'model variant',
    method: 'GET',
    restPath: '/api/v1/model_variants/toyota-corolla-sx-hybrid?website_id=richmond-toyota',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'model_variant',
    variables: { slug: 'toyota-corolla-sx-hybrid', website_id: 'richmond-toyota' },
  },
  {
    name: 'offers (list)',
    method: 'GET',
    restPath: '/manufacturers/1/offers.json',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'manufacturer_offers',
    variables: { id: 1 },
  },
  {
    name: 'models v2',
    method: 'GET',
    restPath: '/api/v1/websites/richmond-toyota/models?version=2',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'website_models',
    variables: { website_id: 'richmond-toyota', version: 2 },
  },
  {
    name: 'postcode search',
    method: 'GET',
    restPath: '/manufacturers/1/search_by_postcode?postcode=3000',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'search_dealerships_by_postcode',
    variables: { id: 1, postcode: '3000' },
  },
  {
    name: 'contacts (50)',
    method: 'GET',
    restPath: '/dealerships/1/contacts?per_page=50',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'contacts',
    variables: { dealership_id: 1, per_page: 50 },
  },
  {
    name: 'car payment processors',
    method: 'GET',
    restPath: '/api/v1/cars/1/payment_processors.json?website=richmond-toyota',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'car_payment_processors',
    variables: { id: '1', website: 'richmond-toyota' },
  },
  {
    name: 'website offer',
    method: 'GET',
    restPath: '/websites/1/offers/13.json',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'website_offer',
    variables: { website_id: 1, id: 13 },
  },
  {
    name: 'contact',
    method: 'GET',
    restPath: '/dealerships/1/contacts/1',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'contact',
    variables: { dealership_id: 1, id: 1 },
  },
  {
    name: 'partner dealerships',
    method: 'GET',
    restPath: '/api/v1/partner/dealerships',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'partner_dealerships',
    variables: {},
  },
  {
    name: 'dealership plugins',
    method: 'GET',
    restPath: '/api/v1/dealerships/richmond-toyota/plugins',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'dealership_plugins',
    variables: { dealership_slug: 'richmond-toyota' },
  },
  {
    name: 'webhook subscriptions',
    method: 'GET',
    restPath: '/api/v1/webhook_subscriptions',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'webhook_subscriptions',
    variables: {},
  },
  {
    // Subscription 1: made before the answers are checked (subscribeBenchWebhook).
    name: 'webhook deliveries',
    method: 'GET',
    restPath: '/api/v1/webhook_subscriptions/1/deliveries',
    status: 200,
    kind: OperationTypeNode.QUERY,
    field: 'webhook_deliveries',
    variables: { id: 1 },
  },
  {
    name: 'lead POST',
    method: 'POST',
    restPath: '/api/v1/leads',
    restBody: { lead },
    status: 201,
    kind: OperationTypeNode.MUTATION,
    field: 'create_lead',
    variables: { lead: { ...lead, category: 'USED_VEHICLE_ENQUIRY' } },
  },
];

/** Every read is measured uncached and against the bare handler too (it serves every REST read); the write is not. */
const isRead = (read: Read): boolean => read.kind === OperationTypeNode.QUERY;

type Door = 'REST' | 'GraphQL';
interface Target {
  read: Read;
  door: Door;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  roles: Role[];
}

function targetsFor(withBaseline: boolean): Target[] {
  const documents = restSelectionDocuments(reads);
  return reads.flatMap((read): Target[] => {
    const serviceRoles: Role[] = isRead(read) ? ['service', 'service-nocache'] : ['service'];
    const main: Role[] = withBaseline ? serviceRoles.map(baselineOf) : [];
    return [
      {
        read,
        door: 'REST',
        method: read.method,
        path: read.restPath,
        roles: [...serviceRoles, ...(isRead(read) ? (['bare'] as Role[]) : []), ...main],
        ...(read.restBody === undefined ? {} : { body: JSON.stringify(read.restBody) }),
      },
      {
        read,
        door: 'GraphQL',
        method: 'POST',
        path: '/graphql',
        body: JSON.stringify({ query: documents.get(read.field), variables: read.variables }),
        roles: [...serviceRoles, ...main],
      },
    ];
  });
}

// ─── servers ───

type Server = SupportServer<Role>;

const startServer = (role: Role, dir: string, command: StartCommand, env: NodeJS.ProcessEnv): Promise<Server> =>
  startSupportServer(role, roleLabels[role], dir, command, env);

const createDatabase = (engine: Engine, label: string): Promise<Database> => createSupportDatabase(engine, label, options['postgres-url']);

const databases = new Set<Database>();

const issueKey = (dir: string, databaseUrl: string): Promise<string> => issueSupportKey(dir, childEnv({ DATABASE_URL: databaseUrl }));

// ─── load ───

function requestOf(target: Target): RequestSpec {
  return { method: target.method, path: target.path, ...(target.body === undefined ? {} : { body: target.body }) };
}

const drive = (server: Server, target: Target, key: string, seconds: number): Promise<Sample> =>
  driveLoad(server, requestOf(target), key, { connections, seconds });

/** One request: the status must be the expected one; answers the body (GraphQL: the root field's data). */
async function probe(server: Server, target: Target, key: string): Promise<unknown> {
  const response = await fetch(`http://127.0.0.1:${server.port}${target.path}`, requestInit(requestOf(target), key));
  const text = await response.text();
  const expected = target.door === 'GraphQL' ? 200 : target.read.status;
  const parsed = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown };
  if (response.status !== expected || (target.door === 'GraphQL' && parsed.errors !== undefined)) {
    throw new Error(`${roleLabels[server.role]} ${target.door} ${target.read.name}: ${response.status} ${text.slice(0, 400)}`);
  }
  return target.door === 'GraphQL' ? parsed.data?.[target.read.field] : parsed;
}

/**
 * Subscribes a URL of dealership 1 to an event the bench never causes (no car is reserved), so that
 * the webhook reads have a subscription and no delivery is attempted while the bench measures.
 */
async function subscribeBenchWebhook(server: Server, key: string): Promise<void> {
  const body = JSON.stringify({ subscription: { url: 'https://crm.example/bench-hooks', events: ['car.reserved'], dealership_id: 1 } });
  const request: RequestSpec = { method: 'POST', path: '/api/v1/webhook_subscriptions', body };
  const response = await fetch(`http://127.0.0.1:${server.port}${request.path}`, requestInit(request, key));
  if (response.status !== 201)
    throw new Error(`${roleLabels[server.role]}: the bench's webhook subscription was refused: ${response.status}`);
}

// ─── report ───

/** How far a run's tail is from its middle: p99 over p50. */
const tailRatio = (sample: Sample): number => sample.p99 / sample.p50;

interface EngineResult {
  engine: Engine;
  lines: string[];
}

async function benchEngine(engine: Engine, targets: Target[]): Promise<EngineResult> {
  const lines: string[] = [];
  const log = (line: string): void => {
    console.error(`[${engine}] ${line}`);
  };
  const database = await createDatabase(engine, 'service');
  databases.add(database);
  const servers: Server[] = [];
  const loadAtStart = loadavg();
  try {
    log('issuing a key (the CLI migrates the new database)');
    const key = await issueKey(projectRoot, database.url);
    const command = START_PRODUCTION;
    const serviceEnv = childEnv({
      ...PRODUCTION_SETTINGS,
      DATABASE_URL: database.url,
      FILE_STORAGE_DIR: path.join(tmpdir(), `dgw-bench-files-${process.pid}`),
    });
    log(`starting the service (${command.shown}); its first start seeds the demo data`);
    const first = await startServer('service-nocache', projectRoot, command, { ...serviceEnv, RESPONSE_CACHE: 'false' });
    let uncached = first;
    if (engine === 'sqlite') {
      // One SQLite file serves one instance: two instances' outbox workers writing the same file
      // would fail each other's lead POSTs. The uncached instance gets its own copy of the seeded file.
      await stopChild(first.child);
      const file = database.url.slice('file:'.length);
      const copy = path.join(path.dirname(file), 'bench-uncached.db');
      for (const suffix of ['', '-wal']) if (existsSync(`${file}${suffix}`)) copyFileSync(`${file}${suffix}`, `${copy}${suffix}`);
      uncached = await startServer('service-nocache', projectRoot, command, {
        ...serviceEnv,
        DATABASE_URL: `file:${copy}`,
        RESPONSE_CACHE: 'false',
      });
    }
    servers.push(uncached);
    const service = await startServer('service', projectRoot, command, serviceEnv);
    servers.push(service);
    const bareCommand = {
      command: path.join(projectRoot, 'node_modules', '.bin', 'tsx'),
      args: ['scripts/bench-bare-handler.ts'],
      shown: 'tsx scripts/bench-bare-handler.ts',
    };
    servers.push(await startServer('bare', projectRoot, bareCommand, childEnv({ DATABASE_URL: database.url })));
    const keys = new Map<Role, string>([
      ['service', key],
      ['service-nocache', key],
      ['bare', key],
    ]);
    if (baselineDir) {
      // Each baseline instance over its own database (one SQLite file serves one instance), seeded by its first start.
      for (const role of ['main', 'main-nocache'] as const) {
        const baselineDatabase = await createDatabase(engine, role);
        databases.add(baselineDatabase);
        log(`issuing a key and starting ${roleLabels[role]} (${baselineDir}) over its own database`);
        keys.set(role, await issueKey(baselineDir, baselineDatabase.url));
        const env = childEnv({
          ...PRODUCTION_SETTINGS,
          DATABASE_URL: baselineDatabase.url,
          FILE_STORAGE_DIR: path.join(tmpdir(), `dgw-bench-${role}-files-${process.pid}`),
          ...(role === 'main-nocache' ? { RESPONSE_CACHE: 'false' } : {}),
        });
        servers.push(await startServer(role, baselineDir, START_PRODUCTION, env));
      }
    }
    const serverOf = (role: Role): Server => {
      const found = servers.find((server) => server.role === role);
      if (!found) throw new Error(`no ${role} server`);
      return found;
    };
    const keyOf = (role: Role): string => keys.get(role) ?? key;

    // The webhook reads need subscription 1, which the demo data has not (a subscription belongs to a key).
    // On SQLite the uncached instance reads its own copy of the file, so it is subscribed there too.
    for (const role of engine === 'sqlite' ? (['service', 'service-nocache'] as const) : (['service'] as const))
      await subscribeBenchWebhook(serverOf(role), key);
    if (baselineDir)
      for (const role of ['main', 'main-nocache'] as const) await subscribeBenchWebhook(serverOf(role), keyOf(role)).catch(() => undefined);

    // Every answer once: the right status, and the comparisons the ratios rely on.
    log('checking every answer');
    const checks: string[] = [];
    for (const read of reads) {
      const restTarget = targets.find((target) => target.read === read && target.door === 'REST');
      const graphTarget = targets.find((target) => target.read === read && target.door === 'GraphQL');
      if (!restTarget || !graphTarget) continue;
      const bodies = new Map<string, unknown>();
      for (const target of [restTarget, graphTarget]) {
        for (const role of [...target.roles]) {
          try {
            bodies.set(`${role} ${target.door}`, await probe(serverOf(role), target, keyOf(role)));
          } catch (error) {
            // An older baseline's graph may not know today's names (databaseId): its GraphQL row is left out, its REST row kept.
            if (!isBaseline(role) || target.door !== 'GraphQL') throw error;
            target.roles = target.roles.filter((kept) => kept !== role);
            checks.push(
              `${read.name}: ${roleLabels[role]}'s graph does not answer today's GraphQL document, so its GraphQL row is not measured`,
            );
          }
        }
      }
      if (read.method === 'GET') {
        checks.push(
          `${read.name}: GraphQL data = REST body: ${isDeepStrictEqual(bodies.get('service REST'), bodies.get('service GraphQL')) ? 'yes' : 'NO'}`,
        );
        if (isRead(read))
          checks.push(
            `${read.name}: bare handler body = service body: ${isDeepStrictEqual(bodies.get('service REST'), bodies.get('bare REST')) ? 'yes' : 'NO'}`,
          );
      }
    }

    log(`warming up (${warmUpSeconds} s per target and server)`);
    for (const target of targets) for (const role of target.roles) await drive(serverOf(role), target, keyOf(role), warmUpSeconds);

    const samples = new Map<string, Sample[]>();
    for (let round = 1; round <= rounds; round += 1) {
      log(`round ${round} of ${rounds}`);
      for (const target of targets) {
        for (const role of target.roles) {
          const id = `${target.read.name}|${target.door}|${role}`;
          // One request first: a lead POST (a mutation) starts a new cache generation, and the
          // measured run is of a warm cache, not of 32 simultaneous misses.
          await probe(serverOf(role), target, keyOf(role));
          const sample = await drive(serverOf(role), target, keyOf(role), durationSeconds);
          samples.set(id, [...(samples.get(id) ?? []), sample]);
        }
      }
    }
    const rss = new Map(servers.map((server) => [server.role, rssMb(server.pid)]));

    const samplesOf = (read: Read, door: Door, role: Role): Sample[] => samples.get(`${read.name}|${door}|${role}`) ?? [];
    const rps = (sample: Sample): number => sample.rps;
    // CPU per request, inverted so that above 1 means the same thing as for req/s: cheaper than the other.
    const cpuThrift = (sample: Sample): number => 1 / sample.cpuMsPerRequest;
    const rows: string[][] = [
      [
        'target',
        'door',
        'server',
        'req/s',
        'p50 ms',
        'p99 ms',
        'CPU ms/req',
        'failed',
        'req/s × bare',
        'CPU × bare',
        'req/s × main',
        'CPU × main',
        'GraphQL/REST',
      ],
    ];
    for (const target of targets) {
      for (const role of target.roles) {
        const runs = samplesOf(target.read, target.door, role);
        const againstBare = isRead(target.read) && role !== 'bare' && !isBaseline(role);
        const againstMain = baselineDir !== null && !isBaseline(role) && role !== 'bare';
        const bareRuns = samplesOf(target.read, 'REST', 'bare');
        const mainRuns = samplesOf(target.read, target.door, baselineOf(role));
        rows.push([
          target.read.name,
          target.door,
          roleLabels[role],
          fixed(median(runs.map(rps)), 0),
          fixed(median(runs.map((sample) => sample.p50)), 0),
          fixed(median(runs.map((sample) => sample.p99)), 0),
          fixed(median(runs.map((sample) => sample.cpuMsPerRequest)), 2),
          String(runs.reduce((sum, sample) => sum + sample.failures, 0)),
          againstBare ? spread(perRound(runs, bareRuns, rps)) : '',
          againstBare ? spread(perRound(runs, bareRuns, cpuThrift)) : '',
          againstMain ? spread(perRound(runs, mainRuns, rps)) : '',
          againstMain ? spread(perRound(runs, mainRuns, cpuThrift)) : '',
          target.door === 'GraphQL' ? spread(perRound(runs, samplesOf(target.read, 'REST', role), rps)) : '',
        ]);
      }
    }
    lines.push(
      `## ${engine}: ${connections} connections, ${rounds} round(s) of ${durationSeconds} s per target and server, interleaved; ` +
        `medians of the rounds, ratios as median (min–max of the rounds' ratios)`,
      `load average (1, 5, 15 min): ${loadText(loadAtStart)} at the start of this engine's run, ${loadText(loadavg())} at its end`,
    );
    lines.push('', table(rows), '');
    lines.push(
      table([
        ['server', 'command', 'start-up to /health', 'its CPU', 'RSS after the run'],
        [
          'service (first start)',
          first.command,
          `${fixed(first.startupMs, 0)} ms (migrate + seed the demo data)`,
          `${fixed(first.startupCpuMs, 0)} ms`,
          '',
        ],
        ...servers.map((server) => [
          roleLabels[server.role],
          server.command,
          `${fixed(server.startupMs, 0)} ms${server === first ? ' (first start)' : isBaseline(server.role) ? ' (first start: seed)' : ''}`,
          `${fixed(server.startupCpuMs, 0)} ms`,
          `${fixed(rss.get(server.role) ?? Number.NaN, 0)} MB`,
        ]),
      ]),
    );
    lines.push('', 'checks:', ...checks.map((check) => `  ${check}`), '');

    // The issue's targets, stated against this run's figures (reported, not asserted).
    // The reads this run measured (`--only` may leave some out).
    const measured = reads.filter((read) => targets.some((target) => target.read === read));
    const cached = measured.filter((read) => read.method === 'GET');
    const verdict = (met: boolean): string => (met ? 'met' : 'NOT met');
    const goals: string[] = [];
    for (const read of cached) {
      const bareRuns = samplesOf(read, 'REST', 'bare');
      const cachedRatios = perRound(samplesOf(read, 'REST', 'service'), bareRuns, rps);
      goals.push(`cached ${read.name} ≥ 5× bare: ${spread(cachedRatios)} ${verdict(median(cachedRatios) >= 5)}`);
      for (const door of ['REST', 'GraphQL'] as Door[]) {
        const uncached = samplesOf(read, door, 'service-nocache');
        // CPU per request of the bare handler over the service's: 0.8 is the service at 1.25× the handler's CPU.
        const byCpu = perRound(uncached, bareRuns, cpuThrift);
        goals.push(`uncached ${read.name} (${door}) CPU ≤ 1.25× bare: ${spread(byCpu)} ${verdict(median(byCpu) >= 0.8)}`);
        const mainUncached = samplesOf(read, door, 'main-nocache');
        if (mainUncached.length > 0) {
          // The whole CPU per request, the statements' driver time included (a stricter test than the work above it).
          const byMain = perRound(uncached, mainUncached, cpuThrift);
          goals.push(`uncached ${read.name} (${door}) CPU ≤ 0.5× main's: ${spread(byMain)} ${verdict(median(byMain) >= 2)}`);
        }
        const tails = uncached.map(tailRatio);
        goals.push(`uncached ${read.name} (${door}) p99 ≤ 10× p50: ${spread(tails)} ${verdict(median(tails) <= 10)}`);
      }
    }
    const leadPost = measured.find((read) => read.method === 'POST');
    if (leadPost) {
      const tails = samplesOf(leadPost, 'REST', 'service').map(tailRatio);
      goals.push(`lead POST p99 ≤ 10× p50: ${spread(tails)} ${verdict(median(tails) <= 10)}`);
    }
    for (const read of measured) {
      const graphToRest = perRound(samplesOf(read, 'GraphQL', 'service'), samplesOf(read, 'REST', 'service'), rps);
      goals.push(`GraphQL within 10% of REST, ${read.name}: ${spread(graphToRest)} ${verdict(median(graphToRest) >= 0.9)}`);
    }
    const worstP99 = Math.max(
      ...cached.flatMap((read) =>
        (['REST', 'GraphQL'] as Door[]).map((door) =>
          median((samples.get(`${read.name}|${door}|service`) ?? []).map((sample) => sample.p99)),
        ),
      ),
    );
    goals.push(`p99 under 250 ms on cached reads (worst): ${fixed(worstP99, 0)} ms ${verdict(worstP99 < 250)}`);
    goals.push(
      `start-up under 1 s of CPU on an existing database: ${fixed(service.startupCpuMs, 0)} ms of CPU (${fixed(service.startupMs, 0)} ms wall clock) ${verdict(service.startupCpuMs <= 1000)} (one start; npm run measure:start takes the median of 5)`,
    );
    const worstRss = Math.max(rss.get('service') ?? Number.NaN, rss.get('service-nocache') ?? Number.NaN);
    goals.push(`RSS under 250 MB: ${fixed(worstRss, 0)} MB ${verdict(worstRss < 250)}`);
    // Against the baseline, the write's target: no slower than the build it is compared with.
    if (baselineDir && leadPost) {
      for (const door of ['REST', 'GraphQL'] as Door[]) {
        const baseline = samplesOf(leadPost, door, 'main');
        // The baseline may not answer today's GraphQL document (the checks say so): no row, no target.
        if (baseline.length === 0) continue;
        const byRps = perRound(samplesOf(leadPost, door, 'service'), baseline, rps);
        const byCpu = perRound(samplesOf(leadPost, door, 'service'), baseline, cpuThrift);
        goals.push(
          `lead POST (${door}) ≥ 1× main: req/s ${spread(byRps)}, CPU ${spread(byCpu)} ${verdict(median(byRps) >= 1 && median(byCpu) >= 1)}`,
        );
      }
    }
    lines.push('targets (REST rows unless named):', ...goals.map((goal) => `  ${goal}`), '');
    return { engine, lines };
  } finally {
    await Promise.all(servers.map((server) => stopChild(server.child)));
    for (const db of databases) {
      await db.drop().catch((error: unknown) => console.error(`could not drop a bench database: ${String(error)}`));
      databases.delete(db);
    }
  }
}

async function cleanUpAndExit(code: number): Promise<never> {
  await stopAllChildren();
  for (const db of databases) await db.drop().catch(() => undefined);
  process.exit(code);
}

process.on('SIGINT', () => void cleanUpAndExit(130));
process.on('SIGTERM', () => void cleanUpAndExit(143));

async function main(): Promise<void> {
  // The service is measured as `npm start` runs it: compiled.
  await run('npm', ['run', '--silent', 'build', '--', '--if-stale'], { cwd: projectRoot });
  const only = options.only;
  const targets = targetsFor(baselineDir !== null).filter((target) => only === undefined || target.read.name.includes(only));
  if (targets.length === 0) throw new Error(`--only ${only}: no target's name holds it`);
  const header = [
    `# npm run bench: ${new Date().toISOString()}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
    `service: ${START_PRODUCTION.shown}${baselineDir ? `; main: ${baselineDir}, started the same way` : ''}`,
    '',
  ];
  const results: EngineResult[] = [];
  for (const engine of engines) results.push(await benchEngine(engine, targets));
  console.log([...header, ...results.flatMap((result) => result.lines)].join('\n'));
}

main().then(
  () => cleanUpAndExit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    return cleanUpAndExit(1);
  },
);
