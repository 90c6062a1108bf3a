// `npm run bench:scale`: every path's cost at a platform's data beside the demo's, in one run.
//
//   npm run bench:scale [-- --quick] [--engine sqlite|postgresql] [--rounds 3] [--duration 2]
//                       [--connections 32] [--fraction F] [--platform-url URL] [--platform-sqlite FILE]
//                       [--rss-ceiling 250]
//
// For each engine it prepares two databases side by side: the demo (`npm run seed` on a fresh
// database) and the platform (`npm run seed -- --scale platform [--fraction F]`, or an existing one
// given with --platform-url / --platform-sqlite, since a full one takes minutes to make). On each it
// issues three keys with the keys CLI (one restricted to the largest dealership, one to a few, one
// reaching all), chooses its targets from the data (the largest dealership, its most popular car,
// a contact page deep in it, the manufacturer with most offers…), and starts the service as
// `npm run start:production` starts it (compiled, NODE_ENV=production, its node flags) with
// RESPONSE_CACHE=false. It checks every answer once (its status; REST body = GraphQL data for the
// REST reads' twins), then drives every REST read path, the main GraphQL reads (root connections with
// totalCount and nested relation counts, node lookups) and every write, on both data sets in turn,
// interleaved in rounds, and prints per path and data set the medians of the rounds (min–max):
// CPU ms per request of the service (utime+stime of the listening process) and, on PostgreSQL, of
// the database (the backends serving the bench database, found in pg_stat_activity), p50 and p99,
// statements per request (/metrics' gateway_db_statements_total), answer bytes, non-2xx answers, and
// the platform/demo ratios of CPU and p99. Then two checks on the platform: 32 concurrent clients on
// the heaviest reads (503s, other non-2xx, p99), and the peak RSS while 32 clients read the largest
// answers, against the documented ceiling (250 MB, docs/benchmarks.md). Exit code 1 when an answer
// was not the expected one, else 0 (the figures are reported, not asserted). Loopback only.
import { existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { OperationTypeNode } from 'graphql';
import pg from 'pg';
import { projectRoot, type Engine } from '../src/config/index.ts';
import { createDb, type Db } from '../src/db/client.ts';
import {
  childEnv,
  cpuMsIfRunning,
  createDatabase,
  drive,
  issueKey,
  PRODUCTION_SETTINGS,
  requestInit,
  restSelectionDocuments,
  rssMb,
  run,
  START_PRODUCTION,
  startServer,
  stopAllChildren,
  stopChild,
  type Database,
  type LoadOptions,
  type RequestSpec,
  type Sample,
  type Server,
  enginesOption,
  positive,
} from './bench-support.ts';
import { formatScaleReport, type PathFigures, type ScaleSample } from './bench-scale-report.ts';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    engine: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '32' },
    fraction: { type: 'string' },
    'platform-url': { type: 'string' },
    'platform-sqlite': { type: 'string' },
    'rss-ceiling': { type: 'string', default: '250' },
    'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
  },
});

const engines = enginesOption(options.engine);
const quick = options.quick;
const durationSeconds = positive('duration', options.duration, quick ? 0.5 : 2);
const rounds = Math.round(positive('rounds', options.rounds, quick ? 1 : 3));
const connections = Math.round(positive('connections', options.connections, 32));
const rssCeilingMb = positive('rss-ceiling', options['rss-ceiling'], 250);
// --quick makes a small platform unless one is given: a full one takes minutes to generate.
const fraction = options.fraction ?? (quick ? '0.01' : undefined);
if (fraction !== undefined) positive('fraction', fraction, 1);
/** The checks on the platform: as many clients as the issue names. */
const CHECK_CLIENTS = 32;
/** Writes run with fewer connections: they queue on the database's locks, not on the service. */
const writeConnections = Math.min(connections, 4);
/** A write that cannot repeat for ever (a subscription per request) is driven this many times a run. */
const FIXED_WRITES = quick ? 4 : 12;

const METRICS_TOKEN = 'bench-scale-metrics-token-0123456789abcdef';

/** The settings of every child: production rules, as `npm run start:production` runs, with the bench's secrets. */
function productionEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return childEnv({
    ...PRODUCTION_SETTINGS,
    DATABASE_URL: databaseUrl,
    METRICS_TOKEN,
    SEED_DEMO_DATA: 'false',
    RATE_LIMIT_AUTH_FAILURES: '1000000000',
    RATE_LIMIT_SIGN_ON: '1000000000',
    RATE_LIMIT_ANONYMOUS: '1000000000',
    // The workers' rounds would add their statements and CPU to the requests measured.
    OUTBOX_POLL_INTERVAL_MS: '3600000',
    WEBHOOK_POLL_INTERVAL_MS: '3600000',
    ...extra,
  });
}

// ─── the data sets ───

type DataSet = 'demo' | 'platform';
const dataSets: DataSet[] = ['demo', 'platform'];

