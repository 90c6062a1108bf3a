// The response cache for reads, on both doors: @envelop/response-cache, with the project's rules as its
// options. Only a query is cached (`isCacheableRead`), filed under what the caller may see
// (`cacheScope`) and the cache generation, which every mutation advances once it has run: a read
// that began before a write is filed under a generation nobody asks for again, and a generation
// cannot miss a dependency as per-entity invalidation can. What changes without a mutation through
// this service is bounded by a TTL per type. With REDIS_URL entries and generation live in Redis.
import { hash } from 'node:crypto';
import { useResponseCache, type Cache } from '@envelop/response-cache';
import { getOperationAST, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import { sentRequest, type Context } from '../context.ts';
import { requestState, type RequestState } from '../web/request-state.ts';
import { memoryAnswerStore, type AnswerStore } from './answer-cache.ts';
import { cacheScope, type CacheGeneration } from './cache-scope.ts';
import { boundedCache, type BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
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

const GENERATION_KEY = 'cache:generation';
const ENTRY_PREFIX = 'cache:entry:';
/** Entry names that must not be stored: made while the generation was unknown. */
const UNCACHEABLE = 'uncacheable:';

const OWED_GENERATION_RETRY_MS = 250;

// A write whose generation Redis did not take leaves this instance owing it (no caching here until it
// lands) and starts a new database epoch, part of every instance's generation (docs/caching.md).
function redisGeneration(redis: Redis, logger: Logger, epoch?: Pick<CacheEpoch, 'current' | 'advance'>): CacheGeneration {
  let owed = 0;
  let retry: NodeJS.Timeout | null = null;
  const payLater = (): void => {
    retry = setTimeout(() => void pay(), OWED_GENERATION_RETRY_MS);
    retry.unref();
  };
  const pay = async (): Promise<void> => {
    retry = null;
    try {
      await redis.incr(GENERATION_KEY);
      owed = 0;
      logger.info('published the cache generation a write owed: the response cache is in use again');
    } catch {
      payLater();
    }
  };
  return {
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
        owed += 1;
        if (retry === null) payLater();
        await epoch
          ?.advance()
          .catch((error: unknown) =>
            logger.warn({ err: { message: (error as Error).message } }, 'could not start a new cache epoch in the database either'),
          );
      }
    },
  };
}

interface StoredRead {
  result: ExecutionResult;
  expiresAt: number;
}

/** A store that cannot be reached answers a miss, never an error. */
interface ReadStore {
  get(id: string): Promise<StoredRead | null>;
  set(id: string, read: StoredRead, ttlMs: number): Promise<void>;
}

/** The bound counts a result's heap, a few times its JSON text. */
const HEAP_BYTES_PER_JSON_CHARACTER = 3;

/** @envelop/response-cache's in-memory cache bounds entries, not bytes, and keeps time by the process clock. */
export function memoryReadStore(bounds: CacheBounds): ReadStore & { clear(): void; readonly cache: BoundedCache<StoredRead> } {
  const cache = boundedCache<StoredRead>(bounds, (read) => JSON.stringify(read.result).length * HEAP_BYTES_PER_JSON_CHARACTER);
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

/** @envelop/response-cache-redis fails a read when Redis does, and keeps entity sets without TTL that generations never clear. */
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
      } catch {}
    },
  };
}

export interface ReadCacheOptions {
  generation: CacheGeneration;
  store: ReadStore;
  answers: AnswerStore;
}

export const MEMORY_CACHE_BOUNDS: CacheBounds = { maxEntries: 50_000, maxBytes: 24 * 1024 * 1024 };

export function inMemoryReadCache(): ReadCacheOptions {
  const store = memoryReadStore(MEMORY_CACHE_BOUNDS);
  const answers = memoryAnswerStore(MEMORY_CACHE_BOUNDS);
  let generation = 0;
  const advance = (): Promise<void> => {
    generation += 1;
    store.clear();
    answers.clear();
    return Promise.resolve();
  };
  return { generation: { current: () => Promise.resolve(String(generation)), advance }, store, answers };
}

