// `npm test`: every check of the project, each run to its end whatever the one before it did, then
// one summary. A chain of `&&` would stop at the first failure, so a failing SQLite half would hide
// what the PostgreSQL half says; here both halves always run and report, and the command fails if
// any step does. Each step is the package.json script of its name, so a step is defined once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

interface Step {
  script: string;
  /** The vitest halves report their counts through vitest's JSON reporter, beside the usual one. */
  suite?: true;
}

const STEPS: readonly Step[] = [
  { script: 'typecheck' },
  { script: 'lint' },
  { script: 'lint:deps' },
  { script: 'schema:check' },
  { script: 'contract:check' },
  { script: 'lint:unused' },
  { script: 'test:sqlite', suite: true },
  { script: 'test:postgres', suite: true },
];

/** The fields of vitest's JSON report (Jest's format) that the summary reads. */
interface SuiteReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
}

interface Outcome {
  script: string;
  passed: boolean;
  seconds: number;
  counts?: SuiteReport;
}

function run(command: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('exit', (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

function readReport(file: string): SuiteReport | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SuiteReport;
  } catch {
    return undefined;
  }
}

async function runStep(step: Step, reports: string): Promise<Outcome> {
  const started = performance.now();
  console.log(`\n== npm run ${step.script}`);
  const report = path.join(reports, `${step.script.replace(/\W/g, '-')}.json`);
  const extra = step.suite ? ['--', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`] : [];
  const code = await run('npm', ['run', step.script, ...extra]);
  const seconds = Math.round((performance.now() - started) / 1000);
  return { script: step.script, passed: code === 0, seconds, ...(step.suite ? { counts: readReport(report) } : {}) };
}

const reports = mkdtempSync(path.join(tmpdir(), 'dgw-test-reports-'));
const outcomes: Outcome[] = [];
try {
  for (const step of STEPS) outcomes.push(await runStep(step, reports));
} finally {
  rmSync(reports, { recursive: true, force: true });
}

console.log('\n== npm test: summary');
for (const outcome of outcomes) {
  const counts = outcome.counts
    ? ` (${outcome.counts.numPassedTests} passed, ${outcome.counts.numFailedTests} failed, ${outcome.counts.numPendingTests + outcome.counts.numTodoTests} skipped)`
    : outcome.script.startsWith('test:')
      ? ' (no report: the run ended before vitest wrote one)'
      : '';
  console.log(`${outcome.passed ? 'ok    ' : 'FAILED'}  ${outcome.script.padEnd(14)} ${String(outcome.seconds).padStart(5)} s${counts}`);
}
// The closing line counts tests; a step that failed without a failed test (a type error, an error
// outside a test, a half that never reported) counts as one failure, so the line never says
// "0 failed" for a run that failed.
const sum = (pick: (counts: SuiteReport) => number): number =>
  outcomes.reduce((total, { counts }) => total + (counts ? pick(counts) : 0), 0);
const failedOutsideTests = outcomes.filter((outcome) => !outcome.passed && (outcome.counts?.numFailedTests ?? 0) === 0).length;
console.log(
  `${sum((counts) => counts.numPassedTests)} passed, ${sum((counts) => counts.numFailedTests) + failedOutsideTests} failed, ${sum((counts) => counts.numPendingTests + counts.numTodoTests)} skipped`,
);
process.exitCode = outcomes.every((outcome) => outcome.passed) ? 0 : 1;