/** The ids a data set's targets use, chosen from its data. */
interface Picks {
  /** The dealership with most leads, and its figures. */
  dealership: { id: number; slug: string; leads: number; contacts: number; cars: number };
  /** Two more of the largest, for the key restricted to a few. */
  fewIds: number[];
  /** A dealership for the lead POSTs, so that they do not grow the large dealership's pages. */
  writeDealershipId: number;
  website: { id: number; slug: string };
  /** The large dealership's car with most leads. */
  popularCarId: number;
  /** Another of its cars, for the car writes. */
  writeCar: { id: number; stocknum: string; make: string; model: string; year: number };
  /** A car of the large dealership shown on its website, for the redirect. */
  redirectStocknum: string;
  /** The most common make among cars (for cars(make:)). */
  make: string;
  /** The manufacturer with most offers. */
  manufacturerId: number;
  postcode: string;
  modelVariantSlug: string | null;
  websiteOfferId: number | null;
  /** A contact on the last page of the large dealership's contacts. */
  deepContactId: number;
  deepContactPage: number;
  userEmail: string | null;
  trackingPhone: string | null;
}

async function pick(db: Db): Promise<Picks> {
  const byLeads = await db.lead.groupBy({
    by: ['dealership_id'],
    _count: { _all: true },
    orderBy: { _count: { dealership_id: 'desc' } },
    take: 4,
  });
  const largest = byLeads[0]?.dealership_id ?? (await db.dealership.findFirstOrThrow({ orderBy: { id: 'asc' } })).id;
  const dealership = await db.dealership.findUniqueOrThrow({ where: { id: largest }, select: { id: true, slug: true } });
  const [contacts, cars] = await Promise.all([
    db.contact.count({ where: { dealership_id: largest } }),
    db.car.count({ where: { dealership_id: largest } }),
  ]);
  const others = byLeads.map((row) => row.dealership_id).filter((id) => id !== largest);
  const website = await db.website.findFirstOrThrow({
    where: { dealership_id: largest },
    orderBy: { id: 'asc' },
    select: { id: true, slug: true },
  });
  const popular = await db.lead.groupBy({
    by: ['car_id'],
    where: { dealership_id: largest, car_id: { not: null } },
    _count: { _all: true },
    orderBy: { _count: { car_id: 'desc' } },
    take: 1,
  });
  const firstCar = await db.car.findFirstOrThrow({ where: { dealership_id: largest }, orderBy: { id: 'asc' }, select: { id: true } });
  const popularCarId = popular[0]?.car_id ?? firstCar.id;
  const writeCar = await db.car.findFirstOrThrow({
    where: { dealership_id: largest, id: { not: popularCarId } },
    orderBy: { id: 'desc' },
    select: { id: true, stocknum: true, make: true, model: true, year: true },
  });
  const redirectCar = await db.car.findFirstOrThrow({
    where: { dealership_id: largest },
    orderBy: { id: 'asc' },
    select: { stocknum: true },
  });
  const makes = await db.car.groupBy({ by: ['make'], _count: { _all: true }, orderBy: { _count: { make: 'desc' } }, take: 1 });
  const offers = await db.offer.groupBy({
    by: ['manufacturer_id'],
    _count: { _all: true },
    orderBy: { _count: { manufacturer_id: 'desc' } },
    take: 1,
  });
  const manufacturerId = offers[0]?.manufacturer_id ?? (await db.manufacturer.findFirstOrThrow({ select: { id: true } })).id;
  const address = await db.locationAddress.findFirst({
    where: { location: { dealership: { manufacturers: { some: { manufacturer_id: manufacturerId } } } } },
    orderBy: { id: 'asc' },
    select: { postcode: true },
  });
  const websiteModel = await db.websiteModel.findFirst({
    where: { website_id: website.id },
    orderBy: { position: 'asc' },
    select: { model_id: true },
  });
  const variant = websiteModel
    ? await db.modelVariant.findFirst({ where: { model_id: websiteModel.model_id }, orderBy: { id: 'asc' }, select: { slug: true } })
    : null;
  const offer =
    (await db.offer.findFirst({ where: { website_id: website.id }, orderBy: { id: 'asc' }, select: { id: true } })) ??
    (await db.offer.findFirst({
      where: { dealerships: { some: { dealership_id: largest } } },
      orderBy: { id: 'asc' },
      select: { id: true },
    }));
  const perPage = 50;
  const deepContactPage = Math.max(1, Math.ceil(contacts / perPage));
  const deepContact = await db.contact.findFirstOrThrow({
    where: { dealership_id: largest },
    orderBy: { id: 'desc' },
    select: { id: true },
  });
  const user = await db.dealershipUser.findFirst({ where: { dealership_id: largest }, select: { user: { select: { email: true } } } });
  // A tracking number of the large dealership's, so that its phone calls make deliveries for its subscription.
  const tracked =
    (await db.location.findFirst({ where: { dealership_id: largest, tracking_phone: { not: null } }, select: { tracking_phone: true } })) ??
    (await db.location.findFirst({ where: { tracking_phone: { not: null } }, orderBy: { id: 'asc' }, select: { tracking_phone: true } }));
  return {
    dealership: { ...dealership, leads: byLeads[0]?._count._all ?? 0, contacts, cars },
    fewIds: others.slice(0, 2),
    writeDealershipId: others[0] ?? largest,
    website,
    popularCarId,
    writeCar,
    redirectStocknum: redirectCar.stocknum,
    make: makes[0]?.make ?? 'Toyota',
    manufacturerId,
    postcode: String(address?.postcode ?? 3000),
    modelVariantSlug: variant?.slug ?? null,
    websiteOfferId: offer?.id ?? null,
    deepContactId: deepContact.id,
    deepContactPage,
    userEmail: user?.user.email ?? null,
    trackingPhone: tracked?.tracking_phone ?? null,
  };
}

