// What one instance counts, for /metrics: every instance keeps its own registry and Prometheus scrapes
// each (adding them up is Prometheus' job). Events are counted as they happen; the gauges are read at
// scrape time, so they cost nothing between scrapes.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from 'pino';
import { poolOf, statementsSentBy, type Db } from '../db/client.ts';

/** Seconds; from a cached read (well under a millisecond) to a slow write. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** prom-client's default gauges whose `_total` suffix says counter: sums of the by-type gauges kept beside them. */
const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'] as const;

export type GatewayMetrics = ReturnType<typeof createMetrics>;

interface ExecutionSlotCounts {
  inUse(): number;
  waiting(): number;
}

interface MetricsSources {
  db: Db;
  /** The database's clock: the oldest message's age is measured on it. */
  now: () => Date;
  logger: Logger;
  redisAvailable?: () => boolean;
}

export function createMetrics({ db, now, logger, redisAvailable }: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  // Three of them are gauges named like counters (`_total`), which Prometheus' conventions (and
  // `promtool check metrics`) reject; each is the sum of a gauge kept by type (nodejs_active_handles…).
  for (const name of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(name);
  const gauge = (name: string, help: string, read: () => number | Promise<number>): void => {
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        this.set(await read());
      },
    });
  };
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'Requests answered, by door (REST route template or GraphQL operation) and status.',
    labelNames: ['door', 'status'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from receiving a request to its answer, by door and status.',
    labelNames: ['door', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const graphqlErrors = new Counter({
    name: 'gateway_graphql_errors_total',
    help: 'Errors in GraphQL answers on /graphql, by extensions.code.',
    labelNames: ['code'] as const,
    registers,
  });
  const refusals = new Counter({
    name: 'gateway_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429), by door.',
    labelNames: ['door'] as const,
    registers,
  });
  const cacheLookups = new Counter({
    name: 'gateway_response_cache_lookups_total',
    help: 'Response-cache lookups for reads made with a valid key, by tier (answer, then result on an answer miss) and outcome (hit or miss).',
    labelNames: ['tier', 'outcome'] as const,
    registers,
  });
  const deliveryFailures = new Counter({
    name: 'gateway_notification_delivery_failures_total',
    help: 'Failed notification sends, by outcome: retry (scheduled again) or failed (given up).',
    labelNames: ['outcome'] as const,
    registers,
  });

  // Both outbox gauges come from one query: a scrape starts collecting every metric at once, so the
  // second gauge finds the first one's query under way and shares it; the next scrape queries anew.
  let outboxReading: Promise<{ pending: number; oldestAgeSeconds: number }> | null = null;
  const readOutbox = (): Promise<{ pending: number; oldestAgeSeconds: number }> => {
    outboxReading ??= Promise.resolve(
      db.outboxMessage.aggregate({ where: { status: 'pending' }, _count: { _all: true }, _min: { created_at: true } }),
    ).then(
      (found) => {
        outboxReading = null;
        const oldest = found._min.created_at;
        return { pending: found._count._all, oldestAgeSeconds: oldest ? Math.max(0, (now().getTime() - oldest.getTime()) / 1000) : 0 };
      },
      (error: unknown) => {
        outboxReading = null;
        // A scrape that cannot read the outbox says so (NaN) rather than failing or showing a stale value.
        logger.warn({ err: { message: (error as Error).message } }, 'metrics: could not read the outbox');
        return { pending: Number.NaN, oldestAgeSeconds: Number.NaN };
      },
    );
    return outboxReading;
  };
  gauge(
    'gateway_outbox_pending_messages',
    'Notifications waiting in the outbox (all instances share it), read at scrape time.',
    async () => (await readOutbox()).pending,
  );
  gauge(
    'gateway_outbox_oldest_pending_age_seconds',
    'Age of the oldest pending notification (0 when none), read at scrape time.',
    async () => (await readOutbox()).oldestAgeSeconds,
  );
  let slots: ExecutionSlotCounts = { inUse: () => 0, waiting: () => 0 };
  gauge(
    'gateway_execution_slots_in_use',
    'Operations executing now on this instance, at most EXECUTION_SLOTS (see docs/operations.md, "Execution slots").',
    () => slots.inUse(),
  );
  gauge(
    'gateway_execution_waiting_operations',
    'Operations waiting for an execution slot on this instance, at most EXECUTION_QUEUE_MAX.',
    () => slots.waiting(),
  );
  if (redisAvailable) {
    gauge(
      'gateway_redis_available',
      '1 while Redis answers this instance, 0 while its circuit breaker is open (caches bypassed, rate limits counted per instance).',
      () => (redisAvailable() ? 1 : 0),
    );
  }
  // SQLite has no pool (one connection, its queries run one after another): these exist only on PostgreSQL.
  const pool = poolOf(db);
  if (pool) {
    new Gauge({
      name: 'gateway_db_pool_connections',
      help: "This instance's PostgreSQL connections, by state: in_use (running a query or transaction) or idle.",
      labelNames: ['state'] as const,
      registers,
      collect() {
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ state: 'idle' }, pool.idleCount);
      },
    });
    gauge(
      'gateway_db_pool_waiting_requests',
      'Queries waiting for a PostgreSQL connection (the pool is at DATABASE_POOL_MAX).',
      () => pool.waitingCount,
    );
  }
  new Counter({
    name: 'gateway_db_statements_total',
    help: 'SQL statements this instance sent to the database (queries and writes, in a transaction or not; BEGIN and COMMIT not counted), read at scrape time.',
    registers,
    collect() {
      this.reset();
      this.inc(statementsSentBy(db) ?? 0);
    },
  });

  return {
    registry,
    requestFinished(door: string, status: number, seconds: number): void {
      const labels = { door, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    graphqlError: (code: string): void => graphqlErrors.inc({ code }),
    rateLimited: (door: string): void => refusals.inc({ door }),
    /** `answer`: finished answers, before any GraphQL work; `result`: execution results, on an answer miss. */
    cacheLookup: (outcome: 'hit' | 'miss', tier: 'answer' | 'result'): void => cacheLookups.inc({ tier, outcome }),
    deliveryFailed: (outcome: 'retry' | 'failed'): void => deliveryFailures.inc({ outcome }),
    /** The app's execution slots, read at scrape time (the latest app's, when several share these metrics). */
    readExecutionSlots(read: ExecutionSlotCounts): void {
      slots = read;
    },
    scrape: (): Promise<string> => registry.metrics(),
  };
}
