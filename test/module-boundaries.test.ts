// What the production code may hold and load:
// - no module of the domain, the notifications or the storage keeps mutable state at its top level:
//   a dependency reaches them through the context (src/context.ts AppDeps), never as a module default a
//   test would have to swap;
// - the start-up bundle (what every start loads, built as `npm run build` builds it) holds neither the
//   demo seed (a chunk loaded only when SEED_DEMO_DATA seeds an empty database) nor the OpenTelemetry
//   SDK (chunks loaded only when traces are on); @opentelemetry/api alone is in it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { externalPackages } from '../scripts/build.mjs';

const root = path.resolve(import.meta.dirname, '..');

function sourcesUnder(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const relative = path.join(dir, name);
    if (statSync(path.join(root, relative)).isDirectory()) return sourcesUnder(relative);
    return name.endsWith('.ts') ? [relative] : [];
  });
}

describe('module boundaries', () => {
  it('the domain, notifications and storage modules keep no mutable state at their top level', () => {
    const files = ['src/domain', 'src/notifications', 'src/storage'].flatMap(sourcesUnder);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (/^(export\s+)?(let|var)\s/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('the start-up bundle holds neither the demo seed nor the OpenTelemetry SDK', async () => {
    const esbuild = await import('esbuild');
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: { index: 'src/index.ts' },
      outdir: 'dist-boundaries-test',
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: [...(externalPackages as readonly string[])],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = result.metafile!.outputs;
    const entry = Object.values(outputs).find((output) => output.entryPoint === 'src/index.ts');
    expect(entry).toBeDefined();
    const startup = Object.keys(entry!.inputs);
    expect(startup.some((input) => input.includes('@opentelemetry/api'))).toBe(true);
    expect(startup.filter((input) => input.startsWith('prisma/seed') || /@opentelemetry[\\/](sdk-trace|exporter-trace|otlp|resources|core)[\\/]/.test(input))).toEqual([]);
    // Both are in the bundle, for the starts that need them.
    const everything = Object.values(outputs).flatMap((output) => Object.keys(output.inputs));
    expect(everything.some((input) => input.startsWith('prisma/seed'))).toBe(true);
    expect(everything.some((input) => input.includes('@opentelemetry/sdk-trace'))).toBe(true);
  }, 60_000);
});
