// The response cache for reads, on both doors (Sofa runs the same envelop execute, so one plugin
// serves REST and /graphql alike).
//
// Correct by construction, in four rules:
// 0. Only a read is ever cached: `isCacheableRead` is the one decision, made on the operation itself
//    before the plugin runs; a mutation or subscription is never looked up, stored or answered from any
//    tier (the answer cache in src/gateway/answer-cache.ts stores only what this cache filed under an entry).
// 1. An entry is filed under what the caller may see: its key id, permissions and dealership set
//    (never the secret), so two keys that see different things never share an entry, and a change
//    of permissions starts afresh. Calls without a valid key are never cached.
// 2. Every mutation, once it has run (its transaction committed), starts a new cache generation,
//    and the generation is part of every entry's name. A read that began before the write is filed
//    under the old generation, which nobody asks for again, so no read can bring back stale data.
//    Computed records (a car's performance counts leads, photos, calls…) make per-entity
//    invalidation easy to get wrong; a generation cannot miss a dependency.
// 3. Data that changes without a mutation through this service (the platform writing to the shared
//    database, the clock moving `days_old`) is bounded by a TTL per type.
// With REDIS_URL the entries and the generation live in Redis, so every instance sees every other's
// writes on its next read. While Redis is down, reads are answered uncached (never stale, never 5xx).
import { createHash } from 'node:crypto';
import { useResponseCache, type Cache } from '@envelop/response-cache';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { sentRequest, type Context } from '../context.ts';
import { memoryAnswerStore, type AnswerStore } from './answer-cache.ts';
import { cacheScope, type CacheGeneration } from './cache-scope.ts';
import { BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import type { CacheEpoch } from '../domain/shared-settings.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';

/** How long a read may be served from the cache, by default and per type (milliseconds). */
export const cacheTtls = {
  default: 30_000,
  perType: {
    // The new-vehicle catalogue and offers change rarely and only from the platform.
    ModelVariant: 300_000,
    Model: 300_000,
    WebsiteModels: 300_000,
    Manufacturer: 300_000,
    Offer: 300_000,
    WebsiteOffer: 300_000,
  } as Record<string, number>,
} as const;

// After the deployment's prefix, which the Redis client puts before every key (src/redis/client.ts).
const GENERATION_KEY = 'cache:generation';
const ENTRY_PREFIX = 'cache:entry:';
/** Entry names that must not be stored: made while the generation was unknown. */
const UNCACHEABLE = 'uncacheable:';

/** `onAdvance` lets the memory stores drop every entry at once: nothing asks for an old generation again. */
function memoryGeneration(onAdvance: () => void = () => undefined): CacheGeneration {
  let generation = 0;
  return {
    current: () => Promise.resolve(String(generation)),
    advance: () => {
      generation += 1;
      onAdvance();
      return Promise.resolve();
    },
  };
}

/** How often an instance that could not start a new generation in Redis tries again. */
const OWED_GENERATION_RETRY_MS = 250;

/**
 * The generation in Redis. A write whose new generation could not be published (Redis did not answer)
 * leaves this instance owing it: until the increment lands (retried every OWED_GENERATION_RETRY_MS),
 * `current()` is null, so this instance neither serves nor stores cached results, and never serves
 * the old value of its own write. It also starts a new database cache epoch (src/domain/shared-settings.ts),
 * which is part of every instance's generation: the others, which may still reach Redis, stop serving
 * results from before the write within the epoch's poll interval (docs/caching.md).
 * Failures are not logged here: the Redis circuit breaker logs the outage once (src/redis/client.ts).
 */
function redisGeneration(
  redis: Redis,
  logger: Logger,
  epoch?: Pick<CacheEpoch, 'current' | 'advance'>,
): CacheGeneration & { owed(): boolean } {
  let owed = 0;
  let retry: NodeJS.Timeout | null = null;
  const pay = async (): Promise<void> => {
    retry = null;
    try {
      await redis.incr(GENERATION_KEY);
      owed = 0;
      logger.info('published the cache generation a write owed: the response cache is in use again');
    } catch {
      retry = setTimeout(() => void pay(), OWED_GENERATION_RETRY_MS);
      retry.unref();
    }
  };
  return {
    owed: () => owed > 0,
    async current() {
      if (owed > 0) return null;
      try {
        const generation = (await redis.get(GENERATION_KEY)) ?? '0';
        return epoch ? `${generation}:${epoch.current()}` : generation;
      } catch {
        return null;
      }
    },
    async advance() {
      try {
        await redis.incr(GENERATION_KEY);
      } catch {
        // One increment pays every write made meanwhile: what matters is that the generation moves on.
        owed += 1;
        if (retry === null) {
          retry = setTimeout(() => void pay(), OWED_GENERATION_RETRY_MS);
          retry.unref();
        }
        await epoch
          ?.advance()
          .catch((error: unknown) =>
            logger.warn({ err: { message: (error as Error).message } }, 'could not start a new cache epoch in the database either'),
          );
      }
    },
  };
}

/** One read's result and the moment (epoch ms, on the service's clock) it stops being served. */
interface StoredRead {
  result: ExecutionResult;
  expiresAt: number;
}

/** Where results are kept: this instance's memory or, with Redis, one store for every instance. */
export interface ReadStore {
  /** null for a miss, including a store that cannot be reached (never an error). */
  get(id: string): Promise<StoredRead | null>;
  set(id: string, read: StoredRead, ttlMs: number): Promise<void>;
}

/**
 * A result held as objects takes about this many times its JSON text in the heap (measured with
 * `node --expose-gc` on the demo data's answers: 2.4 to 3.1): the bound counts the heap, not the text.
 */
const HEAP_BYTES_PER_JSON_CHARACTER = 3;

/** This instance's memory, bounded in entries and bytes, keys and bookkeeping included (src/lib/bounded-cache.ts). */
export function memoryReadStore(bounds: CacheBounds): ReadStore & { clear(): void; readonly cache: BoundedCache<StoredRead> } {
  // Measured once, when stored: a miss has just run a whole operation, so this is small beside it.
  const cache = new BoundedCache<StoredRead>(bounds, (read) => JSON.stringify(read.result).length * HEAP_BYTES_PER_JSON_CHARACTER);
  return {
    cache,
    get: (id) => Promise.resolve(cache.get(id) ?? null),
    set(id, read) {
      cache.set(id, read);
      return Promise.resolve();
    },
    clear: () => cache.clear(),
  };
}

/** Entries in Redis, each with its TTL; a Redis failure is a miss, never an error (the breaker logs the outage). */
function redisStore(redis: Redis): ReadStore {
  return {
    async get(id) {
      try {
        const stored = await redis.get(ENTRY_PREFIX + id);
        return stored ? (JSON.parse(stored) as StoredRead) : null;
      } catch {
        return null;
      }
    },
    async set(id, read, ttlMs) {
      try {
        await redis.set(ENTRY_PREFIX + id, JSON.stringify(read), 'PX', Math.ceil(ttlMs));
      } catch {
        // Not stored: the next read runs the operation again.
      }
    },
  };
}

export interface ReadCacheOptions {
  generation: CacheGeneration;
  /** Execution results, shared by the instances when in Redis. */
  store: ReadStore;
  /** Finished HTTP answers, always in this instance's memory (src/gateway/answer-cache.ts). */
  answers: AnswerStore;
}

/** What each memory tier of one instance may hold: its results, and its answers, each. */
export const MEMORY_CACHE_BOUNDS: CacheBounds = { maxEntries: 50_000, maxBytes: 24 * 1024 * 1024 };

export function inMemoryReadCache(): ReadCacheOptions {
  const store = memoryReadStore(MEMORY_CACHE_BOUNDS);
  const answers = memoryAnswerStore(MEMORY_CACHE_BOUNDS);
  const generation = memoryGeneration(() => {
    store.clear();
    answers.clear();
  });
  return { generation, store, answers };
}

/** Generation and results in Redis, so every instance sees every other's writes on its next read. */
export function redisReadCache(redis: Redis, logger: Logger, epoch?: CacheEpoch): ReadCacheOptions {
  return { generation: redisGeneration(redis, logger, epoch), store: redisStore(redis), answers: memoryAnswerStore(MEMORY_CACHE_BOUNDS) };
}

type YogaContext = YogaInitialContext & Context;

/** Whether an operation may be answered from, or stored in, a cache: a query, and nothing else. */
export function isCacheableRead(document: DocumentNode, operationName: string | null | undefined): boolean {
  return isReadOperation(getOperationAST(document, operationName)?.operation);
}

function isReadOperation(operation: string | undefined): boolean {
  return operation === 'query';
}

/** What the response cache decided for one request: the entry it is filed under and, once known, its expiry. */
interface EntryOfRequest {
  id: string;
  expiresAt?: number;
}

interface ReadCachePlugins {
  plugins: Plugin<YogaContext>[];
  /**
   * When the answer to this request stops being servable: known once the response cache served the
   * request's result from an entry or stored it as one; undefined when it did neither (a mutation,
   * an answer with errors, no valid key).
   */
  expiryOf(request: Request): number | undefined;
}

/**
 * Which entry each request is filed under, and the requests waiting on each entry (between naming
 * it and reading or writing it). Requests with the same entry name share one answer, so whichever of
 * them settles the entry settles them all.
 */
class EntryBook {
  readonly entryByRequest = new WeakMap<Request, EntryOfRequest>();
  private readonly waiting = new Map<string, EntryOfRequest[]>();

  /** Files the request under the entry, waiting for it to be read or written. */
  file(request: Request, id: string): void {
    const entry: EntryOfRequest = { id };
    this.entryByRequest.set(request, entry);
    this.waiting.set(id, [...(this.waiting.get(id) ?? []), entry]);
  }

  /** The entry was read or written: every request waiting on it learns its expiry. */
  settle(id: string, expiresAt: number): void {
    for (const entry of this.waiting.get(id) ?? []) entry.expiresAt = expiresAt;
    this.waiting.delete(id);
  }

  /** A request whose entry was neither read nor written (a miss with errors) stops waiting. */
  forget(request: Request): void {
    const entry = this.entryByRequest.get(request);
    if (!entry || entry.expiresAt !== undefined) return;
    const others = this.waiting.get(entry.id)?.filter((candidate) => candidate !== entry) ?? [];
    if (others.length > 0) this.waiting.set(entry.id, others);
    else this.waiting.delete(entry.id);
  }
}

/** The response cache plugin's store: the read store, counting lookups and settling the requests that wait on an entry. */
function envelopCacheOver(store: ReadStore, now: () => Date, metrics: Pick<GatewayMetrics, 'cacheLookup'>, book: EntryBook): Cache {
  return {
    async get(id) {
      if (id.startsWith(UNCACHEABLE)) return null;
      const read = await store.get(id);
      const live = read !== null && read.expiresAt > now().getTime();
      metrics.cacheLookup(live ? 'hit' : 'miss', 'result');
      if (!live) return null;
      book.settle(id, read.expiresAt);
      return read.result;
    },
    async set(id, result, _entities, ttl) {
      if (id.startsWith(UNCACHEABLE) || !Number.isFinite(ttl) || ttl <= 0) return;
      const expiresAt = now().getTime() + ttl;
      book.settle(id, expiresAt);
      await store.set(id, { result, expiresAt }, ttl);
    },
    // Generations replace invalidation (see the top of this file).
    invalidate() {},
  };
}

// The contexts of operations that are not reads go in `notReads`: the response cache is off for them
// (`enabled`), decided here, before the response cache's own onExecute (the plugin order in
// useReadCache). The operation is looked up once: a mutation also starts a new generation once it has
// run, whatever it did (a failed one may have written part of its work).
function onlyReadsCached(generation: CacheGeneration, notReads: WeakSet<object>): Plugin<YogaContext> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (isReadOperation(operation)) return;
      notReads.add(args.contextValue);
      if (operation !== 'mutation') return;
      setExecuteFn(async (executionArgs) => {
        try {
          return await executeFn(executionArgs);
        } finally {
          await generation.advance();
        }
      });
    },
  };
}

