// GET /metrics, for a bearer token only; without METRICS_TOKEN the path does not exist, so an instance never shows its metrics by
// accident. Answered before the rate limits: a scrape is never refused for the callers' traffic.
import { hash, timingSafeEqual } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { jsonResponse, methodNotAllowed } from '../rest/errors.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import { Response } from '../web/fetch-api.ts';

export const METRICS_PATH = '/metrics';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Compared as digests, so the comparison takes the same time whatever the token's length or content. */
const digest = (text: string): Buffer => hash('sha256', text, 'buffer');

export function useMetricsEndpoint(metrics: GatewayMetrics, token: string | null): Plugin {
  const expected = token === null ? null : digest(token);
  return {
    onRequest({ request, url, endResponse }) {
      if (expected === null || url.pathname !== METRICS_PATH) return undefined;
      if (request.method !== 'GET') return endResponse(methodNotAllowed('GET, HEAD', 'GET'));
      const presented = BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        const body = { error: 'unauthorized', message: 'The metrics need the bearer token set in METRICS_TOKEN.' };
        return endResponse(jsonResponse(401, body, { 'www-authenticate': 'Bearer' }));
      }
      return metrics
        .scrape()
        .then((text) =>
          endResponse(
            new Response(text, { status: 200, headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' } }),
          ),
        );
    },
  };
}
