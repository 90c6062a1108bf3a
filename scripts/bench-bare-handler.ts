// The benchmark's floor (`npm run bench`): a plain node:http handler that answers the two point reads
//   GET /api/v1/apikeys/apikey_details.json   and   GET /api/v1/cars/{id}/performance.json
// with the same Prisma client, sending the same SQL statements as the service, and nothing else: no
// GraphQL, no Sofa, no caches. The key is verified by its hash on every request (lookUpKey, one
// statement, as the service does on a key-cache miss), the car and its figures come from
// carPerformance and the key's dealerships from keyDealerships (the service's own functions, so the
// queries cannot drift), both through the caller's scoped client as the service reads them, and
// apikey_details builds the key's id and permissions from the verified key and asks for its
// dealerships what Pothos asks for the REST selection (whole rows).
// test/bench-bare-handler.test.ts holds its bodies and its SQL statements (the key lookup aside)
// equal to the service's, so the ratio is honest.
//
// Run alone: DATABASE_URL=… PORT=… tsx scripts/bench-bare-handler.ts (listens on 127.0.0.1).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { lastUseIsStale, lookUpKey, recordKeyUse, type Actor } from '../src/auth/api-keys.ts';
import { createDb, type Db } from '../src/db/client.ts';
import { forActor } from '../src/db/scoped.ts';
import { carPerformance, type CarPerformance } from '../src/domain/car-performance.ts';
import { keyDealerships } from '../src/domain/key-dealerships.ts';
import { numberOrZero, textOrEmpty } from '../src/schema/always-present.ts';

const UNAUTHORIZED = { error: 'unauthorized', message: 'A valid API key is required: send "Authorization: Bearer <key>".' };
const CAR_NOT_FOUND = { error: 'car_not_found', message: 'No car with that identifier.' };
const INVALID_DEALERSHIP = { error: 'invalid_dealership', message: 'The car belongs to a dealership this API key cannot use.' };
const PERFORMANCE_PATH = /^\/api\/v1\/cars\/([^/]+)\/performance\.json$/;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function authenticate(db: Db, req: IncomingMessage, now: Date): Promise<Actor | null> {
  const header = req.headers.authorization ?? '';
  const key = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
  const verified = await lookUpKey(db, key, now);
  if (!verified) return null;
  // Same rule as the service: last_used_at at most once a minute, known from the lookup's own row.
  if (lastUseIsStale(verified.lastUsedAt, now)) await recordKeyUse(db, verified.actor.apiKeyId, now);
  return verified.actor;
}

/** Spec 4.7 with the REST selection: the key's permissions and dealerships with their locations and users. */
async function apiKeyDetails(db: Db, actor: Actor): Promise<unknown> {
  // The service's own domain function, with the query Pothos asks for the REST selection.
  const { entries: dealerships, truncated } = await keyDealerships(forActor(db, actor), {
    include: {
      locations: { orderBy: { id: 'asc' } },
      users: { select: { user: true }, orderBy: { user_id: 'asc' } },
    },
  });
  return {
    id: actor.apiKeyId,
    permissions: [...actor.permissions].sort(),
    dealerships: dealerships.map((dealership) => ({
      id: dealership.id,
      name: dealership.name,
      slug: dealership.slug,
      locations: dealership.locations.map((location) => ({ id: location.id, name: location.name, location_type: location.location_type })),
      users: dealership.users.map(({ user }) => ({ id: user.id, name: user.name, email: user.email })),
    })),
    dealerships_truncated: truncated,
  };
}

/**
 * The performance record as the service prints it: its scalars (DateTime ISO, Date yyyy-mm-dd) and
 * the never-null fields' empty values (src/schema/always-present.ts).
 */
function performanceBody(performance: CarPerformance): unknown {
  return {
    ...performance,
    vin: textOrEmpty(performance.vin),
    start_price: numberOrZero(performance.start_price),
    price_changes: performance.price_changes.map((change) => ({
      ...change,
      dapprice: numberOrZero(change.dapprice),
      egcprice: numberOrZero(change.egcprice),
    })),
    sold_date: performance.sold_date?.toISOString().slice(0, 10) ?? null,
  };
}

/** The request handler: exported so the test can hold its answers equal to the service's. */
export function createBareHandler(db: Db, now: () => Date = () => new Date()): (req: IncomingMessage, res: ServerResponse) => void {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://bare.local');
    if (req.method === 'GET' && url.pathname === '/health') return send(res, 200, { status: 'ok' });
    const performanceMatch = PERFORMANCE_PATH.exec(url.pathname);
    if (req.method !== 'GET' || (url.pathname !== '/api/v1/apikeys/apikey_details.json' && !performanceMatch)) {
      return send(res, 404, { error: 'not_found', message: 'Only the two point reads are served here.' });
    }
    const at = now();
    const actor = await authenticate(db, req, at);
    if (!actor) return send(res, 401, UNAUTHORIZED);
    if (!performanceMatch) return send(res, 200, await apiKeyDetails(db, actor));
    if (!actor.permissions.has('read:car'))
      return send(res, 403, { error: 'forbidden', message: 'This API key does not have the permission this operation needs.' });
    const identifier = decodeURIComponent(performanceMatch[1] ?? '');
    const lookupBy = url.searchParams.get('lookup_by') === 'vin' ? 'vin' : null;
    const outcome = await carPerformance({ db: forActor(db, actor), unscopedDb: db }, identifier, lookupBy, at).then(
      (performance) => ({ performance }),
      (error: unknown) => ({ error: (error as { extensions?: { error?: string } }).extensions?.error }),
    );
    if ('performance' in outcome) return send(res, 200, performanceBody(outcome.performance));
    if (outcome.error === 'invalid_dealership') return send(res, 403, INVALID_DEALERSHIP);
    if (outcome.error === 'car_not_found') return send(res, 404, CAR_NOT_FOUND);
    throw new Error('car performance failed');
  }
  return (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'Unexpected error.' });
      else res.end();
    });
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required');
  const db = createDb(databaseUrl);
  const server = createServer(createBareHandler(db));
  server.listen(Number(process.env.PORT ?? 4100), '127.0.0.1');
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void db.$disconnect().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
