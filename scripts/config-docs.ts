// npm run config:docs: writes docs/configuration.md's settings table and .env.example from the settings'
// declaration (src/config/); with --check, fails when either is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/config/index.ts';
import { envExample, withSettingsTable } from '../src/config/docs.ts';

const files = [
  { file: path.join(projectRoot, 'docs', 'configuration.md'), render: (current: string) => withSettingsTable(current) },
  { file: path.join(projectRoot, '.env.example'), render: () => envExample() },
];

const check = process.argv.includes('--check');
let stale = false;
for (const { file, render } of files) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // a missing file is stale too
  }
  const rendered = render(current);
  if (rendered === current) continue;
  if (check) {
    console.error(`${path.relative(projectRoot, file)} is stale: run \`npm run config:docs\` and commit the result.`);
    stale = true;
  } else {
    writeFileSync(file, rendered);
    console.log(`wrote ${path.relative(projectRoot, file)}`);
  }
}
if (stale) process.exit(1);
if (check) console.log('docs/configuration.md and .env.example are current');
