// The answer cache: the front tier of the response cache (src/gateway/response-cache.ts), holding finished
// HTTP answers so that a repeated read is answered before the REST door, GraphQL parsing,
// validation, the query limits and execution run at all.
//
// It adds no rule of its own about what may be cached or for how long; it follows the response
// cache, which stays the one place those are decided:
// - an answer is stored only when the response cache filed the request's result under an entry
//   (a query, with a valid key, without errors), and it expires when that entry does;
// - it is filed under the same three things: the cache generation (so every write through the
//   service makes it unreachable, on every instance when the generation is in Redis), what the
//   caller may see (`cacheScope`: key id, permissions, dealership set), and the request itself (the
//   method, path and query, and for GraphQL the Accept header and the body);
// - a served answer still goes through everything after it: the rate limits spend the operation's
//   recorded cost, and the ETag, compression, security and RateLimit headers are added on the way out
//   as for any answer. Only 200 answers are kept.
// Answers are kept in this instance's memory, bounded in bytes; with Redis each instance keeps its own,
// and the shared generation keeps them all correct.
import { createHash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { peekRequestBody, readBody, responseFromBytes } from '../web/bodies.ts';
import type { Actor } from '../auth/api-keys.ts';
import { BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import { actorFromRequest } from '../context.ts';
import type { KeyVerifier } from '../auth/key-cache.ts';
import { cacheScope, type CacheGeneration } from './cache-scope.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import { recordOf, type RequestRecord } from '../telemetry/request-record.ts';

export interface CachedAnswer {
  status: number;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
  /** Epoch ms (service clock): the response cache entry's own expiry. */
  expiresAt: number;
  /** The operation's cost, spent from the key's cost budget each time the answer is served. */
  cost: number | undefined;
  /** The operation that made it, for the request record (logs, metrics, `keys audit`) of each request it answers. */
  operation: RequestRecord['operation'];
}

export interface AnswerStore {
  get(key: string, nowMs: number): CachedAnswer | undefined;
  set(key: string, answer: CachedAnswer): void;
  /** Drops every answer: a new generation began, and no answer of an older one is asked for again. */
  clear(): void;
}

/** Answers in memory, bounded in entries and bytes, keys and headers included (src/lib/bounded-cache.ts). */
export function memoryAnswerStore(bounds: CacheBounds): AnswerStore & { readonly cache: BoundedCache<CachedAnswer> } {
  const cache = new BoundedCache<CachedAnswer>(
    bounds,
    (answer) => answer.body.byteLength + answer.headers.reduce((sum, [name, value]) => sum + 2 * (name.length + value.length), 0),
  );
  return {
    cache,
    get(key, nowMs) {
      const answer = cache.get(key);
      if (!answer) return undefined;
      if (answer.expiresAt > nowMs) return answer;
      cache.delete(key);
      return undefined;
    },
    set: (key, answer) => cache.set(key, answer),
    clear: () => cache.clear(),
  };
}

interface AnswerCacheParts {
  generation: CacheGeneration;
  answers: AnswerStore;
  /** From the response cache: when this request's result expires, if it filed it under an entry. */
  expiryOf(request: Request): number | undefined;
  /** From the rate limits: the cost this request's operation spent. */
  costOf(request: Request): number | undefined;
  /** From the rate limits: spends a served answer's operation; the refusal to send instead, or null. */
  spendServedAnswer(request: Request, actor: Actor, cost: number | undefined): Promise<Response | null>;
  metrics: Pick<GatewayMetrics, 'cacheLookup'>;
}

const GRAPHQL_BODY_TYPE = /^application\/json\b/i;
const NO_BODY = new Uint8Array(0);

/** What the answer depends on besides the caller and the generation; null: never served from here. */
async function requestIdentity(request: Request, url: URL, graphqlEndpoint: string): Promise<[string, Uint8Array] | null> {
  if (request.method === 'GET') {
    // GraphQL over GET answers in the media type the client accepts.
    const accept = url.pathname === graphqlEndpoint ? (request.headers.get('accept') ?? '') : '';
    return [`GET ${url.pathname}${url.search} ${accept}`, NO_BODY];
  }
  if (request.method === 'POST' && url.pathname === graphqlEndpoint && GRAPHQL_BODY_TYPE.test(request.headers.get('content-type') ?? '')) {
    return [`POST ${url.pathname}${url.search} ${request.headers.get('accept') ?? ''}`, await peekRequestBody(request)];
  }
  return null;
}

/**
 * Two plugins: `capture` must come first in the plugin list (it keeps the answer as the handler
 * made it, before any onResponse hook adds per-request headers or compresses it); `serve` goes
 * after the checks every request passes (body limit, address rate limit) and before the REST door.
 */
export function useAnswerCache(
  deps: { keys: KeyVerifier; now: () => Date },
  parts: AnswerCacheParts,
  graphqlEndpoint: string,
): { capture: Plugin; serve: Plugin } {
  const missedUnder = new WeakMap<Request, string>();
  const served = new WeakSet<Request>();
  // With Redis another instance advances the generation: the first request to see a new one here
  // drops the answers of the old, which would otherwise sit in memory until pushed out.
  let seenGeneration: string | null = null;

  const serve: Plugin = {
    async onRequest({ request, url, endResponse }) {
      const identity = await requestIdentity(request, url, graphqlEndpoint);
      if (identity === null || !request.headers.has('authorization')) return;
      const actor = await actorFromRequest(deps.keys, request).catch(() => null);
      if (!actor) return;
      const generation = await parts.generation.current();
      if (generation === null) return;
      if (generation !== seenGeneration) {
        if (seenGeneration !== null) parts.answers.clear();
        seenGeneration = generation;
      }
      const [line, body] = identity;
      const key = createHash('sha256')
        .update(`${generation}\n${cacheScope(actor)}\n${line}\n`)
        .update(body)
        .digest('base64url');
      const answer = parts.answers.get(key, deps.now().getTime());
      parts.metrics.cacheLookup(answer ? 'hit' : 'miss', 'answer');
      if (!answer) {
        missedUnder.set(request, key);
        return;
      }
      const refusal = await parts.spendServedAnswer(request, actor, answer.cost);
      if (refusal) {
        endResponse(refusal);
        return;
      }
      served.add(request);
      // The request ran this operation as far as its record is concerned: it is logged, measured and
      // audited under it, like a request that executed it.
      const record = recordOf(request);
      if (record && !record.operation) record.operation = answer.operation;
      // A copy of the stored headers: the Response keeps the list it is given as its own headers, and
      // the hooks after this one (ETag, Request-Id, RateLimit) add to them.
      const headers = answer.headers.map(([name, value]): [string, string] => [name, value]);
      endResponse(responseFromBytes(answer.body, { status: answer.status, headers }));
    },
  };

  const capture: Plugin = {
    async onResponse({ request, response, setResponse }) {
      if (served.has(request)) return;
      const key = missedUnder.get(request);
      if (key === undefined || response.status !== 200) return;
      const expiresAt = parts.expiryOf(request);
      if (expiresAt === undefined) return;
      const { bytes: body } = await readBody(response, setResponse);
      parts.answers.set(key, {
        status: response.status,
        headers: [...response.headers],
        body,
        expiresAt,
        cost: parts.costOf(request),
        operation: recordOf(request)?.operation,
      });
    },
  };

  return { capture, serve };
}
