// Writes src/rest/openapi-examples.json, the OpenAPI document's examples; with --check, fails when
// the committed file is stale. The examples are each operation's request and answer on the demo
// data, which takes the service over a migrated, seeded database: test/openapi-examples.test.ts
// makes those calls (and checks each answer against the document), so this runs it, asking it to
// write the file (UPDATE_OPENAPI_EXAMPLES=1) or, with --check, to compare it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../src/config/index.ts';

const check = process.argv.includes('--check');
const vitest = path.join(projectRoot, 'node_modules', 'vitest', 'vitest.mjs');
const env = { ...process.env };
if (check) delete env.UPDATE_OPENAPI_EXAMPLES;
else env.UPDATE_OPENAPI_EXAMPLES = '1';
const run = spawnSync(process.execPath, [vitest, 'run', 'test/openapi-examples.test.ts'], { cwd: projectRoot, stdio: 'inherit', env });
if (run.status !== 0) {
  console.error(
    check
      ? 'src/rest/openapi-examples.json is stale or wrong: run `npm run openapi:examples` and commit the result.'
      : 'the examples could not be written',
  );
  process.exit(1);
}
console.log(check ? 'src/rest/openapi-examples.json is current' : 'wrote src/rest/openapi-examples.json');
