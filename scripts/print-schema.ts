// Prints the schema to schema.graphql; with --check, fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { projectRoot } from '../src/config/index.ts';
import { getSchema } from '../src/schema/index.ts';

const file = path.join(projectRoot, 'schema.graphql');
const printed = `${printSchema(getSchema())}\n`;
if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {
    // a missing file is stale too
  }
  if (committed !== printed) {
    console.error('schema.graphql is stale: run `npm run schema:print` and commit the result.');
    process.exit(1);
  }
  console.log('schema.graphql is current');
} else {
  writeFileSync(file, printed);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}
