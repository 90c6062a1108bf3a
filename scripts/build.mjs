// Builds the service into dist/ so that `npm start` runs plain JavaScript with no TypeScript work at
// start-up. Plain JavaScript itself (no tsx): `prestart` runs it on every `npm start`, and starting
// tsx alone costs about a second of CPU.
//
//   node scripts/build.mjs              always builds
//   node scripts/build.mjs --if-stale   (`prestart`) builds only when a source file, the generated
//                                       clients, a tsconfig or this script changed since the last build
//
// The build bundles src/index.ts and the packages it imports into dist/src/index.js with esbuild:
// loading one file instead of about 1,500 modules is most of what makes the start fast. Left outside
// the bundle, and loaded from node_modules as usual:
//  - better-sqlite3 and pg-native: native code;
//  - Prisma's runtime (@prisma/client/runtime/*), imported as its ES module build; its query
//    compiler is WebAssembly, which the build writes as a .wasm file beside the generated client's
//    chunk and the client compiles when the first query runs (prismaQueryCompilerAsFile below);
//  - the GraphiQL page (@graphql-yoga/render-graphiql, 9 MB), loaded when a browser first asks for it.
// Code imported with import() (the demo data seed, nodemailer) goes into chunks of its own, loaded
// only when used. Types are not checked here (`npm run typecheck` and `npm test` do that).
// It writes into a temporary folder and swaps it in, so a start that runs at the same moment never
// sees a half-written dist/.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = path.join(projectRoot, 'dist');
/** What the build read, as a hash of each input's path, size and modification time. */
const stampFile = path.join(distDir, '.build-stamp');
// The installed packages are bundled too, so installing others (npm's record of them changes) rebuilds.
const inputs = ['src', 'prisma/seed.ts', 'tsconfig.json', 'node_modules/.package-lock.json', 'scripts/build.mjs'];

/** Imported from node_modules at run time rather than bundled (see above). */
// The PostgreSQL driver is required at run time only on PostgreSQL (src/db/client.ts), so it stays out of the bundle.
export const externalPackages = [
  'better-sqlite3',
  'pg',
  'pg-native',
  '@prisma/adapter-pg',
  '@prisma/client/runtime/*',
  '@graphql-yoga/render-graphiql',
];

/** @param {string} relative @returns {string[]} */
function files(relative) {
  const full = path.join(projectRoot, relative);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => files(path.join(relative, entry.name)));
}

