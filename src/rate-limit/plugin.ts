// The rate limits (src/rate-limit/policy.ts) as one Yoga plugin, so both doors go through them:
// Sofa runs the REST paths' operations through the same envelop execute as /graphql.
//
// - onRequest: the client's address is worked out, and a request presenting a key from an address
//   that has failed authentication too often is refused before anything looks at the key.
// - onExecute (after the query limits, which compute the cost): the operation spends from the
//   limits that apply to it, or is refused with RATE_LIMITED (429 on both doors).
// - onResponse: a key that was not accepted counts against the address; the answer carries the
//   RateLimit headers of the policies it was counted against.
// /health, /ready and the explorers answer before this plugin and are never limited.
import type { Plugin } from 'graphql-yoga';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { clientAddress } from '../gateway/client-address.ts';
import { presentedKeyVerdict, sentRequest, type Context } from '../context.ts';
import type { AppDeps } from '../gateway/app.ts';
import { operationCost } from '../schema/graphql-limits.ts';
import { jsonResponse } from '../rest/errors.ts';
import { carriesCredential } from '../gateway/security-headers.ts';
import { carriesApiKey } from '../rest/routes.ts';
import type { Actor } from '../auth/api-keys.ts';
import { withHeaders } from '../web/bodies.ts';
import { parsedUrl } from '../web/fetch-api.ts';
import { requestState } from '../web/request-state.ts';
import { createRateLimiter, mergedVerdict, rateLimitedError, rateLimitHeaders, redeemsSignOnToken, type Verdict } from './policy.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** On the request as the client sent it: what the rate limits know of it. */
    rateMeter?: Meter;
  }
}

interface Meter {
  clientAddress: string;
  /** The last verdict on this request's operation (a REST path runs one). */
  verdict?: Verdict;
  /** What the operation cost (the query limits' figure), once it was counted. */
  cost?: number;
}

interface RateLimitPlugins {
  /** Before the REST door rebuilds requests: the address check, and the RateLimit headers on the way out. */
  requests: Plugin;
  /** After the query limits: each operation spends from the limits that apply to it. */
  operations: Plugin;
  /** The cost this request's operation spent, when it ran one. */
  costOf(request: Request): number | undefined;
  /**
   * Spends an operation answered without running it (src/gateway/answer-cache.ts) exactly as if it ran:
   * the refusal to send instead, or null.
   */
  spendServedAnswer(request: Request, actor: Actor, cost: number | undefined): Promise<Response | null>;
}

function setHeaders(response: Response, headers: Record<string, string>, setResponse: (response: Response) => void): void {
  const answer = withHeaders(response, (target) => {
    for (const [name, value] of Object.entries(headers)) target.set(name, value);
  });
  if (answer !== response) setResponse(answer);
}

/** Where an operation starts: a query's or mutation's execution, or a subscription's opening (the same arguments). */
interface OperationStart {
  args: ExecutionArgs;
  setResultAndStopExecution(result: ExecutionResult): void;
}

/**
 * Two plugins of one limiter: `requests` goes before the REST door (it must see the request as sent),
 * `operations` after the query limits (it needs the operation's cost, which they compute).
 */
export function useRateLimits(deps: AppDeps, graphqlEndpoint: string): RateLimitPlugins {
  const limiter = createRateLimiter(deps.config.rateLimits, deps.rateCounters, deps.now);
  const meterOf = (request: Request): Meter | undefined => requestState(sentRequest(request)).rateMeter;
  /** The refusal in each door's own shape: GraphQL's `errors` on /graphql, the REST body elsewhere. */
  const refusal = (request: Request, verdict: Verdict): Response => {
    const error = rateLimitedError(verdict, deps.now().getTime());
    // Extensions as when an operation is refused, without the internal `http`.
    const { http: _status, ...extensions } = error.extensions;
    return parsedUrl(request).pathname === graphqlEndpoint
      ? jsonResponse(429, { errors: [{ message: error.message, extensions }] })
      : jsonResponse(429, { error: 'rate_limited', message: error.message });
  };

  const requests: Plugin = {
    async onRequest({ request, url, endResponse }) {
      const meter: Meter = { clientAddress: clientAddress(request, deps.config.trustProxyHops) };
      requestState(request).rateMeter = meter;
      // A key or a token was presented: an address that failed too often is refused before it is looked at.
      if (carriesCredential(request, url)) {
        const verdict = await limiter.checkAddress(meter.clientAddress);
        if (verdict) {
          meter.verdict = verdict;
          endResponse(refusal(request, verdict));
          return;
        }
      }
      // No API key (a sign-on token is not one): the address's `anonymous` budget pays for the
      // request, before any work is done for it.
      if (!carriesApiKey(request.headers, url)) {
        const verdict = await limiter.spendAnonymous(meter.clientAddress);
        if (!verdict) return;
        meter.verdict = verdict;
        if (verdict.refusedBy) endResponse(refusal(request, verdict));
      }
    },
    async onResponse({ request, response, setResponse }) {
      const meter = requestState(request).rateMeter;
      if (!meter) return;
      const presented = presentedKeyVerdict(request);
      // A verification that failed (the database down) was answered as such; it is not a refused key.
      if (presented && (await presented.catch(() => undefined)) === null) await limiter.recordAuthFailure(meter.clientAddress);
      if (meter.verdict) setHeaders(response, rateLimitHeaders(meter.verdict, deps.now().getTime()), setResponse);
    },
  };
  const spendOperation = async ({ args, setResultAndStopExecution }: OperationStart): Promise<void> => {
    const context = args.contextValue as Partial<Context>;
    if (!context.request) return;
    const meter = meterOf(context.request);
    if (!meter) return;
    const cost = operationCost(context);
    meter.cost = cost;
    const verdict = await limiter.spendOperation({
      actor: context.actor ?? null,
      cost,
      redeemsSignOnToken: redeemsSignOnToken(args.document, args.operationName),
      clientAddress: meter.clientAddress,
    });
    if (!verdict) return;
    meter.verdict = mergedVerdict(meter.verdict, verdict);
    if (verdict.refusedBy) setResultAndStopExecution({ errors: [rateLimitedError(verdict, deps.now().getTime())] });
  };
  const operations: Plugin = {
    onExecute: (payload) => spendOperation(payload),
    // A subscription spends its document's cost once, when it opens.
    onSubscribe: (payload) => spendOperation(payload),
  };
  return {
    requests,
    operations,
    costOf: (request) => meterOf(request)?.cost,
    async spendServedAnswer(request, actor, cost) {
      const meter = meterOf(request);
      if (!meter) return null;
      meter.cost = cost;
      // Only queries are ever served this way, and the sign-on redemption is a mutation.
      const verdict = await limiter.spendOperation({ actor, cost, redeemsSignOnToken: false, clientAddress: meter.clientAddress });
      if (!verdict) return null;
      meter.verdict = mergedVerdict(meter.verdict, verdict);
      return verdict.refusedBy ? refusal(request, verdict) : null;
    },
  };
}