type CacheKeyBuilder = NonNullable<Parameters<typeof useResponseCache<YogaContext>>[0]['buildResponseCacheKey']>;

/** An entry's name: the generation, the key's scope, the operation and its variables, hashed; the request is filed under it. */
function responseCacheKey(generation: CacheGeneration, book: EntryBook): CacheKeyBuilder {
  return async ({ documentString, variableValues, operationName, sessionId, context }) => {
    const current = await generation.current();
    const name = createHash('sha256')
      .update(JSON.stringify([current, sessionId, operationName ?? null, documentString, variableValues ?? null]))
      .digest('base64url');
    if (current === null) return `${UNCACHEABLE}${name}`;
    const request = (context as Partial<Context> | undefined)?.request;
    if (request) book.file(sentRequest(request), name);
    return name;
  };
}

/**
 * The response cache plugin reads the schema when it is set, by rebuilding every type of it with
 * mapSchema (to note each field's result types): about 60 ms of CPU at start-up, measured, that no
 * answer needs until an operation runs. The reading is done by the first execution instead, once:
 * executions start one at a time on the event loop, and the plugin's own check skips a schema it has
 * read. Its only other hook is onExecute.
 */
function schemaReadOnFirstExecution(plugin: Plugin<YogaContext>): Plugin<YogaContext> {
  const { onSchemaChange, onExecute } = plugin;
  let unread: Parameters<NonNullable<typeof onSchemaChange>>[0] | null = null;
  return {
    ...plugin,
    onSchemaChange(payload) {
      unread = payload;
    },
    onExecute(payload) {
      if (unread) {
        const schemaChange = unread;
        unread = null;
        onSchemaChange?.(schemaChange);
      }
      return onExecute?.(payload);
    },
  };
}

