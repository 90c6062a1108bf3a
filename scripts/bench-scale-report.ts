// The report of `npm run bench:scale` (scripts/bench-scale.ts): pure functions of the rounds' samples,
// so that what a line says (a median of the rounds with their min–max, a platform/demo ratio taken
// round by round) is proven by test/bench-scale.test.ts without running a benchmark.
import type { Engine } from '../src/config/index.ts';
import { fixed, loadText, median, perRound, table } from './bench-figures.ts';
import type { Sample } from './bench-support.ts';

export interface ScaleSample extends Sample {
  /** SQL statements the service sent per request (its /metrics counter), NaN without one. */
  statementsPerRequest: number;
  /** CPU of the PostgreSQL backends serving the bench database per request; NaN on SQLite. */
  databaseCpuMsPerRequest: number;
  /** Answers whose status was not the one expected of the path. */
  unexpected: number;
}

/** One path on both data sets: the rounds' samples of each, and one answer's size. */
export interface PathFigures {
  name: string;
  door: string;
  demo: ScaleSample[];
  platform: ScaleSample[];
  demoBytes: number;
  platformBytes: number;
}

/** Figures of rounds as a reader can trust them: the median, with the min–max when there are several. */
export function ofRounds(values: number[], digits: number): string {
  const measured = values.filter((value) => Number.isFinite(value));
  if (measured.length === 0) return '-';
  const middle = fixed(median(measured), digits);
  if (measured.length === 1) return middle;
  return `${middle} (${fixed(Math.min(...measured), digits)}–${fixed(Math.max(...measured), digits)})`;
}

/** Platform over demo, round by round (the rounds are interleaved, so a noisy moment hurts both), then as ofRounds. */
export function growth(platform: ScaleSample[], demo: ScaleSample[], figure: (sample: ScaleSample) => number): string {
  const ratios = perRound(platform, demo, figure);
  return ratios.length === 0 ? '-' : `${ofRounds(ratios, 2)}×`;
}

/** Bytes as a reader compares them: B, kB or MB. */
export function size(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  if (bytes < 1_000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1_000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(2)} MB`;
}

const cpu = (sample: ScaleSample): number => sample.cpuMsPerRequest;
const p99 = (sample: ScaleSample): number => sample.p99;

/** The table's rows: per path, the demo's then the platform's figures, then the growth. */
export function pathRows(figures: readonly PathFigures[], withDatabaseCpu: boolean): string[][] {
  const header = [
    'path',
    'door',
    'data',
    'CPU ms/req',
    ...(withDatabaseCpu ? ['DB CPU ms/req'] : []),
    'p50 ms',
    'p99 ms',
    'statements/req',
    'answer',
    'non-2xx',
    'unexpected',
    'CPU ×',
    'p99 ×',
  ];
  const rows: string[][] = [header];
  for (const path of figures) {
    for (const [label, runs, bytes] of [
      ['demo', path.demo, path.demoBytes],
      ['platform', path.platform, path.platformBytes],
    ] as const) {
      rows.push([
        label === 'demo' ? path.name : '',
        label === 'demo' ? path.door : '',
        label,
        ofRounds(runs.map(cpu), 2),
        ...(withDatabaseCpu
          ? [
              ofRounds(
                runs.map((sample) => sample.databaseCpuMsPerRequest),
                2,
              ),
            ]
          : []),
        ofRounds(
          runs.map((sample) => sample.p50),
          0,
        ),
        ofRounds(runs.map(p99), 0),
        ofRounds(
          runs.map((sample) => sample.statementsPerRequest),
          1,
        ),
        size(bytes),
        String(runs.reduce((sum, sample) => sum + sample.failures, 0)),
        String(runs.reduce((sum, sample) => sum + sample.unexpected, 0)),
        label === 'platform' ? growth(path.platform, path.demo, cpu) : '',
        label === 'platform' ? growth(path.platform, path.demo, p99) : '',
      ]);
    }
  }
  return rows;
}

export interface ScaleReport {
  engine: Engine;
  rounds: number;
  durationSeconds: number;
  connections: number;
  writeConnections: number;
  withDatabaseCpu: boolean;
  /** One line per data set: what its targets are of. */
  sizes: string[];
  figures: PathFigures[];
  /** The concurrency check: each heavy read at the check's clients on the platform. */
  concurrency: { name: string; door: string; sample: ScaleSample }[];
  memory: { clients: number; paths: string[]; peakRssMb: number; ceilingMb: number };
  loadAtStart: number[];
  loadAtEnd: number[];
}

export function formatScaleReport(report: ScaleReport): string[] {
  const lines = [
    `## ${report.engine}: demo and platform side by side, ${report.rounds} round(s) of ${report.durationSeconds} s per path and data set, interleaved; ` +
      `reads at ${report.connections} connections, writes at ${report.writeConnections}; medians of the rounds (min–max)`,
    `load average (1, 5, 15 min): ${loadText(report.loadAtStart)} at the start of this engine's run, ${loadText(report.loadAtEnd)} at its end`,
    ...report.sizes,
    '',
    table(pathRows(report.figures, report.withDatabaseCpu)),
    '',
    `concurrency check (platform, ${report.memory.clients} clients):`,
    table(
      [
        ['path', 'door', '503s', 'other non-2xx', 'p99 ms', 'CPU ms/req'],
        ...report.concurrency.map(({ name, door, sample }) => {
          const unavailable = sample.statuses['503'] ?? 0;
          return [
            name,
            door,
            String(unavailable),
            String(sample.failures - unavailable),
            fixed(sample.p99, 0),
            fixed(sample.cpuMsPerRequest, 2),
          ];
        }),
      ],
      2,
    ),
    '',
    `memory check (platform): peak RSS ${fixed(report.memory.peakRssMb, 0)} MB with ${report.memory.clients} clients on ${report.memory.paths.join(', ')}; ` +
      `ceiling ${report.memory.ceilingMb} MB: ${report.memory.peakRssMb <= report.memory.ceilingMb ? 'within' : 'ABOVE'}`,
    '',
  ];
  return lines;
}
