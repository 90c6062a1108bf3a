// What the production code may hold and load:
// - no module of the domain, the notifications or the storage keeps mutable state at its top level:
//   a dependency reaches them through the context (src/context.ts AppDeps), never as a module default a
//   test would have to swap;
// - the start-up bundle (what every start loads, built as `npm run build` builds it) holds neither the
//   demo seed (a chunk loaded only when SEED_DEMO_DATA seeds an empty database) nor the OpenTelemetry
//   SDK (chunks loaded only when traces are on); @opentelemetry/api alone is in it;
// - per-request state lives on the one request record (src/web/request-state.ts): no other module keeps
//   a map or set keyed by the Request;
// - the service's code never imports the demo data: only the process entry (src/index.ts) loads it,
//   when SEED_DEMO_DATA is on, and hands the seeder to the service.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleOptions } from '../scripts/build.mjs';
import { typescriptSources } from './support/source-files.ts';

const root = path.resolve(import.meta.dirname, '..');

describe('module boundaries', () => {
  it('the domain, notifications and storage modules keep no mutable state at their top level', () => {
    const files = ['src/domain', 'src/notifications', 'src/storage'].flatMap(typescriptSources);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((file) =>
      readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (/^(export\s+)?(let|var)\s/.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it('no module but the request record keeps a map or set keyed by the Request', () => {
    const keyedByRequest = /\bWeak(Map|Set)<\s*Request\b|\bnew (Weak)?(Map|Set)<\s*Request\b/;
    const found = typescriptSources('src').filter((file) => keyedByRequest.test(readFileSync(path.join(root, file), 'utf8')));
    expect(found).toEqual(['src/web/request-state.ts']);
  });

  it('no module under src/ but the process entry imports the demo data', () => {
    const importers = typescriptSources('src')
      .filter((file) => /import\s*\(?[^;]*['"][./]*prisma\/seed(\.ts)?['"]/.test(readFileSync(path.join(root, file), 'utf8')))
      .sort();
    expect(importers).toEqual(['src/index.ts']);
  });

  it('the start-up bundle holds neither the demo seed nor the OpenTelemetry SDK', async () => {
    const esbuild = await import('esbuild');
    const result = await esbuild.build({
      ...bundleOptions(path.join(root, 'dist-boundaries-test')),
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const outputs = result.metafile!.outputs;
    const entryFile = Object.keys(outputs).find((file) => outputs[file]!.entryPoint === 'src/index.ts');
    expect(entryFile).toBeDefined();
    // What a start loads: the entry chunk and the chunks it imports statically, transitively (a
    // dynamic import is a chunk loaded when it runs).
    const loaded = new Set<string>();
    const pending = [entryFile!];
    while (pending.length > 0) {
      const file = pending.pop()!;
      if (loaded.has(file) || !outputs[file]) continue;
      loaded.add(file);
      for (const imported of outputs[file]!.imports)
        if (imported.kind === 'import-statement' && !imported.external) pending.push(imported.path);
    }
    const startup = [...loaded].flatMap((file) => Object.keys(outputs[file]!.inputs));
    expect(startup.some((input) => input.includes('@opentelemetry/api'))).toBe(true);
    expect(
      startup.filter(
        (input) =>
          input.startsWith('prisma/seed') ||
          /@opentelemetry[\\/](sdk-trace|exporter-trace|otlp|resources|core|context-async-hooks)[\w-]*[\\/]/.test(input),
      ),
    ).toEqual([]);
    // Both are in the bundle, for the starts that need them.
    const everything = Object.values(outputs).flatMap((output) => Object.keys(output.inputs));
    expect(everything.some((input) => input.startsWith('prisma/seed'))).toBe(true);
    expect(everything.some((input) => input.includes('@opentelemetry/sdk-trace'))).toBe(true);
  }, 180_000);
});
