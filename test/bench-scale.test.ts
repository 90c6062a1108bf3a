// The report of `npm run bench:scale` (scripts/bench-scale-report.ts) says what its figures are: the
// median of the rounds with their min–max, and the platform/demo growth taken round by round (so a
// noisy round hurts both sides of its own ratio, not another round's). No benchmark runs here.
import { describe, expect, it } from 'vitest';
import { formatScaleReport, growth, ofRounds, pathRows, size, type ScaleSample } from '../scripts/bench-scale-report.ts';

function sample(cpuMsPerRequest: number, p99: number, extra: Partial<ScaleSample> = {}): ScaleSample {
  return {
    rps: 100,
    total: 200,
    p50: p99 / 2,
    p99,
    cpuMsPerRequest,
    failures: 0,
    statuses: { '200': 200 },
    statementsPerRequest: 3,
    databaseCpuMsPerRequest: Number.NaN,
    unexpected: 0,
    ...extra,
  };
}

describe('bench:scale report', () => {
  it('gives the median of the rounds with their min–max, and leaves out rounds without a figure', () => {
    expect(ofRounds([3, 1, 2], 1)).toBe('2.0 (1.0–3.0)');
    expect(ofRounds([4, 1, 2, 3], 2)).toBe('2.50 (1.00–4.00)');
    expect(ofRounds([5, Number.NaN], 0)).toBe('5');
    expect(ofRounds([Number.NaN], 0)).toBe('-');
  });

  it('takes the growth round by round: platform over the same round of the demo', () => {
    const demo = [sample(1, 10), sample(2, 10), sample(4, 10)];
    // Each round doubles its own round's CPU, though the platform's rounds vary as much as the demo's.
    const platform = [sample(2, 15), sample(4, 30), sample(8, 10)];
    expect(growth(platform, demo, (s) => s.cpuMsPerRequest)).toBe('2.00 (2.00–2.00)×');
    expect(growth(platform, demo, (s) => s.p99)).toBe('1.50 (1.00–3.00)×');
    // A round with no answer (no latency) has no ratio.
    expect(growth([sample(1, Number.NaN)], [sample(1, 10)], (s) => s.p99)).toBe('-');
  });

  it('writes answer sizes in B, kB and MB', () => {
    expect(size(512)).toBe('512 B');
    expect(size(94_016)).toBe('94.0 kB');
    expect(size(1_400_000)).toBe('1.40 MB');
    expect(size(Number.NaN)).toBe('-');
  });

  it("puts each path's demo and platform rows together, the growth on the platform's, the database's CPU only when measured", () => {
    const figures = [
      {
        name: 'leads page',
        door: 'GraphQL',
        demo: [sample(1, 10)],
        platform: [sample(3, 40, { failures: 2, unexpected: 2, statuses: { '200': 198, '503': 2 } })],
        demoBytes: 2_000,
        platformBytes: 20_000,
      },
    ];
    const rows = pathRows(figures, false);
    expect(rows[0]).not.toContain('DB CPU ms/req');
    expect(rows[1]?.slice(0, 3)).toEqual(['leads page', 'GraphQL', 'demo']);
    expect(rows[2]?.slice(0, 3)).toEqual(['', '', 'platform']);
    expect(rows[2]?.slice(-5)).toEqual(['20.0 kB', '2', '2', '3.00×', '4.00×']);
    expect(rows[1]?.slice(-2)).toEqual(['', '']);
    expect(pathRows(figures, true)[0]).toContain('DB CPU ms/req');
  });

  it('counts 503s apart in the concurrency check and says whether the peak RSS is within the ceiling', () => {
    const report = (peakRssMb: number) =>
      formatScaleReport({
        engine: 'sqlite',
        rounds: 3,
        durationSeconds: 2,
        connections: 32,
        writeConnections: 4,
        withDatabaseCpu: false,
        sizes: [],
        figures: [],
        concurrency: [
          { name: 'leads page', door: 'GraphQL', sample: sample(3, 400, { failures: 5, statuses: { '200': 195, '503': 3, '500': 2 } }) },
        ],
        memory: { clients: 32, paths: ['apikey_details (REST)'], peakRssMb, ceilingMb: 250 },
        loadAtStart: [1, 2, 3],
        loadAtEnd: [1.5, 2, 3],
      }).join('\n');
    const lines = report(240).split('\n');
    const concurrency = lines.find((line) => line.startsWith('leads page'));
    expect(concurrency?.split(/\s{2,}/)).toEqual(['leads page', 'GraphQL', '3', '2', '400', '3.00']);
    expect(report(240)).toContain('load average (1, 5, 15 min): 1.0 2.0 3.0 at the start');
    expect(report(240)).toMatch(/peak RSS 240 MB .* ceiling 250 MB: within/);
    expect(report(251)).toMatch(/peak RSS 251 MB .* ceiling 250 MB: ABOVE/);
  });
});
