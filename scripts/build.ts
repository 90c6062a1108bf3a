// Compiles the service to dist/ (tsconfig.build.json) so that `npm start` runs plain JavaScript with
// no TypeScript work at start-up. The generated Prisma clients in src/generated are compiled with the
// rest, so the build does not depend on which Prisma version generated them.
//
//   npm run build                     always compiles
//   tsx scripts/build.ts --if-stale   (`prestart`) compiles only when a source file, the generated
//                                     clients or a tsconfig changed since the last build
//
// Types are not checked here (`npm run typecheck` and `npm test` do that): the build only transpiles,
// which keeps it to seconds. It compiles into a temporary folder and swaps it in, so a start that
// runs at the same moment never sees a half-written dist/.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = path.join(projectRoot, 'dist');
/** What the build read, as a hash of each input's path, size and modification time. */
const stampFile = path.join(distDir, '.build-stamp');
const inputs = ['src', 'prisma/seed.ts', 'tsconfig.json', 'tsconfig.build.json'];

function files(relative: string): string[] {
  const full = path.join(projectRoot, relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => files(path.join(relative, entry.name)));
}

function fingerprint(): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(files).sort()) {
    const stat = statSync(path.join(projectRoot, file));
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

export function isStale(): boolean {
  return !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== fingerprint();
}

export function build(): void {
  const started = performance.now();
  const before = fingerprint();
  const temporary = path.join(projectRoot, `dist-${process.pid}.tmp`);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(projectRoot, 'tsconfig.build.json'), '--noCheck', '--outDir', temporary], {
      cwd: projectRoot,
      stdio: 'inherit',
    });
    writeFileSync(path.join(temporary, '.build-stamp'), before);
    const previous = path.join(projectRoot, `dist-${process.pid}.old.tmp`);
    if (existsSync(distDir)) renameSync(distDir, previous);
    renameSync(temporary, distDir);
    rmSync(previous, { recursive: true, force: true });
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  console.log(`build: compiled to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--if-stale') || isStale()) build();
}
