// npm run docs: writes the parts of docs/ that the code declares (tables between `<!-- generated: name -->`
// and `<!-- end: name -->`, and .env.example); `npm run docs:check` (and test/docs-generated.test.ts)
// fails when one is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../src/config/index.ts';
import { inputLimitsTable, permissionsTable, recordVariantsTable } from './docs/catalogues.ts';
import { restCostsTable, restPathsTable } from './docs/rest.ts';
import { envExample, settingsTable } from './docs/settings.ts';
import { statementsTable } from './docs/statement-counts.ts';
import { rawStatementsTable, unscopedHoldersTable } from './docs/tenant-boundary.ts';

/** A generated file: its path and how it reads, given what it reads now. */
interface GeneratedFile {
  file: string;
  render: (current: string) => string;
}

/** `document` with the section `name` replaced by `content`; throws when its markers are missing. */
function withSection(document: string, file: string, name: string, content: string): string {
  const start = `<!-- generated: ${name} (npm run docs) -->`;
  const end = `<!-- end: ${name} -->`;
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${file} has no generated section ${name} (${start} … ${end})`);
  return `${document.slice(0, from + start.length)}\n${content}\n${document.slice(to)}`;
}

function sections(file: string, rendered: Record<string, () => string>): GeneratedFile {
  return {
    file,
    render: (current) =>
      Object.entries(rendered).reduce((document, [name, render]) => withSection(document, file, name, render()), current),
  };
}

export const GENERATED_FILES: readonly GeneratedFile[] = [
  sections('ARCHITECTURE.md', { 'unscoped-client': unscopedHoldersTable, 'raw-statements': rawStatementsTable }),
  sections('docs/caching.md', { statements: statementsTable }),
  sections('docs/configuration.md', { settings: settingsTable }),
  sections('docs/errors.md', { 'input-limits': inputLimitsTable }),
  sections('docs/graphql.md', { 'record-variants': recordVariantsTable }),
  sections('docs/permissions.md', { permissions: permissionsTable }),
  sections('docs/rest.md', { 'rest-paths': restPathsTable }),
  sections('docs/rate-limits.md', { 'rest-costs': restCostsTable }),
  { file: '.env.example', render: () => envExample() },
];

/** The generated files that differ from what the code renders, with what they should read. */
export function staleFiles(): { file: string; rendered: string }[] {
  return GENERATED_FILES.flatMap(({ file, render }) => {
    let current = '';
    try {
      current = readFileSync(path.join(projectRoot, file), 'utf8');
    } catch {
      // a missing file is stale too
    }
    const rendered = render(current);
    return rendered === current ? [] : [{ file, rendered }];
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const check = process.argv.includes('--check');
  const stale = staleFiles();
  for (const { file, rendered } of stale) {
    if (check) console.error(`${file} is stale: run \`npm run docs\` and commit the result.`);
    else {
      writeFileSync(path.join(projectRoot, file), rendered);
      console.log(`wrote ${file}`);
    }
  }
  if (check && stale.length > 0) process.exit(1);
  if (check) console.log(`${GENERATED_FILES.map(({ file }) => file).join(', ')} are current`);
}
