// Periodic work an instance does besides answering requests (purging expired records): one round
// now, then one every interval until stopped. A round's failure is its own to log; it never stops
// the task, and stop() waits for a round in progress so the database is not closed under it.

export interface BackgroundTask {
  /** Resolves once a round in progress has finished. */
  stop(): Promise<void>;
}

/** Runs `round` now and then every `intervalMs` after the previous round ended, until stopped. */
export function startPeriodicTask(round: () => Promise<void>, intervalMs: number): BackgroundTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const run = async (): Promise<void> => {
    try {
      await round();
    } finally {
      if (!stopped) {
        timer = setTimeout(() => (current = run()), intervalMs);
        timer.unref();
      }
    }
  };
  current = run();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current.catch(() => undefined);
    },
  };
}
