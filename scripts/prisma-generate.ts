// Generates the Prisma client for both engines (and the Pothos types) from the one data model.
// Runs after `npm install`; nothing here reaches the network. The Prisma 7 CLI looks for its
// native schema engine before generating, and would download it from outside the npm registry;
// generating never runs it, so it is pointed at scripts/no-schema-engine, which only fails.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot, writeProviderSchemas } from './prisma-schemas.ts';

const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? path.join(projectRoot, 'scripts', 'no-schema-engine'),
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const schemas = writeProviderSchemas();
for (const schemaPath of Object.values(schemas)) {
  execFileSync('npx', ['--no-install', 'prisma', 'generate', '--schema', schemaPath], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
console.log('prisma: generated clients for sqlite and postgresql');
