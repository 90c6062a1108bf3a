// /metrics: this instance's counters in Prometheus' text format, behind METRICS_TOKEN. Each case
// scrapes, acts, scrapes again and reads the difference, so the counters are proven to move for
// the thing they count (a REST read, a GraphQL operation, a 429, a cache hit and miss, the outbox).
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { deliverDueMessages } from '../src/notifications/worker.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { createMetrics, type GatewayMetrics } from '../src/telemetry/metrics.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { loadConfig } from '../src/config/index.ts';
import { instanceDeps, testSettings, type TestApp } from './support/app.ts';
import { testEngine } from './support/database.ts';
import { createDemoApp } from './support/demo.ts';
import { makeKey } from './support/fixtures.ts';
import { samplePayload } from './support/fixtures-leads.ts';
import { PROMTOOL_MISSING, promtool, runPromtool } from './support/promtool.ts';

const TOKEN = 'metrics-token-for-tests-0123456789abcdef';

let app: TestApp;
let key: string;
let metrics: GatewayMetrics;
/** The demo app with METRICS_TOKEN set and the response cache on. */
let yoga: Yoga;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  metrics = createMetrics({ db: app.db, now: app.clock.now, logger: pino({ level: 'silent' }) });
  yoga = createApp(
    instanceDeps(
      { config: { ...app.config, metricsToken: TOKEN }, db: app.db, now: app.clock.now },
      { readCache: inMemoryReadCache(), metrics },
    ),
  );
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name = '', value = ''] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(target: Yoga = yoga): Promise<Sample[]> {
  const response = await target.fetch('http://gateway.test/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await response.text());
}

/** The sample's value, 0 when it is not there yet (a counter with labels appears on its first count). */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  );
  return found?.value ?? 0;
}

/** How much each of the samples moved while `act` ran. */
async function moved(samples: [string, Record<string, string>?][], act: () => Promise<void>, target: Yoga = yoga): Promise<number[]> {
  const before = await scrape(target);
  await act();
  const after = await scrape(target);
  return samples.map(([name, labels]) => sampleValue(after, name, labels) - sampleValue(before, name, labels));
}

