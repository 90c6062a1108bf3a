// Lints the OpenAPI document the service serves with Redocly CLI's recommended-strict ruleset
// (redocly.yaml), offline: the ruleset is built into the CLI, telemetry and the update check are off.
// `npm run openapi:lint` prints the problems and fails on any; test/openapi.test.ts runs the same.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../src/config/index.ts';
import { buildOpenApiDocument } from '../src/rest/openapi.ts';
import { getSchema } from '../src/schema/index.ts';

export interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer?: string }[];
}

export interface LintReport {
  totals: { errors: number; warnings: number };
  problems: LintProblem[];
}

/** The public origin the linted document names: a real one (the ruleset refuses localhost and example.com servers). */
export const LINTED_PUBLIC_URL = 'https://api.dealerdemo.com.au';

const cli = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

/** Redocly's report on `document`, by the project's redocly.yaml. */
export async function lintOpenApiDocument(document: unknown): Promise<LintReport> {
  const folder = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
  const file = path.join(folder, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  try {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [cli, 'lint', file, '--config', path.join(projectRoot, 'redocly.yaml'), '--format=json'],
        {
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
          maxBuffer: 64 * 1024 * 1024,
        },
        // Redocly exits 1 when it finds errors; its JSON report is on stdout either way.
        (error, stdout) => (stdout.trim().startsWith('{') ? resolve(stdout) : reject(error ?? new Error('Redocly printed no report'))),
      );
    });
    return JSON.parse(output) as LintReport;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = await lintOpenApiDocument(buildOpenApiDocument(getSchema(), { publicUrl: LINTED_PUBLIC_URL }));
  for (const problem of report.problems)
    console.error(`${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer ?? '?'}: ${problem.message}`);
  console.log(`Redocly recommended-strict: ${report.totals.errors} errors, ${report.totals.warnings} warnings`);
  if (report.totals.errors + report.totals.warnings > 0) process.exit(1);
}
