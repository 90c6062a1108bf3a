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
import { clientAddress } from '../client-address.ts';
import { presentedKeyVerdict, sentRequest, type AppDeps, type Context } from '../context.ts';
import { operationCost } from '../graphql-limits.ts';
import { jsonResponse } from '../rest/errors.ts';
import { carriesCredential } from '../security-headers.ts';
import { createRateLimiter, rateLimitedError, rateLimitHeaders, redeemsSignOnToken, type Verdict } from './policy.ts';

/** What the plugin knows of one request, kept under the request as the client sent it. */
interface Meter {
  clientAddress: string;
  /** The last verdict on this request's operation (a REST path runs one). */
  verdict?: Verdict;
}

function setHeaders(response: Response, headers: Record<string, string>, setResponse: (response: Response) => void): void {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  } catch {
    // Some responses have immutable headers (a fetched or redirect Response): answer a copy.
    const copy = new Headers(response.headers);
    for (const [name, value] of Object.entries(headers)) copy.set(name, value);
    setResponse(new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy }));
  }
}

/**
 * Two plugins of one limiter: `requests` goes before the REST door (it must see the request as sent),
 * `operations` after the query limits (it needs the operation's cost, which they compute).
 */
export function useRateLimits(deps: AppDeps, graphqlEndpoint: string): { requests: Plugin; operations: Plugin } {
  const limiter = createRateLimiter(deps.config.rateLimits, deps.rateCounters, deps.now);
  const meters = new WeakMap<Request, Meter>();
  const meterOf = (request: Request): Meter | undefined => meters.get(sentRequest(request));

  const requests: Plugin = {
    onRequest({ request, url, endResponse }) {
      const meter: Meter = { clientAddress: clientAddress(request, deps.config.trustProxyHops) };
      meters.set(request, meter);
      if (!carriesCredential(request, url)) return undefined;
      return limiter.checkAddress(meter.clientAddress).then((verdict) => {
        if (!verdict) return;
        meter.verdict = verdict;
        const nowMs = deps.now().getTime();
        const error = rateLimitedError(verdict, nowMs);
        // Each door's own error shape: GraphQL's `errors` (extensions as when an operation is refused,
        // without the internal `http`) on /graphql, the REST body elsewhere.
        const { http: _status, ...extensions } = error.extensions;
        endResponse(
          url.pathname === graphqlEndpoint
            ? jsonResponse(429, { errors: [{ message: error.message, extensions }] })
            : jsonResponse(429, { error: 'rate_limited', message: error.message }),
        );
      });
    },
    async onResponse({ request, response, setResponse }) {
      const meter = meters.get(request);
      if (!meter) return;
      const presented = presentedKeyVerdict(request);
      // A verification that failed (the database down) was answered as such; it is not a refused key.
      if (presented && (await presented.catch(() => undefined)) === null) await limiter.recordAuthFailure(meter.clientAddress);
      if (meter.verdict) setHeaders(response, rateLimitHeaders(meter.verdict, deps.now().getTime()), setResponse);
    },
  };
  const operations: Plugin = {
    async onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as Partial<Context>;
      if (!context.request) return;
      const meter = meterOf(context.request);
      if (!meter) return;
      const verdict = await limiter.spendOperation({
        actor: context.actor ?? null,
        cost: operationCost(context),
        redeemsSignOnToken: redeemsSignOnToken(args.document, args.operationName),
        clientAddress: meter.clientAddress,
      });
      if (!verdict) return;
      meter.verdict = verdict;
      if (verdict.refusedBy) setResultAndStopExecution({ errors: [rateLimitedError(verdict, deps.now().getTime())] });
    },
  };
  return { requests, operations };
}