// ─── what is driven ───

type KeyReach = 'one' | 'few' | 'all';
type Door = 'REST' | 'GraphQL';

interface Target {
  /** The same on both data sets: the rows are matched by it. */
  name: string;
  door: Door;
  keyReach: KeyReach;
  request: RequestSpec;
  status: number;
  /**
   * Another answer the path gives by design under concurrent requests (a rotation that met another
   * one: 409 webhook_secret_rotated_meanwhile), counted as expected.
   */
  alsoExpected?: number;
  /** For a GraphQL twin of a REST read: the root field whose data must equal the REST body. */
  twinOf?: string;
  write?: boolean;
  /** A write driven a fixed number of times, each request its own (see LoadOptions.nth). */
  fixed?: { amount: number; nth: (n: number) => RequestSpec; before?: () => Promise<void> };
  /** One of the heaviest reads: also driven by the concurrency check. */
  heavy?: boolean;
  /** One of the largest answers: also driven by the memory check. */
  large?: boolean;
}

interface Running {
  dataSet: DataSet;
  server: Server<DataSet>;
  keys: Record<KeyReach, string>;
  picks: Picks;
  targets: Target[];
  databaseName: string | null;
}

const json = (value: unknown): string => JSON.stringify(value);
const graph = (query: string, variables: Record<string, unknown> = {}): RequestSpec => ({
  method: 'POST',
  path: '/graphql',
  body: json({ query, variables }),
});

/** One request with the bench's key: the status and the parsed body (null when none). */
async function send(server: Server, request: RequestSpec, key: string): Promise<{ status: number; body: unknown; bytes: number }> {
  const response = await fetch(`http://127.0.0.1:${server.port}${request.path}`, { ...requestInit(request, key), redirect: 'manual' });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, bytes: Buffer.byteLength(text) };
}

/** What a data set's service is set up with before the targets are made: a kept subscription, a fresh lead, a used sign-on token. */
interface Fixtures {
  subscriptionId: number;
  deliveryId: number | null;
  leadId: number;
  usedToken: string;
  carNodeId: string;
  leadNodeIds: string[];
}

async function setUp(server: Server, keys: Record<KeyReach, string>, picks: Picks): Promise<Fixtures> {
  const must = async (request: RequestSpec, key: string, status: number): Promise<unknown> => {
    const answer = await send(server, request, key);
    if (answer.status !== status)
      throw new Error(`setting up: ${request.method} ${request.path} answered ${answer.status}: ${json(answer.body).slice(0, 300)}`);
    return answer.body;
  };
  const created = (await must(
    {
      method: 'POST',
      path: '/api/v1/webhook_subscriptions',
      body: json({
        subscription: { url: 'https://hooks.bench.example/kept', events: ['phone_call.created'], dealership_id: picks.dealership.id },
      }),
    },
    keys.one,
    201,
  )) as { subscription: { id: number } };
  const subscriptionId = created.subscription.id;
  const lead = (await must(
    {
      method: 'POST',
      path: '/api/v1/leads',
      body: json({
        lead: {
          name: 'Bench Setup',
          email: 'setup@bench.example',
          phone: '0412 345 678',
          dealership_id: picks.dealership.id,
          category: 'Used Vehicle Enquiry',
          source: 'Website',
          message: 'A lead the bench updates',
        },
      }),
    },
    keys.one,
    201,
  )) as { lead: { id: number } };
  let usedToken = 'bench-scale-no-such-token';
  if (picks.userEmail) {
    const token = (await must(
      { method: 'POST', path: '/api/v1/partner/tokens', body: json({ email: picks.userEmail }) },
      keys.one,
      201,
    )) as {
      redirect_url: string;
    };
    usedToken = new URL(token.redirect_url).searchParams.get('token') ?? usedToken;
    await send(server, { method: 'GET', path: `/api/v1/partner/sign_on?token=${encodeURIComponent(usedToken)}` }, keys.one);
  }
  let deliveryId: number | null = null;
  if (picks.trackingPhone) {
    await send(
      server,
      {
        method: 'POST',
        path: '/api/v1/webhooks/phone_calls_webhooks/generic',
        body: json({ called_number: picks.trackingPhone, caller_number: '+61412000001' }),
      },
      keys.all,
    );
    const deliveries = (await must(
      { method: 'GET', path: `/api/v1/webhook_subscriptions/${subscriptionId}/deliveries` },
      keys.one,
      200,
    )) as {
      id: number;
    }[];
    deliveryId = Array.isArray(deliveries) ? (deliveries[0]?.id ?? null) : null;
  }
  const nodes = (await must(
    graph('query ($car: String!, $d: Int!) { car(id: $car) { id } leads(dealership_id: $d, first: 20) { edges { node { id } } } }', {
      car: String(picks.popularCarId),
      d: picks.dealership.id,
    }),
    keys.one,
    200,
  )) as { data: { car: { id: string }; leads: { edges: { node: { id: string } }[] } } };
  return {
    subscriptionId,
    deliveryId,
    leadId: lead.lead.id,
    usedToken,
    carNodeId: nodes.data.car.id,
    leadNodeIds: nodes.data.leads.edges.map((edge) => edge.node.id),
  };
}

