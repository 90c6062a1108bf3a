import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);
// `npm run test:browser` runs the headless-browser tests (they need Debian's chromium) instead.
const browserSuite = process.env.VITEST_SUITE === 'browser';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS entry for the libraries (graphql has no "exports" map), while
    // Vite would pick its .mjs entry for our code: two GraphQLError classes. Pin ours to Node's choice.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: browserSuite ? ['test/browser/**/*.test.ts'] : ['test/**/*.test.ts'],
    exclude: browserSuite ? ['node_modules/**'] : ['test/browser/**', 'node_modules/**'],
    // Each test file gets its own freshly migrated database (test/support/app.ts), so files run in parallel.
    pool: 'forks',
    // Much of the suite waits on child processes, PostgreSQL and Redis rather than computing, so even a
    // 2-core machine runs two files at once (vitest's default there is one): the PostgreSQL half took
    // 388 s instead of 506 s side by side on this project's 2-core CI machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The files of one worker share its modules: each file would otherwise import the app again (the
    // schema, Prisma's runtime, Yoga: 197 s of the SQLite half's summed time, 18 s shared). Every
    // file builds its own app, database and servers, and no test mocks a module or leaves a setting
    // changed, so nothing one file does is seen by the next.
    isolate: false,
    setupFiles: ['test/support/setup.ts'],
    // A developer's .env file must not change what the tests see: processes started with a copy of
    // this environment (and the ones started from test/support/processes.ts) read none.
    env: { ENV_FILE: 'off' },
    globalSetup: ['test/support/global-setup.ts'],
    // A timeout only catches a test that hangs: on a 2-core machine shared with another CPU-bound job
    // a test that starts child processes (the CLIs, graphql-codegen, the service) takes several times
    // its quiet duration, and a budget near that duration fails a correct test.
    testTimeout: browserSuite ? 180_000 : 120_000,
    hookTimeout: 180_000,
  },
});
