// Clean-up that must run when a test file ends. Vitest silently drops an `afterAll` registered from
// inside a `beforeAll` (where test apps are made), so helpers register here instead and the setup
// file (test/support/setup.ts) runs everything once the file's tests are done.
type Cleanup = () => Promise<void> | void;

const cleanups: Cleanup[] = [];

export function onFileEnd(cleanup: Cleanup): void {
  cleanups.push(cleanup);
}

/** Runs the registered clean-ups, newest first (an app's connections close before its database is dropped). */
export async function runFileCleanups(): Promise<void> {
  const failures: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw new AggregateError(failures, 'test clean-up failed');
}