interface RestRead {
  name: string;
  path: string;
  status?: number;
  keyReach?: KeyReach;
  /** The root field and its variables, for the GraphQL twin (none for a redirect). */
  twin?: { field: string; variables: Record<string, unknown> };
  heavy?: boolean;
  large?: boolean;
}

function restReads(picks: Picks, fixtures: Fixtures): RestRead[] {
  const d = picks.dealership;
  const reads: RestRead[] = [
    {
      name: 'apikey_details (one dealership)',
      path: '/api/v1/apikeys/apikey_details.json',
      twin: { field: 'apikey_details', variables: {} },
    },
    {
      name: 'apikey_details (a few)',
      path: '/api/v1/apikeys/apikey_details.json',
      keyReach: 'few',
      twin: { field: 'apikey_details', variables: {} },
    },
    {
      name: 'apikey_details (all dealerships)',
      path: '/api/v1/apikeys/apikey_details.json',
      keyReach: 'all',
      twin: { field: 'apikey_details', variables: {} },
      large: true,
    },
    {
      name: 'car performance (popular car)',
      path: `/api/v1/cars/${picks.popularCarId}/performance.json`,
      twin: { field: 'car_performance', variables: { id: String(picks.popularCarId) } },
      large: true,
    },
    {
      name: 'car payment processors',
      path: `/api/v1/cars/${picks.popularCarId}/payment_processors.json`,
      twin: { field: 'car_payment_processors', variables: { id: String(picks.popularCarId) } },
    },
    {
      name: 'manufacturer offers',
      path: `/manufacturers/${picks.manufacturerId}/offers.json`,
      keyReach: 'all',
      twin: { field: 'manufacturer_offers', variables: { id: picks.manufacturerId } },
      large: true,
      heavy: true,
    },
    {
      name: 'postcode search',
      path: `/manufacturers/${picks.manufacturerId}/search_by_postcode?postcode=${picks.postcode}`,
      keyReach: 'all',
      twin: { field: 'search_dealerships_by_postcode', variables: { id: picks.manufacturerId, postcode: picks.postcode } },
      heavy: true,
    },
    {
      name: 'contact (deep in the large dealership)',
      path: `/dealerships/${d.id}/contacts/${picks.deepContactId}`,
      twin: { field: 'contact', variables: { dealership_id: d.id, id: picks.deepContactId } },
    },
    {
      name: 'contacts (last page of 50)',
      path: `/dealerships/${d.id}/contacts?page=${picks.deepContactPage}&per_page=50`,
      twin: { field: 'contacts', variables: { dealership_id: d.id, page: picks.deepContactPage, per_page: 50 } },
      heavy: true,
    },
    {
      name: 'partner dealerships (one)',
      path: '/api/v1/partner/dealerships',
      twin: { field: 'partner_dealerships', variables: {} },
    },
    {
      name: 'partner dealerships (all)',
      path: '/api/v1/partner/dealerships',
      keyReach: 'all',
      twin: { field: 'partner_dealerships', variables: {} },
      large: true,
    },
    {
      name: 'dealership plugins',
      path: `/api/v1/dealerships/${d.slug}/plugins`,
      twin: { field: 'dealership_plugins', variables: { dealership_slug: d.slug } },
    },
    {
      name: 'car redirect (302)',
      path: `/api/v1/dealerships/${d.slug}/redirect_service?website_id=${picks.website.slug}&stocknum=${encodeURIComponent(picks.redirectStocknum)}`,
      status: 302,
    },
    {
      name: 'partner sign-on (a used token: 410)',
      path: `/api/v1/partner/sign_on?token=${encodeURIComponent(fixtures.usedToken)}`,
      status: 410,
    },
    {
      name: 'website models v2',
      path: `/api/v1/websites/${picks.website.slug}/models?version=2`,
      twin: { field: 'website_models', variables: { website_id: picks.website.slug, version: 2 } },
    },
    {
      name: 'webhook subscriptions',
      path: '/api/v1/webhook_subscriptions',
      twin: { field: 'webhook_subscriptions', variables: {} },
    },
    {
      name: 'webhook deliveries',
      path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId}/deliveries`,
      twin: { field: 'webhook_deliveries', variables: { id: fixtures.subscriptionId } },
    },
  ];
  if (picks.modelVariantSlug)
    reads.push({
      name: 'model variant',
      path: `/api/v1/model_variants/${picks.modelVariantSlug}?website_id=${picks.website.slug}`,
      twin: { field: 'model_variant', variables: { slug: picks.modelVariantSlug, website_id: picks.website.slug } },
    });
  if (picks.websiteOfferId !== null)
    reads.push({
      name: 'website offer',
      path: `/websites/${picks.website.id}/offers/${picks.websiteOfferId}.json`,
      twin: { field: 'website_offer', variables: { website_id: picks.website.id, id: picks.websiteOfferId } },
    });
  return reads;
}

/** The GraphQL reads that have no REST path: connections with totalCount, nested relation counts, node lookups. */
function graphReads(picks: Picks, fixtures: Fixtures): Target[] {
  const d = picks.dealership.id;
  const read = (name: string, keyReach: KeyReach, query: string, variables: Record<string, unknown>, heavy = false): Target => ({
    name,
    door: 'GraphQL',
    keyReach,
    request: graph(query, variables),
    status: 200,
    heavy,
  });
  return [
    read(
      'leads page with events { totalCount }',
      'one',
      'query ($d: Int!) { leads(dealership_id: $d, first: 50) { totalCount edges { node { databaseId name category events(first: 1) { totalCount } } } } }',
      { d },
      true,
    ),
    read(
      'leads { totalCount } (all dealerships)',
      'all',
      'query { leads(first: 10) { totalCount edges { node { databaseId } } } }',
      {},
      true,
    ),
    read(
      'cars(make:) { totalCount } (all dealerships)',
      'all',
      'query ($make: String!) { cars(make: $make, first: 20) { totalCount edges { node { databaseId stocknum } } } }',
      { make: picks.make },
      true,
    ),
    read(
      'Car.leads { totalCount } (a page of cars)',
      'one',
      'query ($d: Int!) { cars(dealership_id: $d, first: 20) { edges { node { databaseId leads(first: 1) { totalCount } } } } }',
      { d },
      true,
    ),
    read(
      "a page of dealerships with each one's first cars (all dealerships)",
      'all',
      'query { dealerships(first: 20) { edges { node { databaseId cars(first: 2) { edges { node { databaseId stocknum } } } } } } }',
      {},
      true,
    ),
    read(
      'dealerships { totalCount } (all dealerships)',
      'all',
      'query { dealerships(first: 50) { totalCount edges { node { databaseId name } } } }',
      {},
    ),
    read(
      'dealership contacts { totalCount }',
      'one',
      'query ($d: Int!) { dealership(id: $d) { contacts(first: 50) { totalCount edges { node { databaseId first_name } } } } }',
      { d },
    ),
    read('node (a car)', 'one', 'query ($id: ID!) { node(id: $id) { id ... on Car { databaseId stocknum make } } }', {
      id: fixtures.carNodeId,
    }),
    read('nodes (20 leads)', 'one', 'query ($ids: [ID!]!) { nodes(ids: $ids) { id ... on Lead { databaseId name } } }', {
      ids: fixtures.leadNodeIds,
    }),
  ];
}

function writes(server: Server, keys: Record<KeyReach, string>, picks: Picks, fixtures: Fixtures): Target[] {
  const d = picks.dealership.id;
  const write = (name: string, request: RequestSpec, status: number, keyReach: KeyReach = 'one'): Target => ({
    name,
    door: 'REST',
    keyReach,
    request,
    status,
    write: true,
  });
  const lead = {
    name: 'Jordan Lee',
    email: 'jordan.bench@example.com',
    phone: '0412 345 678',
    dealership_id: picks.writeDealershipId,
    category: 'Used Vehicle Enquiry',
    source: 'Website',
    message: 'Is it still available?',
    send_customer_email: false,
  };
  const car = picks.writeCar;
  const targets: Target[] = [
    write('lead POST', { method: 'POST', path: '/api/v1/leads', body: json({ lead }) }, 201, 'all'),
    {
      ...write(
        'lead POST',
        graph('mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { databaseId } } }', {
          lead: { ...lead, category: 'USED_VEHICLE_ENQUIRY' },
        }),
        200,
        'all',
      ),
      door: 'GraphQL',
    },
    write(
      'lead PUT',
      { method: 'PUT', path: `/api/v1/leads/${fixtures.leadId}`, body: json({ lead: { message: 'Updated by the bench' } }) },
      200,
    ),
    write(
      'lead event POST',
      {
        method: 'POST',
        path: `/api/v1/lead_events/sms/create?data=${encodeURIComponent(json({ leadId: fixtures.leadId, messageDetail: { sentBy: 'Bench', description: 'Booked' } }))}`,
      },
      201,
    ),
    write(
      'car PUT',
      {
        method: 'PUT',
        path: `/api/cars/${car.id}`,
        body: json({
          car: { stocknum: car.stocknum, dealership_id: d, make: car.make, model: car.model, year: car.year, odometer: 42_000 },
        }),
      },
      200,
    ),
    // Released, so that the car reads the same after every round.
    write('car reserve PUT (reserved=false)', { method: 'PUT', path: `/api/v1/cars/${car.id}/reserve?reserved=false` }, 200),
    {
      ...write(
        'webhook rotate secret',
        { method: 'POST', path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId}/rotate_secret` },
        200,
      ),
      alsoExpected: 409,
    },
    write('webhook disable', { method: 'POST', path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId}/disable` }, 200),
    write('webhook enable', { method: 'POST', path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId}/enable` }, 200),
  ];
  if (picks.userEmail)
    targets.push(
      write('partner token POST', { method: 'POST', path: '/api/v1/partner/tokens', body: json({ email: picks.userEmail }) }, 201),
    );
  if (picks.trackingPhone)
    targets.push(
      write(
        'phone call POST',
        {
          method: 'POST',
          path: '/api/v1/webhooks/phone_calls_webhooks/generic',
          body: json({ called_number: picks.trackingPhone, caller_number: '+61412000002' }),
        },
        202,
        'all',
      ),
    );
  if (fixtures.deliveryId !== null)
    targets.push(
      write(
        'webhook redeliver',
        { method: 'POST', path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId}/deliveries/${fixtures.deliveryId}/redeliver` },
        200,
      ),
    );
  // Subscriptions made by one run are removed by the next: the dealership's count stays under its limit.
  const made: number[] = [];
  const subscription = (n: number): RequestSpec => ({
    method: 'POST',
    path: '/api/v1/webhook_subscriptions',
    body: json({ subscription: { url: `https://hooks.bench.example/${n}`, events: ['car.updated'], dealership_id: d } }),
  });
  const createTarget = write('webhook subscription POST', subscription(0), 201);
  createTarget.fixed = { amount: FIXED_WRITES, nth: (n) => subscription(n) };
  const deleteTarget = write(
    'webhook subscription DELETE',
    { method: 'DELETE', path: `/api/v1/webhook_subscriptions/${fixtures.subscriptionId + 1}` },
    200,
  );
  deleteTarget.fixed = {
    amount: FIXED_WRITES,
    nth: (n) => ({ method: 'DELETE', path: `/api/v1/webhook_subscriptions/${made[n] ?? 0}` }),
    before: async () => {
      made.length = 0;
      const listed = (await send(server, { method: 'GET', path: '/api/v1/webhook_subscriptions' }, keys.one)).body as { id: number }[];
      for (const entry of listed) if (entry.id !== fixtures.subscriptionId) made.push(entry.id);
      while (made.length < FIXED_WRITES) {
        const answer = await send(server, subscription(made.length), keys.one);
        made.push((answer.body as { subscription: { id: number } }).subscription.id);
      }
    },
  };
  targets.push(createTarget, deleteTarget);
  return targets;
}

