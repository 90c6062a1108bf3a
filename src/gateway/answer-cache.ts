// Finished HTTP answers of reads the response cache filed under an entry, served before the REST door.
// Kept because @envelop/response-cache serves a hit only inside execute, after parsing, validation and
// the REST door; Yoga's plugin serves earlier but not Sofa's REST calls (docs/caching.md).
import { createHash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { peekRequestBody, readBody, responseFromBytes } from '../web/bodies.ts';
import type { Actor } from '../auth/api-keys.ts';
import { boundedCache, type BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import { actorFromRequest } from '../context.ts';
import type { KeyVerifier } from '../auth/key-cache.ts';
import { cacheScope, type CacheGeneration } from './cache-scope.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import { recordOf, type RequestRecord } from '../telemetry/request-record.ts';
import { requestState } from '../web/request-state.ts';
import { isStreamedAnswer } from './incremental.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The answer tier missed under this name: the answer is kept under it if the response cache filed it. */
    answerKey?: string;
  }
}

export interface CachedAnswer {
  status: number;
  headers: [string, string][];
  body: Uint8Array<ArrayBuffer>;
  expiresAt: number;
  cost: number | undefined;
  operation: RequestRecord['operation'];
}

export interface AnswerStore {
  get(key: string, nowMs: number): CachedAnswer | undefined;
  set(key: string, answer: CachedAnswer): void;
  clear(): void;
}

export function memoryAnswerStore(bounds: CacheBounds): AnswerStore & { readonly cache: BoundedCache<CachedAnswer> } {
  const cache = boundedCache<CachedAnswer>(
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
  costOf(request: Request): number | undefined;
  /** The refusal to send instead of the answer, or null. */
  spendServedAnswer(request: Request, actor: Actor, cost: number | undefined): Promise<Response | null>;
  metrics: Pick<GatewayMetrics, 'cacheLookup'>;
}

const GRAPHQL_BODY_TYPE = /^application\/json\b/i;
const NO_BODY = new Uint8Array(0);

/** What the answer depends on besides the caller and the generation; null: never served from here. */
async function requestIdentity(request: Request, url: URL, graphqlEndpoint: string): Promise<[string, Uint8Array] | null> {
  if (request.method === 'GET') {
    const accept = url.pathname === graphqlEndpoint ? (request.headers.get('accept') ?? '') : '';
    return [`GET ${url.pathname}${url.search} ${accept}`, NO_BODY];
  }
  if (request.method === 'POST' && url.pathname === graphqlEndpoint && GRAPHQL_BODY_TYPE.test(request.headers.get('content-type') ?? '')) {
    return [`POST ${url.pathname}${url.search} ${request.headers.get('accept') ?? ''}`, await peekRequestBody(request)];
  }
  return null;
}

/** `capture` keeps the answer as the handler made it; `serve` goes after the checks every request passes. */
export function useAnswerCache(deps: { keys: KeyVerifier; now: () => Date }, parts: AnswerCacheParts, graphqlEndpoint: string) {
  // With Redis another instance advances the generation: the first request to see it drops the old answers.
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
        requestState(request).answerKey = key;
        return;
      }
      const refusal = await parts.spendServedAnswer(request, actor, answer.cost);
      if (refusal) return endResponse(refusal);
      // Logged, measured and audited under the operation, like a request that executed it.
      const record = recordOf(request);
      if (record && !record.operation) record.operation = answer.operation;
      // A copy: the Response keeps the list it is given, and later hooks add to it.
      const headers = answer.headers.map(([name, value]): [string, string] => [name, value]);
      endResponse(responseFromBytes(answer.body, { status: answer.status, headers }));
    },
  };

  const capture: Plugin = {
    async onResponse({ request, response, setResponse }) {
      const { answerKey: key, cacheExpiresAt: expiresAt } = requestState(request);
      // Never a stream: the response cache keeps @defer's answer only once whole, and serves it from there.
      if (key === undefined || expiresAt === undefined || response.status !== 200 || isStreamedAnswer(response)) return;
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