/** @returns {string} */
function fingerprint() {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(files).sort()) {
    const stat = statSync(path.join(projectRoot, file));
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** @returns {boolean} */
export function isStale() {
  return !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== fingerprint();
}

/**
 * The bundle's esbuild options, written to `outdir` (tests build the same bundle elsewhere:
 * test/module-boundaries.test.ts reads what a start loads, test/tracing.test.ts runs it).
 * @param {string} outdir
 * @returns {import('esbuild').BuildOptions}
 */
export function bundleOptions(outdir) {
  return {
    absWorkingDir: projectRoot,
    entryPoints: { index: 'src/index.ts', migrate: 'scripts/migrate.ts' },
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: externalPackages,
    // Bundled CommonJS packages call require(); an ES module has none, so it is made from the bundle's URL.
    banner: {
      js: "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);",
    },
    // The ES module build of a package that ships both (graphql, most of the Guild's packages): with
    // the CommonJS one, every use of an import goes through esbuild's interop getter, measured at 4%
    // of the CPU of an uncached read. One build per package either way, so no package is loaded twice.
    mainFields: ['module', 'main'],
    plugins: [graphqlPlainInstanceOf, prismaRuntimeAsModule, prismaQueryCompilerAsFile],
    // prismaQueryCompilerAsFile reads it to place the query compilers' .wasm files.
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  };
}

/**
 * graphql-js checks every failed instanceof a second time, by name, unless NODE_ENV is production, to
 * report a second copy of itself loaded beside the first. The bundle holds exactly one copy, and
 * the check was 1% of the CPU of an uncached read. Setting NODE_ENV is not the way: it is this
 * service's own production switch. So the bundled instanceOf module is built with the plain check.
 * @type {import('esbuild').Plugin}
 */
const graphqlPlainInstanceOf = {
  name: 'graphql-plain-instanceof',
  setup(buildContext) {
    buildContext.onLoad({ filter: /[\\/]graphql[\\/]jsutils[\\/]instanceOf\.m?js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      const switched = source.replace(/process\.env\.NODE_ENV\s*===\s*['"]production['"]/, 'true');
      if (switched === source)
        throw new Error(`${args.path} no longer has the NODE_ENV check this build replaces: review graphqlPlainInstanceOf`);
      return { contents: switched, loader: 'js' };
    });
  },
};

/**
 * Prisma's runtime, imported as its ES module build. The package's `node` condition sends an
 * `import` to the CommonJS build, which Node can only import after scanning its 200 KB for the names
 * it exports (cjs-module-lexer): about 90 ms of CPU at every start, measured, for the same code.
 * The runtime stays outside the bundle (its `__dirname` and `require` are its own file's).
 * @type {import('esbuild').Plugin}
 */
const prismaRuntimeAsModule = {
  name: 'prisma-runtime-as-module',
  setup(buildContext) {
    buildContext.onResolve({ filter: /^@prisma\/client\/runtime\/client$/ }, () => ({
      path: '@prisma/client/runtime/client.mjs',
      external: true,
    }));
  },
};

/** The generated clients' engines, whose query compiler is read from a .wasm file next to the code that loads it. */
const queryCompilerEngines = ['sqlite', 'postgresql'];
/** @param {string} engine */
const queryCompilerFile = (engine) => `prisma-query-compiler.${engine}.wasm`;
/** Where a generated client imports its query compiler's base64 module (the build, "fast" or "small", is the schema's compilerBuild). */
const queryCompilerImport =
  /const \{ wasm \} = await import\("(@prisma\/client\/runtime\/query_compiler_(?:fast|small)_bg\.(?:sqlite|postgresql)\.wasm-base64\.mjs)"\)\s*return await decodeBase64AsWasm\(wasm\)/;
/** @param {string} engine */
const generatedClass = (engine) => `src/generated/prisma/${engine}/internal/class.ts`;

/**
 * Prisma's generated client loads its query compiler (WebAssembly) from a JavaScript module holding
 * it as a base64 string, then decodes it: parsing that module and decoding it cost about 60 ms of CPU
 * at every start, measured. Every build with these options (tests' too) writes the decoded bytes
 * beside the bundle's code when it ends (writeQueryCompilers), and the client reads them from there.
 * @type {import('esbuild').Plugin}
 */
const prismaQueryCompilerAsFile = {
  name: 'prisma-query-compiler-as-file',
  setup(buildContext) {
    buildContext.onLoad(
      { filter: /[\\/]src[\\/]generated[\\/]prisma[\\/](sqlite|postgresql)[\\/]internal[\\/]class\.ts$/ },
      async (args) => {
        const { readFile } = await import('node:fs/promises');
        const engine = /[\\/](sqlite|postgresql)[\\/]internal[\\/]/.exec(args.path)?.[1] ?? '';
        const source = await readFile(args.path, 'utf8');
        const switched = source.replace(
          queryCompilerImport,
          `const { readFile } = await import('node:fs/promises');\n    return new WebAssembly.Module(await readFile(new URL('./${queryCompilerFile(engine)}', import.meta.url)))`,
        );
        if (switched === source)
          throw new Error(`${args.path} no longer loads its query compiler the way this build replaces: review prismaQueryCompilerAsFile`);
        return { contents: switched, loader: 'ts' };
      },
    );
    buildContext.onEnd(async (result) => {
      if (result.errors.length === 0 && result.metafile && buildContext.initialOptions.write !== false)
        await writeQueryCompilers(result.metafile);
    });
  },
};

/**
 * Writes each engine's query compiler, decoded, beside the output file that holds its generated
 * client (the code reads it relative to its own URL).
 * @param {import('esbuild').Metafile} metafile
 */
async function writeQueryCompilers(metafile) {
  for (const engine of queryCompilerEngines) {
    const classFile = generatedClass(engine);
    const output = Object.keys(metafile.outputs).find((file) => Object.hasOwn(metafile.outputs[file]?.inputs ?? {}, classFile));
    if (!output) throw new Error(`no output of the bundle holds ${classFile}`);
    const imported = queryCompilerImport.exec(readFileSync(path.join(projectRoot, classFile), 'utf8'))?.[1];
    if (!imported) throw new Error(`${classFile} names no query compiler this build knows: review prismaQueryCompilerAsFile`);
    const { wasm } = await import(imported);
    writeFileSync(path.join(projectRoot, path.dirname(output), queryCompilerFile(engine)), Buffer.from(wasm, 'base64'));
  }
}

/** @returns {Promise<void>} */
export async function build() {
  const started = performance.now();
  const before = fingerprint();
  const temporary = path.join(projectRoot, `dist-${process.pid}.tmp`);
  // Loaded here, not at the top: a start with a current dist/ never pays for it.
  const esbuild = await import('esbuild');
  try {
    // A linked source map, for debuggers and `node --enable-source-maps`; nothing reads it on a normal start.
    await esbuild.build({ ...bundleOptions(path.join(temporary, 'src')), sourcemap: 'linked' });
    writeFileSync(path.join(temporary, '.build-stamp'), before);
    const previous = path.join(projectRoot, `dist-${process.pid}.old.tmp`);
    if (existsSync(distDir)) renameSync(distDir, previous);
    renameSync(temporary, distDir);
    rmSync(previous, { recursive: true, force: true });
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  console.log(`build: bundled into dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--if-stale') || isStale()) await build();
}