function targetsFor(server: Server, keys: Record<KeyReach, string>, picks: Picks, fixtures: Fixtures): Target[] {
  const reads = restReads(picks, fixtures);
  const documents = restSelectionDocuments(
    reads.flatMap((read) => (read.twin ? [{ kind: OperationTypeNode.QUERY, field: read.twin.field }] : [])),
  );
  const targets: Target[] = [];
  for (const read of reads) {
    const common = { keyReach: read.keyReach ?? 'one', heavy: read.heavy ?? false, large: read.large ?? false };
    targets.push({ name: read.name, door: 'REST', request: { method: 'GET', path: read.path }, status: read.status ?? 200, ...common });
    if (read.twin)
      targets.push({
        name: read.name,
        door: 'GraphQL',
        request: graph(documents.get(read.twin.field) ?? '', read.twin.variables),
        status: 200,
        twinOf: read.twin.field,
        ...common,
      });
  }
  return [...targets, ...graphReads(picks, fixtures), ...writes(server, keys, picks, fixtures)];
}

// ─── measuring ───

/** The statements the service has sent (its /metrics counter); NaN when it has none. */
async function statementsSent(server: Server): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${server.port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await response.text();
  const match = /^gateway_db_statements_total (\S+)$/m.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

/** CPU time of the PostgreSQL backends serving a database, by pid (pg_stat_activity by datname). */
async function backendCpu(admin: pg.Client | null, databaseName: string | null): Promise<Map<number, number>> {
  const found = new Map<number, number>();
  if (!admin || !databaseName) return found;
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [databaseName]);
  for (const { pid } of rows) {
    const spent = cpuMsIfRunning(pid);
    if (!Number.isNaN(spent)) found.set(pid, spent);
  }
  return found;
}

