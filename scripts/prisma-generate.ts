// Generates the Prisma client for both engines (and the Pothos types) from the one data model.
// Runs after `npm install`; nothing here reaches the network.
import { execFileSync } from 'node:child_process';
import { projectRoot, writeProviderSchemas } from './prisma-schemas.ts';

const schemas = writeProviderSchemas();
for (const schemaPath of Object.values(schemas)) {
  execFileSync('npx', ['--no-install', 'prisma', 'generate', '--schema', schemaPath], {
    cwd: projectRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
console.log('prisma: generated clients for sqlite and postgresql');
