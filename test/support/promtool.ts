// promtool, Prometheus' own checker (Debian's `prometheus` package; .ci/run installs it). Where it is
// not installed the checks that need it are skipped, saying so; CI always has it.
import { execFileSync, spawnSync } from 'node:child_process';

function findPromtool(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export const promtool = findPromtool();

/** Why a promtool check is skipped here, for the test's name. */
export const PROMTOOL_MISSING = 'promtool is not installed here (apt-get install prometheus; .ci/run installs it)';

export interface PromtoolResult {
  status: number | null;
  output: string;
}

/** Runs promtool with `args`, `input` on its standard input. */
export function runPromtool(args: string[], input?: string): PromtoolResult {
  if (!promtool) throw new Error(PROMTOOL_MISSING);
  const run = spawnSync(promtool, args, { input, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
}