function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, cpu] of after) spent += cpu - (before.get(pid) ?? 0);
  return spent;
}

async function measure(admin: pg.Client | null, running: Running, target: Target, load: LoadOptions): Promise<ScaleSample> {
  const key = running.keys[target.keyReach];
  if (target.fixed?.before) await target.fixed.before();
  const statementsBefore = await statementsSent(running.server);
  const databaseBefore = await backendCpu(admin, running.databaseName);
  const sample: Sample = await drive(running.server, target.request, key, load);
  const databaseAfter = await backendCpu(admin, running.databaseName);
  // The scrape's own statement (the outbox gauges' query) is not a request's.
  const statements = (await statementsSent(running.server)) - statementsBefore - 1;
  const expected =
    (sample.statuses[String(target.status)] ?? 0) +
    (target.alsoExpected !== undefined ? (sample.statuses[String(target.alsoExpected)] ?? 0) : 0);
  return {
    ...sample,
    statementsPerRequest: sample.total > 0 ? statements / sample.total : Number.NaN,
    databaseCpuMsPerRequest: admin && sample.total > 0 ? backendCpuSpent(databaseBefore, databaseAfter) / sample.total : Number.NaN,
    unexpected: sample.total - expected,
  };
}

function loadFor(target: Target, seconds: number, clients = connections): LoadOptions {
  const base = { connections: target.write ? writeConnections : clients, seconds };
  return target.fixed ? { ...base, amount: target.fixed.amount, nth: target.fixed.nth } : base;
}

// ─── the run ───

const databases = new Set<Database>();