export function redisReadCache(redis: Redis, logger: Logger, epoch?: CacheEpoch): ReadCacheOptions {
  return { generation: redisGeneration(redis, logger, epoch), store: redisStore(redis), answers: memoryAnswerStore(MEMORY_CACHE_BOUNDS) };
}

type YogaContext = YogaInitialContext & Context;

declare module '../web/request-state.ts' {
  interface RequestState {
    /** When this request's result stops being servable, once the response cache served or stored it. */
    cacheExpiresAt?: number;
    /** The operation is not a query: the response cache is off for it. */
    notRead?: true;
  }
}

/** Whether an operation may be answered from, or stored in, a cache: a query, and nothing else. */
export function isCacheableRead(document: DocumentNode, operationName: string | null | undefined): boolean {
  return getOperationAST(document, operationName)?.operation === 'query';
}

// A mutation starts a new generation once it has run, whatever it did (a failed one may have written
// part of its work). This decision runs before the response cache's own onExecute (plugin order).
function onlyReadsCached(generation: CacheGeneration): Plugin<YogaContext> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (isCacheableRead(args.document, args.operationName)) return;
      requestState(args.contextValue.request).notRead = true;
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
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

// The plugin rebuilds the whole schema with mapSchema when it is set, which no answer needs until an
// operation runs: the first execution hands it the schema instead (its only other hook is onExecute).
function schemaReadOnFirstExecution(plugin: Plugin<YogaContext>): Plugin<YogaContext> {
  const { onSchemaChange, onExecute } = plugin;
  let unread: Parameters<NonNullable<typeof onSchemaChange>>[0] | null = null;
  return {
    ...plugin,
    onSchemaChange(payload) {
      unread = payload;
    },
    onExecute(payload) {
      const schemaChange = unread;
      unread = null;
      if (schemaChange) onSchemaChange?.(schemaChange);
      return onExecute?.(payload);
    },
  };
}

/** The response cache's store for one execution: it notes on the request when the result it served or stored expires. */
function cacheOf(store: ReadStore, now: () => Date, metrics: Pick<GatewayMetrics, 'cacheLookup'>) {
  return ({ request }: Partial<YogaContext>): Cache => {
    const state: RequestState = request ? requestState(sentRequest(request)) : {};
    return {
      async get(id) {
        if (id.startsWith(UNCACHEABLE)) return null;
        const read = await store.get(id);
        const live = read !== null && read.expiresAt > now().getTime();
        metrics.cacheLookup(live ? 'hit' : 'miss', 'result');
        if (!live) return null;
        state.cacheExpiresAt = read.expiresAt;
        return read.result;
      },
      async set(id, result, _entities, ttl) {
        if (id.startsWith(UNCACHEABLE) || !Number.isFinite(ttl) || ttl <= 0) return;
        state.cacheExpiresAt = now().getTime() + ttl;
        await store.set(id, { result, expiresAt: state.cacheExpiresAt }, ttl);
      },
      invalidate() {},
    };
  };
}

export function useReadCache({ generation, store }: ReadCacheOptions, now: () => Date, metrics: Pick<GatewayMetrics, 'cacheLookup'>) {
  return [
    onlyReadsCached(generation),
    schemaReadOnFirstExecution(
      useResponseCache<YogaContext>({
        cache: cacheOf(store, now, metrics),
        session: (context) => (context.actor ? cacheScope(context.actor) : null),
        enabled: (context) => context.actor !== null && !requestState(context.request).notRead,
        ttl: cacheTtls.default,
        ttlPerSchemaCoordinate: cacheTtls.perType,
        // Generations replace invalidation by entity, so the plugin need not add `id` to selections
        // (which a type the REST door serves without its graph-only `id` would not have).
        invalidateViaMutation: false,
        idFields: [],
        includeExtensionMetadata: false,
        // The plugin's default also prints a plain-text console line per answer with errors.
        shouldCacheResult: ({ result }) => !result.errors,
        async buildResponseCacheKey({ documentString, variableValues, operationName, sessionId }) {
          const current = await generation.current();
          const entry = JSON.stringify([current, sessionId, operationName ?? null, documentString, variableValues ?? null]);
          const name = hash('sha256', entry, 'base64url');
          return current === null ? `${UNCACHEABLE}${name}` : name;
        },
      }),
    ),
  ];
}