export function useReadCache(
  { generation, store }: ReadCacheOptions,
  now: () => Date,
  metrics: Pick<GatewayMetrics, 'cacheLookup'>,
): ReadCachePlugins {
  const book = new EntryBook();
  const notReads = new WeakSet<object>();
  const forgetWaiting: Plugin<YogaContext> = {
    onResponse({ request }) {
      book.forget(request);
    },
  };
  return {
    expiryOf: (request) => book.entryByRequest.get(request)?.expiresAt,
    plugins: [
      onlyReadsCached(generation, notReads),
      forgetWaiting,
      schemaReadOnFirstExecution(
        useResponseCache<YogaContext>({
          cache: envelopCacheOver(store, now, metrics, book),
          session: (context) => (context.actor ? cacheScope(context.actor) : null),
          enabled: (context) => context.actor !== null && !notReads.has(context),
          ttl: cacheTtls.default,
          ttlPerSchemaCoordinate: cacheTtls.perType,
          // Off: this plugin's invalidation is by entity; generations replace it. With it off the plugin
          // would file mutation results like query results, which `enabled` above prevents.
          invalidateViaMutation: false,
          // Entries are invalidated by generation (onlyReadsCached), never by entity, so the plugin
          // need not add `id` to every selection to learn entities; and it must not: a type the REST
          // door serves without its graph-only `id` (a model in an offer) would be asked for a field
          // the REST schema does not have.
          idFields: [],
          includeExtensionMetadata: false,
          // Answers with errors are not cached, as by the plugin's default, which also printed a plain-text
          // console line for each one; every line this process writes is JSON (src/logger.ts).
          shouldCacheResult: ({ result }) => !result.errors,
          buildResponseCacheKey: responseCacheKey(generation, book),
        }),
      ),
    ],
  };
}
