// The pieces of `npm run scale` (scripts/scale-checks.ts) that do not need running instances: how
// an instance's log says what its migration step did, the "one migrates" verdict, that one failing
// check does not hide the others, and the report. The whole run is `npm run scale` (README).
import { describe, expect, it } from 'vitest';
import type { Config } from '../src/config/index.ts';
import type { Db } from '../src/db/client.ts';
import type { TestSmtpServer } from './support/smtp-server.ts';
import {
  formatReport,
  migratedOnce,
  migrationOutcome,
  runScaleChecks,
  type ScaleCheck,
  type ScaleCluster,
  type ScaleInstance,
} from '../scripts/scale-checks.ts';

// What src/db/prepare.ts logs after the migration step.
const appliedLine = (applied: string[]) => ({
  level: 30,
  engine: 'postgresql',
  applied,
  ms: 40,
  msg: applied.length > 0 ? `applied ${applied.length} migration(s)` : 'database schema is current',
});
const instance = (name: string, applied: string[] | null): ScaleInstance => ({
  name,
  baseUrl: 'http://127.0.0.1:1',
  lines: [
    { level: 30, msg: 'starting' },
    ...(applied ? [appliedLine(applied)] : []),
    { level: 30, msg: 'listening on http://localhost:1' },
  ],
});
const cluster = (instances: ScaleInstance[]): ScaleCluster => ({
  instances,
  key: 'dlr_x',
  db: {} as Db,
  config: {} as Config,
  createKey: () => Promise.reject(new Error('no keys in these tests')),
  smtp: {} as TestSmtpServer,
});

describe('the scale checks', () => {
  it('reads what an instance’s migration step did from its log', () => {
    expect(migrationOutcome(instance('a', ['m1', 'm2']).lines)).toEqual({ applied: 2 });
    expect(migrationOutcome(instance('a', []).lines)).toEqual({ applied: 0 });
    expect(migrationOutcome(instance('a', null).lines)).toBeNull();
  });

  it('"one migrates" holds only when exactly one instance applied migrations and every other found the schema current', async () => {
    const held = await migratedOnce.run(
      cluster([instance('instance 1', []), instance('instance 2', ['m1', 'm2']), instance('instance 3', [])]),
    );
    expect(held).toEqual({ ok: true, detail: 'instance 2 applied 2 migration(s); instance 1, instance 3 found the schema current' });
    // Two instances each applying part of the migrations, or one that never said, is a failure.
    expect(
      (await migratedOnce.run(cluster([instance('instance 1', ['m1']), instance('instance 2', ['m2']), instance('instance 3', [])]))).ok,
    ).toBe(false);
    expect(
      (await migratedOnce.run(cluster([instance('instance 1', ['m1', 'm2']), instance('instance 2', null), instance('instance 3', [])])))
        .ok,
    ).toBe(false);
  });

  it('runs every check even when one throws, and reports each with the total', async () => {
    const checks: ScaleCheck[] = [
      { name: 'first', run: async () => ({ ok: true, detail: 'fine' }) },
      { name: 'second', run: async () => Promise.reject(new Error('connection refused')) },
      { name: 'third', run: async () => ({ ok: true, detail: 'also fine' }) },
    ];
    const results = await runScaleChecks(cluster([]), checks);
    expect(results).toEqual([
      { name: 'first', outcome: { ok: true, detail: 'fine' } },
      { name: 'second', outcome: { ok: false, detail: 'failed: connection refused' } },
      { name: 'third', outcome: { ok: true, detail: 'also fine' } },
    ]);
    expect(formatReport(results)).toBe(
      [
        'PASS  first\n      fine',
        'FAIL  second\n      failed: connection refused',
        'PASS  third\n      also fine',
        '',
        '1 of 3 checks failed',
      ].join('\n'),
    );
  });
});
