// At most EXECUTION_SLOTS operations execute at once: each holds its answer as it grows, so this bounds that
// memory. The others wait, in a bounded queue for a bounded time; past either they get the 503 `unavailable`.
import type { Plugin } from 'graphql-yoga';
// p-queue, not p-limit: a waiter must leave the queue once its wait is over or its client is gone.
import PQueue from 'p-queue';
import type { Config } from '../config/index.ts';
import { sentRequest, type Context } from '../context.ts';
import { instanceBusy } from '../errors.ts';

export interface ExecutionSlots {
  readonly plugin: Plugin<Context>;
  inUse(): number;
  waiting(): number;
}

type ExecuteFn = Parameters<NonNullable<Plugin['onExecute']>>[0]['executeFn'];

/** The slot is taken when execution starts and given back when its promise settles, whatever it settles with. */
export function executionSlots({ slots, queueMax, waitMs }: Config['executionSlots']): ExecutionSlots {
  if (slots === 0) return { plugin: {}, inUse: () => 0, waiting: () => 0 };
  const queue = new PQueue({ concurrency: slots });
  const refused = () => ({ errors: [instanceBusy()] });

  const run = (execute: ExecuteFn, args: Parameters<ExecuteFn>[0], request: Request | undefined) => {
    if (queue.pending < slots && queue.size === 0) return queue.add(() => execute(args));
    if (queue.size >= queueMax) return refused();
    // Aborted only while the operation waits: p-queue frees the slot of a running task whose signal aborts.
    const waited = new AbortController();
    const timer = setTimeout(() => waited.abort('wait_over'), waitMs);
    const gone = () => waited.abort('gone');
    request?.signal.addEventListener('abort', gone, { once: true });
    const stopWaiting = () => {
      clearTimeout(timer);
      request?.signal.removeEventListener('abort', gone);
    };
    return queue
      .add(
        () => {
          stopWaiting();
          return execute(args);
        },
        { signal: waited.signal },
      )
      .catch((error: unknown) => {
        stopWaiting();
        if (!waited.signal.aborted) throw error;
        return refused();
      });
  };

  return {
    plugin: {
      onExecute({ args, executeFn, setExecuteFn }) {
        const request = args.contextValue.request ? sentRequest(args.contextValue.request) : undefined;
        setExecuteFn(((executionArgs) => run(executeFn, executionArgs, request)) as ExecuteFn);
      },
    },
    inUse: () => queue.pending,
    waiting: () => queue.size,
  };
}
