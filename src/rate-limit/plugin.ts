// One Yoga plugin for both doors (Sofa's operations run through the same execute). Not
// @envelop/rate-limiter: it limits fields by directive, not an operation's cost across several budgets.
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
  verdict?: Verdict;
  cost?: number;
}

interface OperationStart {
  args: ExecutionArgs;
  setResultAndStopExecution(result: ExecutionResult): void;
}

export function useRateLimits(deps: AppDeps, graphqlEndpoint: string) {
  const limiter = createRateLimiter(deps.config.rateLimits, deps.rateCounters, deps.now);
  const meterOf = (request: Request): Meter | undefined => requestState(sentRequest(request)).rateMeter;
  const refusal = (request: Request, verdict: Verdict): Response => {
    const error = rateLimitedError(verdict, deps.now().getTime());
    const { http: _status, ...extensions } = error.extensions;
    return parsedUrl(request).pathname === graphqlEndpoint
      ? jsonResponse(429, { errors: [{ message: error.message, extensions }] })
      : jsonResponse(429, { error: 'rate_limited', message: error.message });
  };

  /** Before the REST door rebuilds requests: it must see the request as sent. */
  const requests: Plugin = {
    async onRequest({ request, url, endResponse }) {
      const meter: Meter = { clientAddress: clientAddress(request, deps.config.trustProxyHops) };
      requestState(request).rateMeter = meter;
      if (carriesCredential(request, url)) {
        const verdict = await limiter.checkAddress(meter.clientAddress);
        if (verdict) {
          meter.verdict = verdict;
          endResponse(refusal(request, verdict));
          return;
        }
      }
      // A sign-on token is not an API key: the `anonymous` budget pays before any work is done.
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
      // A verification that failed (the database down) is not a refused key.
      if (presented && (await presented.catch(() => undefined)) === null) await limiter.recordAuthFailure(meter.clientAddress);
      if (!meter.verdict) return;
      const headers = rateLimitHeaders(meter.verdict, deps.now().getTime());
      const answer = withHeaders(response, (target) => {
        for (const [name, value] of Object.entries(headers)) target.set(name, value);
      });
      if (answer !== response) setResponse(answer);
    },
  };
  /** The operation's cost, spent on the request's meter: its verdict, or null when no limit counts it. */
  const spend = async (meter: Meter, actor: Actor | null, cost: number | undefined, redeems: boolean): Promise<Verdict | null> => {
    meter.cost = cost;
    const verdict = await limiter.spendOperation({ actor, cost, redeemsSignOnToken: redeems, clientAddress: meter.clientAddress });
    if (verdict) meter.verdict = mergedVerdict(meter.verdict, verdict);
    return verdict;
  };
  const spendOperation = async ({ args, setResultAndStopExecution }: OperationStart): Promise<void> => {
    const context = args.contextValue as Partial<Context>;
    if (!context.request) return;
    const meter = meterOf(context.request);
    if (!meter) return;
    const redeems = redeemsSignOnToken(args.document, args.operationName);
    const verdict = await spend(meter, context.actor ?? null, operationCost(context), redeems);
    if (verdict?.refusedBy) setResultAndStopExecution({ errors: [rateLimitedError(verdict, deps.now().getTime())] });
  };
  /** After the query limits, which compute the cost. */
  const operations: Plugin = {
    onExecute: (payload) => spendOperation(payload),
    // A subscription spends its document's cost once, when it opens.
    onSubscribe: (payload) => spendOperation(payload),
  };
  return {
    requests,
    operations,
    costOf: (request: Request) => meterOf(request)?.cost,
    /** Spends an answer served without running exactly as if it ran: the refusal to send, or null. */
    async spendServedAnswer(request: Request, actor: Actor, cost: number | undefined): Promise<Response | null> {
      const meter = meterOf(request);
      if (!meter) return null;
      // Only queries are ever served this way, and the sign-on redemption is a mutation.
      const verdict = await spend(meter, actor, cost, false);
      return verdict?.refusedBy ? refusal(request, verdict) : null;
    },
  };
}