async function prepare(engine: Engine, dataSet: DataSet, log: (line: string) => void): Promise<{ url: string; name: string | null }> {
  const reused = dataSet === 'platform' ? (engine === 'sqlite' ? options['platform-sqlite'] : options['platform-url']) : undefined;
  if (reused) {
    const url = engine === 'sqlite' ? `file:${path.resolve(reused)}` : reused;
    if (engine === 'sqlite' && !existsSync(path.resolve(reused))) throw new Error(`--platform-sqlite ${reused}: no such file`);
    log(`the platform: the existing database ${engine === 'sqlite' ? url : new URL(url).pathname.slice(1)}`);
    return { url, name: engine === 'postgresql' ? new URL(url).pathname.slice(1) : null };
  }
  const database = await createDatabase(engine, dataSet, options['postgres-url']);
  databases.add(database);
  const args = [
    'run',
    '--silent',
    'seed',
    ...(dataSet === 'platform' ? ['--', '--scale', 'platform', ...(fraction ? ['--fraction', fraction] : [])] : []),
  ];
  log(`seeding the ${dataSet} (npm ${args.slice(2).join(' ')})`);
  const started = performance.now();
  await run('npm', args, { cwd: projectRoot, env: productionEnv(database.url), maxBuffer: 64 * 1024 * 1024 });
  log(`seeded the ${dataSet} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { url: database.url, name: engine === 'postgresql' ? new URL(database.url).pathname.slice(1) : null };
}

async function startDataSet(engine: Engine, dataSet: DataSet, log: (line: string) => void): Promise<Running> {
  const { url, name } = await prepare(engine, dataSet, log);
  const db = createDb(url);
  let picks: Picks;
  try {
    picks = await pick(db);
  } finally {
    await db.$disconnect();
  }
  log(
    `${dataSet}: dealership ${picks.dealership.id} (${picks.dealership.leads} leads, ${picks.dealership.cars} cars, ${picks.dealership.contacts} contacts), ` +
      `car ${picks.popularCarId}, manufacturer ${picks.manufacturerId}, make ${picks.make}, contact page ${picks.deepContactPage}`,
  );
  const env = productionEnv(url);
  const dealershipArgs = (ids: number[]): string[] => ids.flatMap((id) => ['--dealership', String(id)]);
  const keys: Record<KeyReach, string> = {
    one: await issueKey(projectRoot, env, ['--all-permissions', ...dealershipArgs([picks.dealership.id])]),
    few: await issueKey(projectRoot, env, ['--all-permissions', ...dealershipArgs([picks.dealership.id, ...picks.fewIds])]),
    all: await issueKey(projectRoot, env, ['--all-permissions']),
  };
  const server = await startServer(dataSet, `${dataSet} service`, projectRoot, START_PRODUCTION, {
    ...env,
    RESPONSE_CACHE: 'false',
    FILE_STORAGE_DIR: path.join(tmpdir(), `dgw-bench-scale-files-${process.pid}-${dataSet}`),
  });
  const fixtures = await setUp(server, keys, picks);
  return { dataSet, server, keys, picks, targets: targetsFor(server, keys, picks, fixtures), databaseName: name };
}

/** Every answer once: its status, and the GraphQL twins' data against the REST body. */
async function check(running: Running, failures: string[]): Promise<Map<string, number>> {
  const bytes = new Map<string, number>();
  const restBodies = new Map<string, unknown>();
  for (const target of running.targets) {
    if (target.fixed) continue;
    const answer = await send(running.server, target.request, running.keys[target.keyReach]);
    bytes.set(`${target.name}|${target.door}`, answer.bytes);
    const errors = target.door === 'GraphQL' ? (answer.body as { errors?: unknown } | null)?.errors : undefined;
    if (answer.status !== target.status || errors !== undefined) {
      failures.push(`${running.dataSet} ${target.door} ${target.name}: ${answer.status} ${json(answer.body).slice(0, 300)}`);
      continue;
    }
    if (target.door === 'REST') restBodies.set(target.name, answer.body);
    if (target.twinOf) {
      const data = (answer.body as { data?: Record<string, unknown> }).data?.[target.twinOf];
      if (!isDeepStrictEqual(data, restBodies.get(target.name)))
        failures.push(`${running.dataSet} ${target.name}: the GraphQL data differs from the REST body`);
    }
  }
  return bytes;
}

async function benchEngine(engine: Engine): Promise<{ lines: string[]; failures: string[] }> {
  const log = (line: string): void => console.error(`[bench:scale ${engine}] ${line}`);
  const loadAtStart = loadavg();
  const failures: string[] = [];
  const running: Running[] = [];
  const admin = engine === 'postgresql' ? new pg.Client({ connectionString: options['postgres-url'] }) : null;
  await admin?.connect();
  try {
    for (const dataSet of dataSets) running.push(await startDataSet(engine, dataSet, log));
    const [demo, platform] = running as [Running, Running];
    log('checking every answer');
    const bytes = new Map(running.map((entry) => [entry.dataSet, new Map<string, number>()]));
    for (const entry of running) bytes.set(entry.dataSet, await check(entry, failures));
    if (failures.length > 0) return { lines: [`## ${engine}: not measured, answers were wrong`], failures };

    log('warming up');
    for (const entry of running)
      for (const target of entry.targets)
        if (!target.fixed) await drive(entry.server, target.request, entry.keys[target.keyReach], { ...loadFor(target, 0.3) });

    const samples = new Map<string, ScaleSample[]>();
    for (let round = 1; round <= rounds; round += 1) {
      log(`round ${round} of ${rounds}`);
      for (const target of demo.targets) {
        for (const entry of running) {
          // The same path on each data set, by name and door (a data set may lack an optional one).
          const own = entry.targets.find((candidate) => candidate.name === target.name && candidate.door === target.door);
          if (!own) continue;
          const id = `${entry.dataSet}|${own.name}|${own.door}`;
          samples.set(id, [...(samples.get(id) ?? []), await measure(admin, entry, own, loadFor(own, durationSeconds))]);
        }
      }
    }

    // The writes driven a fixed number of times were not checked before: their answers are checked here.
    for (const [id, runs] of samples) {
      const unexpected = runs.reduce((sum, sample) => sum + sample.unexpected, 0);
      if (
        unexpected > 0 &&
        id.endsWith('|REST') &&
        running.some((entry) => entry.targets.some((t) => t.fixed && id === `${entry.dataSet}|${t.name}|${t.door}`))
      )
        failures.push(`${id.replaceAll('|', ' ')}: ${unexpected} answer(s) with another status than the expected one`);
    }

    log(`concurrency check: ${CHECK_CLIENTS} clients on the heaviest reads of the platform`);
    const concurrency: { name: string; door: Door; sample: ScaleSample }[] = [];
    for (const target of platform.targets.filter((candidate) => candidate.heavy))
      concurrency.push({
        name: target.name,
        door: target.door,
        sample: await measure(admin, platform, target, loadFor(target, durationSeconds, CHECK_CLIENTS)),
      });

    log(`memory check: ${CHECK_CLIENTS} clients on the largest answers of the platform`);
    let peakRss = rssMb(platform.server.pid);
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssMb(platform.server.pid));
    }, 50);
    const large = platform.targets.filter((candidate) => candidate.large);
    try {
      await Promise.all(
        large.map((target) =>
          drive(platform.server, target.request, platform.keys[target.keyReach], {
            connections: Math.max(1, Math.round(CHECK_CLIENTS / large.length)),
            seconds: Math.max(durationSeconds, 2),
          }),
        ),
      );
    } finally {
      clearInterval(sampler);
    }
    peakRss = Math.max(peakRss, rssMb(platform.server.pid));

    const figures: PathFigures[] = demo.targets.map((target) => ({
      name: target.name,
      door: target.door,
      demo: samples.get(`demo|${target.name}|${target.door}`) ?? [],
      platform: samples.get(`platform|${target.name}|${target.door}`) ?? [],
      demoBytes: bytes.get('demo')?.get(`${target.name}|${target.door}`) ?? Number.NaN,
      platformBytes: bytes.get('platform')?.get(`${target.name}|${target.door}`) ?? Number.NaN,
    }));
    const lines = formatScaleReport({
      engine,
      rounds,
      durationSeconds,
      connections,
      writeConnections,
      withDatabaseCpu: engine === 'postgresql',
      sizes: running.map(
        (entry) =>
          `${entry.dataSet}: dealership ${entry.picks.dealership.id} with ${entry.picks.dealership.leads} leads, ${entry.picks.dealership.cars} cars, ${entry.picks.dealership.contacts} contacts`,
      ),
      figures,
      concurrency,
      memory: {
        clients: CHECK_CLIENTS,
        paths: large.map((target) => `${target.name} (${target.door})`),
        peakRssMb: peakRss,
        ceilingMb: rssCeilingMb,
      },
      loadAtStart,
      loadAtEnd: loadavg(),
    });
    return { lines, failures };
  } finally {
    await Promise.all(running.map((entry) => stopChild(entry.server.child)));
    await admin?.end();
    for (const database of databases) {
      await database.drop().catch((error: unknown) => console.error(`could not drop a bench database: ${String(error)}`));
      databases.delete(database);
    }
  }
}

