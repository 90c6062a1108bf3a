// The response cache for reads, on both doors (Sofa runs the same envelop execute, so one plugin
// serves REST and /graphql alike).
//
// Correct by construction, in three rules:
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
import { createInMemoryCache, useResponseCache, type Cache } from '@envelop/response-cache';
import { getOperationAST, type ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Actor } from './auth/api-keys.ts';
import type { Context } from './context.ts';
import type { GatewayMetrics } from './telemetry/metrics.ts';

/** How long a read may be served from the cache, by default and per type (milliseconds). */
export const cacheTtls = {
  default: 30_000,
  perType: {
    // The new-vehicle catalogue and offers change rarely and only from the platform.
    ModelVariant: 300_000,
    ModelVariantDetails: 300_000,
    Model: 300_000,
    WebsiteModels: 300_000,
    Manufacturer: 300_000,
    Offer: 300_000,
    ManufacturerOffer: 300_000,
    WebsiteOffer: 300_000,
  } as Record<string, number>,
} as const;

/** The generation every entry name carries; null while it cannot be known (Redis down): no caching then. */
export interface CacheGeneration {
  current(): Promise<string | null>;
  advance(): Promise<void>;
}

const GENERATION_KEY = 'dgw:cache:generation';
const ENTRY_PREFIX = 'dgw:cache:entry:';
/** Entry names that must not be stored: made while the generation was unknown. */
const UNCACHEABLE = 'uncacheable:';

export function memoryGeneration(): CacheGeneration {
  let generation = 0;
  return {
    current: () => Promise.resolve(String(generation)),
    advance: () => {
      generation += 1;
      return Promise.resolve();
    },
  };
}

export function redisGeneration(redis: Redis, logger: Logger): CacheGeneration {
  return {
    async current() {
      try {
        return (await redis.get(GENERATION_KEY)) ?? '0';
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message } }, 'response cache bypassed: Redis unavailable');
        return null;
      }
    },
    async advance() {
      try {
        await redis.incr(GENERATION_KEY);
      } catch (error) {
        // Entries die by their TTL; until Redis is back nothing is read from it anyway.
        logger.warn({ err: { message: (error as Error).message } }, 'could not start a new cache generation: Redis unavailable');
      }
    },
  };
}

/** Entries in Redis, each with its TTL; a Redis failure is a miss, never an error. */
export function redisStore(redis: Redis, logger: Logger): Cache {
  return {
    async get(id) {
      try {
        const stored = await redis.get(ENTRY_PREFIX + id);
        return stored ? (JSON.parse(stored) as ExecutionResult) : null;
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message } }, 'response cache read failed: answering uncached');
        return null;
      }
    },
    async set(id, result, _entities, ttl) {
      if (!Number.isFinite(ttl) || ttl <= 0) return;
      try {
        await redis.set(ENTRY_PREFIX + id, JSON.stringify(result), 'PX', Math.ceil(ttl));
      } catch (error) {
        logger.warn({ err: { message: (error as Error).message } }, 'response cache write failed');
      }
    },
    // Generations replace invalidation (see the top of this file).
    invalidate() {},
  };
}

/** Scopes already worked out: the key cache hands out the same Actor for as long as it remembers the key. */
const scopeByActor = new WeakMap<Actor, string>();

/** What the caller may see, as one opaque name: key id, permissions, dealership set. */
export function cacheScope(actor: Actor): string {
  let scope = scopeByActor.get(actor);
  if (scope === undefined) {
    const permissions = [...actor.permissions].sort().join(',');
    const dealerships = actor.dealershipIds?.join(',') ?? '*';
    scope = createHash('sha256').update(`${actor.apiKeyId}|${permissions}|${dealerships}`).digest('base64url');
    scopeByActor.set(actor, scope);
  }
  return scope;
}

export interface ReadCacheOptions {
  generation: CacheGeneration;
  store: Cache;
}

export function inMemoryReadCache(): ReadCacheOptions {
  return { generation: memoryGeneration(), store: createInMemoryCache({ max: 10_000 }) };
}

/** Never stores an entry named while the generation was unknown; counts every lookup as a hit or a miss. */
function skippingUncacheable(store: Cache, metrics: Pick<GatewayMetrics, 'cacheLookup'>): Cache {
  return {
    get: async (id) => {
      const found = id.startsWith(UNCACHEABLE) ? null : await store.get(id);
      metrics.cacheLookup(found ? 'hit' : 'miss');
      return found;
    },
    set: (id, result, entities, ttl) => (id.startsWith(UNCACHEABLE) ? undefined : store.set(id, result, entities, ttl)),
    invalidate: (entities) => store.invalidate(entities),
  };
}

type YogaContext = YogaInitialContext & Context;

export function useReadCache({ generation, store }: ReadCacheOptions, metrics: Pick<GatewayMetrics, 'cacheLookup'>): Plugin<YogaContext>[] {
  const advanceAfterMutations: Plugin<YogaContext> = {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      // After the mutation ran, whatever it did (a failed one may have written part of its work).
      setExecuteFn(async (executionArgs) => {
        try {
          return await executeFn(executionArgs);
        } finally {
          await generation.advance();
        }
      });
    },
  };
  return [
    advanceAfterMutations,
    useResponseCache<YogaContext>({
      cache: skippingUncacheable(store, metrics),
      session: (context) => (context.actor ? cacheScope(context.actor) : null),
      enabled: (context) => context.actor !== null,
      ttl: cacheTtls.default,
      ttlPerSchemaCoordinate: cacheTtls.perType,
      invalidateViaMutation: false,
      includeExtensionMetadata: false,
      async buildResponseCacheKey({ documentString, variableValues, operationName, sessionId }) {
        const current = await generation.current();
        const name = createHash('sha256')
          .update(JSON.stringify([current, sessionId, operationName ?? null, documentString, variableValues ?? null]))
          .digest('base64url');
        return current === null ? `${UNCACHEABLE}${name}` : name;
      },
    }),
  ];
}