const get = (path: string, bearer?: string, target: Yoga = yoga): Promise<Response> =>
  Promise.resolve(target.fetch(`http://gateway.test${path}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} }));

describe('METRICS_TOKEN', () => {
  it('is off by default, and a token too short to be a secret is refused without being repeated', () => {
    expect(loadConfig({ ...testSettings }).metricsToken).toBeNull();
    expect(loadConfig({ ...testSettings, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
    const short = 'short-token-1';
    expect(() => loadConfig({ ...testSettings, METRICS_TOKEN: short })).toThrow(/METRICS_TOKEN must be 32 to 256 printable characters/);
    expect(() => loadConfig({ ...testSettings, METRICS_TOKEN: short })).not.toThrow(new RegExp(short));
  });
});

describe('/metrics', () => {
  it('does not exist without METRICS_TOKEN (404), and needs the token with it (401)', async () => {
    const plain = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }));
    const hidden = await get('/metrics', TOKEN, plain);
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toMatchObject({ error: 'not_found' });
    for (const bearer of [undefined, 'wrong-token', `${TOKEN}x`, key]) {
      const refused = await get('/metrics', bearer);
      expect(refused.status, String(bearer)).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      const body = await refused.text();
      expect(body).not.toContain('gateway_');
      expect(JSON.parse(body)).toMatchObject({ error: 'unauthorized', request_id: refused.headers.get('request-id') });
    }
    const answered = await get('/metrics', TOKEN);
    expect(answered.status).toBe(200);
    expect(answered.headers.get('cache-control')).toBe('no-store');
    expect(answered.headers.get('request-id')).toEqual(expect.any(String));
  });

  it('counts REST reads by route template and status, ids never in the label', async () => {
    const door = 'GET /api/v1/cars/{id}/performance.json';
    const [ok, missing, seconds] = await moved(
      [
        ['gateway_http_requests_total', { door, status: '200' }],
        ['gateway_http_requests_total', { door, status: '404' }],
        ['gateway_http_request_duration_seconds_count', { door, status: '200' }],
      ],
      async () => {
        expect((await get('/api/v1/cars/1/performance.json', key)).status).toBe(200);
        expect((await get('/api/v1/cars/2/performance.json', key)).status).toBe(200);
        expect((await get('/api/v1/cars/999999/performance.json', key)).status).toBe(404);
      },
    );
    expect([ok, missing, seconds]).toEqual([2, 1, 2]);
    const samples = await scrape();
    expect(samples.some((sample) => /\/cars\/\d/.test(sample.labels.door ?? ''))).toBe(false);
    expect(
      sampleValue(samples, 'gateway_http_request_duration_seconds_bucket', { door, status: '200', le: '+Inf' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it('counts unknown paths under one label', async () => {
    const [unmatched] = await moved([['gateway_http_requests_total', { door: 'unmatched', status: '404' }]], async () => {
      for (const path of ['/a', '/b/1', '/c/2/3']) expect((await get(path)).status).toBe(404);
    });
    expect(unmatched).toBe(3);
  });

  it("counts GraphQL operations by type and root field (never by the caller's name), and their errors by code", async () => {
    let code = '';
    const [named, anonymous, errors] = await moved(
      [
        ['gateway_http_requests_total', { door: 'query car_performance', status: '200' }],
        ['gateway_http_requests_total', { door: 'query apikey_details', status: '200' }],
        ['gateway_graphql_errors_total', { code: 'NOT_FOUND' }],
      ],
      async () => {
        const post = (body: unknown): Promise<Response> =>
          Promise.resolve(
            yoga.fetch('http://gateway.test/graphql', {
              method: 'POST',
              headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            }),
          );
        const failed = await post({ query: 'query Perf { car_performance(id: "999999") { __typename } }' });
        code = String(((await failed.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code);
        expect((await post({ query: '{ apikey_details { id: databaseId } }' })).status).toBe(200);
      },
    );
    expect(code).toBe('NOT_FOUND');
    expect([named, anonymous, errors]).toEqual([1, 1, 1]);
  });

  it('makes no series from what a caller writes: 1,000 operation names, with a key and without, add none', async () => {
    /** The series a caller's requests can add to: everything but the runtime's own (process_*, nodejs_*), which no request labels. */
    const requestSeries = async (): Promise<Set<string>> =>
      new Set(
        (await scrape())
          .filter((sample) => sample.name.startsWith('gateway_'))
          .map((sample) => `${sample.name}${JSON.stringify(sample.labels)}`),
      );
    const post = (name: string, bearer: string | null): Promise<Response> =>
      Promise.resolve(
        yoga.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), 'content-type': 'application/json' },
          body: JSON.stringify({ query: `query ${name} { apikey_details { id: databaseId } }`, operationName: name }),
        }),
      );
    // The series these requests belong to exist once one of each kind has been answered.
    const first = [await post('Warm', key), await post('Warm', null)];
    await scrape();
    const statuses = first.map((response) => response.status);
    const before = await requestSeries();
    for (let index = 0; index < 1_000; index += 1) {
      const name = `Op${index}_${'x'.repeat(index % 3 === 0 ? 3_000 : 8)}`;
      const answers = await Promise.all([post(name, key), post(name, null)]);
      expect(answers.map((response) => response.status)).toEqual(statuses);
    }
    const after = await requestSeries();
    expect([...after].filter((series) => !before.has(series))).toEqual([]);
    expect(after.size).toBe(before.size);
    expect([...after].some((series) => series.includes('Op1_'))).toBe(false);
  }, 180_000);

  it('labels an operation of several root fields with one door, whatever fields it combines', async () => {
    const post = (query: string): Promise<Response> =>
      Promise.resolve(
        yoga.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }),
      );
    const [several, one, introspection] = await moved(
      [
        ['gateway_http_requests_total', { door: 'query (several root fields)', status: '200' }],
        ['gateway_http_requests_total', { door: 'query apikey_details', status: '200' }],
        ['gateway_http_requests_total', { door: 'query (introspection)', status: '200' }],
      ],
      async () => {
        expect((await post('{ apikey_details { id: databaseId } cars(first: 1) { totalCount } }')).status).toBe(200);
        expect((await post('query Renamed { c: cars(first: 2) { totalCount } a: apikey_details { id: databaseId } }')).status).toBe(200);
        // Aliases are the caller's: the field is the schema's.
        expect(
          (await post('query Aliased { a: apikey_details { id: databaseId } b: apikey_details { id: databaseId } __typename }')).status,
        ).toBe(200);
        expect((await post('{ __typename }')).status).toBe(200);
      },
    );
    expect([several, one, introspection]).toEqual([2, 1, 1]);
  });

  it('counts response-cache misses and hits in each tier', async () => {
    const counts = await moved(
      [
        ['gateway_response_cache_lookups_total', { tier: 'answer', outcome: 'miss' }],
        ['gateway_response_cache_lookups_total', { tier: 'result', outcome: 'miss' }],
        ['gateway_response_cache_lookups_total', { tier: 'answer', outcome: 'hit' }],
        ['gateway_response_cache_lookups_total', { tier: 'result', outcome: 'hit' }],
      ],
      async () => {
        expect((await get('/manufacturers/1/offers.json', key)).status).toBe(200);
        expect((await get('/manufacturers/1/offers.json', key)).status).toBe(200);
      },
    );
    // The first read misses both tiers; the second is answered by the answer tier, before any GraphQL work.
    expect(counts).toEqual([1, 1, 1, 0]);
  });

  it('counts the SQL statements the instance sends', async () => {
    let ran = 0;
    const [counted] = await moved([['gateway_db_statements_total']], async () => {
      app.queries.length = 0;
      // A lead POST is never served from the cache: its statements are sent every time.
      const response = await yoga.fetch('http://gateway.test/api/v1/leads', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ lead: samplePayload(1, { email: 'counted@example.com' }) }),
      });
      expect(response.status).toBe(201);
      ran = app.queries.filter((sql) => !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(sql.trim())).length;
    });
    expect(ran).toBeGreaterThan(2);
    // The scrapes' own outbox query, and a background flush of the key-call log, may fall inside the span.
    expect(counted! - ran).toBeGreaterThanOrEqual(0);
    expect(counted! - ran).toBeLessThanOrEqual(4);
  });

  it('counts a GraphQL answer the answer tier served under its operation, like the one it repeats', async () => {
    const body = JSON.stringify({ query: 'query CachedTwice { apikey_details { id: databaseId } }' });
    const post = (): Promise<Response> =>
      Promise.resolve(
        yoga.fetch('http://gateway.test/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        }),
      );
    const [answered, served] = await moved(
      [
        ['gateway_http_requests_total', { door: 'query apikey_details', status: '200' }],
        ['gateway_response_cache_lookups_total', { tier: 'answer', outcome: 'hit' }],
      ],
      async () => {
        expect((await post()).status).toBe(200);
        expect((await post()).status).toBe(200);
      },
    );
    expect([answered, served]).toEqual([2, 1]);
  });

  it('counts rate-limit refusals, and a scrape is never refused', async () => {
    const limitedKey = (await makeKey(app.db, { permissions: ['read:car'] })).key;
    const limited = createApp(
      instanceDeps({
        config: { ...app.config, metricsToken: TOKEN, rateLimits: { ...app.config.rateLimits, keyRequests: 1 } },
        db: app.db,
        now: app.clock.now,
      }),
    );
    const door = 'GET /api/v1/cars/{id}/performance.json';
    const [refusals, answered429] = await moved(
      [
        ['gateway_rate_limit_refusals_total', { door }],
        ['gateway_http_requests_total', { door, status: '429' }],
      ],
      async () => {
        expect((await get('/api/v1/cars/1/performance.json', limitedKey, limited)).status).toBe(200);
        expect((await get('/api/v1/cars/1/performance.json', limitedKey, limited)).status).toBe(429);
        expect((await get('/api/v1/cars/1/performance.json', limitedKey, limited)).status).toBe(429);
        for (let scrapes = 0; scrapes < 3; scrapes += 1) expect((await get('/metrics', TOKEN, limited)).status).toBe(200);
      },
      limited,
    );
    expect([refusals, answered429]).toEqual([2, 2]);
  });

  it('reads the outbox at scrape time: pending messages and the age of the oldest', async () => {
    const now = app.clock.now();
    await app.db.outboxMessage.create({
      data: {
        kind: 'lead_notification',
        recipient: 'ops@example.com',
        subject: 's',
        body: 'b',
        status: 'pending',
        due_at: now,
        created_at: new Date(now.getTime() - 3_600_000),
      },
    });
    const pending = await app.db.outboxMessage.aggregate({
      where: { status: 'pending' },
      _count: { _all: true },
      _min: { created_at: true },
    });
    const samples = await scrape();
    expect(sampleValue(samples, 'gateway_outbox_pending_messages')).toBe(pending._count._all);
    expect(pending._count._all).toBeGreaterThanOrEqual(1);
    const oldest = pending._min.created_at ?? now;
    expect(sampleValue(samples, 'gateway_outbox_oldest_pending_age_seconds')).toBe((now.getTime() - oldest.getTime()) / 1000);
    expect(sampleValue(samples, 'gateway_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(3_600);
  });

  it('counts failed deliveries', async () => {
    let retried = 0;
    const [retries] = await moved([['gateway_notification_delivery_failures_total', { outcome: 'retry' }]], async () => {
      const report = await deliverDueMessages({
        db: app.db,
        engine: app.config.engine,
        mailer: { send: () => Promise.reject(new Error('550 mailbox unavailable')), close: () => undefined },
        logger: pino({ level: 'silent' }),
        now: app.clock.now,
        mailFrom: app.config.mailFrom,
        metrics,
      });
      retried = report.retried;
    });
    expect(retried).toBeGreaterThanOrEqual(1);
    expect(retries).toBe(retried);
  });

  it.skipIf(!promtool)(`passes promtool check metrics${promtool ? '' : ` (skipped: ${PROMTOOL_MISSING})`}`, async () => {
    // Every metric present: a counted request, error, refusal, cache lookup and delivery failure.
    metrics.graphqlError('NOT_FOUND');
    metrics.rateLimited('GET /health');
    metrics.cacheLookup('hit', 'answer');
    metrics.deliveryFailed('retry');
    expect((await get('/api/v1/cars/1/performance.json', key)).status).toBe(200);
    const response = await yoga.fetch('http://gateway.test/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    const checked = runPromtool(['check', 'metrics'], await response.text());
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
  });

  it('shows the process (memory, event-loop lag) and, on PostgreSQL, the connection pool', async () => {
    const samples = await scrape();
    const names = new Set(samples.map((sample) => sample.name));
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(names.has(name), name).toBe(true);
    }
    expect(sampleValue(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    if (testEngine === 'postgresql') {
      expect(
        samples
          .filter((sample) => sample.name === 'gateway_db_pool_connections')
          .map((sample) => sample.labels.state)
          .sort(),
      ).toEqual(['idle', 'in_use']);
      expect(names.has('gateway_db_pool_waiting_requests')).toBe(true);
      expect(
        sampleValue(samples, 'gateway_db_pool_connections', { state: 'idle' }) +
          sampleValue(samples, 'gateway_db_pool_connections', { state: 'in_use' }),
      ).toBeGreaterThan(0);
    } else {
      // SQLite has no pool: nothing is reported rather than something untrue.
      expect(names.has('gateway_db_pool_connections')).toBe(false);
    }
  });
});