async function cleanUpAndExit(code: number): Promise<never> {
  await stopAllChildren();
  for (const database of databases) await database.drop().catch(() => undefined);
  process.exit(code);
}

process.on('SIGINT', () => void cleanUpAndExit(130));
process.on('SIGTERM', () => void cleanUpAndExit(143));

async function main(): Promise<number> {
  // The service is measured as `npm run start:production` runs it: compiled (its prestart builds when stale; done once here).
  await run('node', ['scripts/build.mjs', '--if-stale'], { cwd: projectRoot });
  const header = [
    `# npm run bench:scale: ${new Date().toISOString()}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}${quick ? ' (--quick)' : ''}`,
    `service: ${START_PRODUCTION.shown}, RESPONSE_CACHE=false; platform: ${
      options['platform-url'] || options['platform-sqlite']
        ? 'an existing database'
        : `npm run seed -- --scale platform${fraction ? ` --fraction ${fraction}` : ''}`
    }`,
    '',
  ];
  const lines: string[] = [];
  const failures: string[] = [];
  for (const engine of engines) {
    const result = await benchEngine(engine);
    lines.push(...result.lines);
    failures.push(...result.failures.map((failure) => `${engine}: ${failure}`));
  }
  console.log(
    [
      ...header,
      ...lines,
      ...(failures.length > 0 ? ['answers that were not the expected ones:', ...failures.map((f) => `  ${f}`)] : []),
    ].join('\n'),
  );
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => cleanUpAndExit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    return cleanUpAndExit(1);
  },
);
