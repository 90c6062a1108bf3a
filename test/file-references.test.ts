// Every file a comment or a document points at exists: a renamed or deleted file cannot leave a
// reader following a path to nothing. Scans the sources, tests, scripts and the Markdown documents for
// project paths (src/…, test/…, scripts/…, prisma/…, deploy/…, .ci/…, docs/…) and checks each one.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const SCANNED_DIRS = ['src', 'test', 'scripts', 'prisma', 'deploy', '.ci', 'docs'];
const SCANNED_FILES = [
  'README.md',
  'ARCHITECTURE.md',
  'Dockerfile',
  'compose.yaml',
  'package.json',
  'vitest.config.ts',
  'prisma.config.ts',
];
const SKIPPED_DIRS = new Set(['generated', 'node_modules', 'migrations']);
/** A project path as prose writes it: a top folder, then segments, ending in a file name with an extension. */
const PROJECT_PATH = /(?<![\w@./-])(?:\.\.\/)*((?:src|test|scripts|prisma|deploy|\.ci|docs)\/[\w.*{}/-]*[\w*}])/g;

function filesUnder(dir: string): string[] {
  const absolute = path.join(root, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute).flatMap((name) => {
    const relative = path.join(dir, name);
    if (statSync(path.join(root, relative)).isDirectory()) return SKIPPED_DIRS.has(name) ? [] : filesUnder(relative);
    return /\.(ts|mjs|js|md|prisma|conf|yaml|sh)$|^run$/.test(name) ? [relative] : [];
  });
}

/** Whether a referenced path names something: a file or folder, or (with a * or {a,b}) something that matches. */
function exists(reference: string, from: string): boolean {
  const cleaned = reference.replace(/[.:,;)]+$/, '');
  if (/[*{]/.test(cleaned)) {
    const folder = cleaned.slice(0, cleaned.search(/[*{]/)).replace(/\/[^/]*$/, '');
    return existsSync(path.join(root, folder));
  }
  if (existsSync(path.join(root, cleaned))) return true;
  // A path written relative to the referring file's folder (`../rest/routes.ts` is caught above as rest/…).
  return existsSync(path.resolve(root, path.dirname(from), cleaned));
}

describe('file references', () => {
  it('every project path named in a comment or document exists', () => {
    const scanned = [...SCANNED_DIRS.flatMap(filesUnder), ...SCANNED_FILES.filter((file) => existsSync(path.join(root, file)))];
    expect(scanned.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const file of scanned) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const match of text.matchAll(PROJECT_PATH)) {
        const reference = match[1]!;
        // Only references to files (an extension) or to folders written with a trailing slash are checked.
        if (!/\.[a-z]+$|\/$/.test(reference.replace(/[.:,;)]+$/, '')) && !/[*{]/.test(reference)) continue;
        if (!exists(reference, file)) missing.push(`${file}: ${reference}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
