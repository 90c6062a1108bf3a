// Dashboards and alerts as code: deploy/prometheus/alerts.yml passes `promtool check rules`, and
// every metric the rules and deploy/grafana/dealership-gateway.json use is one the service's /metrics
// output has, so a renamed or removed metric fails here rather than silencing an alert.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../src/config/index.ts';
import { createDb } from '../src/db/client.ts';
import { createMetrics } from '../src/telemetry/metrics.ts';
import { postgresAdminUrl } from './support/database.ts';
import { PROMTOOL_MISSING, promtool, runPromtool } from './support/promtool.ts';

const RULES_FILE = path.join(projectRoot, 'deploy/prometheus/alerts.yml');
const DASHBOARD_FILE = path.join(projectRoot, 'deploy/grafana/dealership-gateway.json');

/** The metric names a PromQL expression reads: the service's own and the runtime's (what /metrics exposes). */
function metricsIn(expression: string): string[] {
  return [...expression.matchAll(/\b((?:gateway|process|nodejs)_[a-z0-9_]+)\b/g)].map((match) => match[1]!);
}

const rules = (parseYaml(readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };

// The pool's metrics exist only on PostgreSQL: the registry is made over a PostgreSQL client (its pool
// is read without a connection; the outbox query fails there and reads NaN, which is all this needs).
const db = createDb(postgresAdminUrl);
afterAll(() => db.$disconnect());

/** The names /metrics shows, with each histogram's _bucket, _sum and _count. */
async function exposedNames(): Promise<Set<string>> {
  const metrics = createMetrics({ db, now: () => new Date(), logger: pino({ level: 'silent' }) });
  // Counters with labels appear on their first count.
  metrics.requestFinished('GET /health', 200, 0.001);
  metrics.graphqlError('NOT_FOUND');
  metrics.rateLimited('GET /health');
  metrics.cacheLookup('hit', 'answer');
  metrics.deliveryFailed('retry');
  const text = await metrics.scrape();
  return new Set(
    text
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => /^[a-zA-Z_:][\w:]*/.exec(line)![0]),
  );
}

describe('deploy/prometheus/alerts.yml', () => {
  it.skipIf(!promtool)(`passes promtool check rules${promtool ? '' : ` (skipped: ${PROMTOOL_MISSING})`}`, () => {
    const checked = runPromtool(['check', 'rules', RULES_FILE]);
    expect(checked.output).toContain('SUCCESS');
    expect(checked.status).toBe(0);
  });

  it('alerts on the error rate, p99 by route, 429s, the outbox backlog and age, and the database pool', () => {
    const uses = (metric: string) => rules.filter((rule) => metricsIn(rule.expr).includes(metric)).map((rule) => rule.alert);
    expect(uses('gateway_http_requests_total')).toEqual(expect.arrayContaining(['GatewayHighErrorRate', 'GatewayRateLimiting']));
    expect(rules.find((rule) => rule.alert === 'GatewaySlowRoute')?.expr).toMatch(/histogram_quantile\(0\.99, sum by \(door, le\)/);
    expect(uses('gateway_rate_limit_refusals_total')).toEqual(['GatewayRateLimiting']);
    expect(uses('gateway_outbox_pending_messages').length).toBeGreaterThan(0);
    expect(uses('gateway_outbox_oldest_pending_age_seconds').length).toBeGreaterThan(0);
    expect(uses('gateway_db_pool_waiting_requests').length).toBeGreaterThan(0);
  });
});

describe('the rules and the dashboard', () => {
  it('use only metrics the service exposes', async () => {
    const exposed = await exposedNames();
    const used = [
      ...rules.flatMap((rule) => metricsIn(rule.expr).map((metric) => [`alert ${rule.alert}`, metric] as const)),
      ...dashboard.panels.flatMap((panel) =>
        panel.targets.flatMap((target) => metricsIn(target.expr).map((metric) => [`panel ${panel.title}`, metric] as const)),
      ),
    ];
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter(([, metric]) => !exposed.has(metric))).toEqual([]);
    // And the check itself sees a stale name.
    expect(exposed.has('gateway_requests_total')).toBe(false);
  });
});
