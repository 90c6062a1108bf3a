// The project's TypeScript sources under a folder, for the tests that read the code itself (module
// boundaries, the tenant boundary, the settings read, the writes of several rows).
import { readdirSync } from 'node:fs';
import path from 'node:path';

const projectRoot = path.resolve(import.meta.dirname, '..', '..');

/** The `.ts` files under `folder` (relative to the project), as project-relative paths; generated code left out. */
export function typescriptSources(folder: string): string[] {
  return readdirSync(path.join(projectRoot, folder), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : typescriptSources(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}
