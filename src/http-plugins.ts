// Small Yoga plugins for the HTTP concerns both doors share: liveness/readiness, the body limit and
// one structured log line per request.
import type { Plugin } from 'graphql-yoga';
import type { AppDeps } from './context.ts';
import { jsonResponse, restError } from './rest/errors.ts';

/** `/health`: the process answers. `/ready`: and its database does too. */
export function useHealthChecks(deps: AppDeps): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET') return undefined;
      if (url.pathname === '/health') {
        endResponse(jsonResponse(200, { status: 'ok' }));
        return undefined;
      }
      if (url.pathname !== '/ready') return undefined;
      return deps.db.$queryRaw`SELECT 1`.then(
        () => endResponse(jsonResponse(200, { status: 'ready' })),
        (error: unknown) => {
          deps.logger.warn({ err: error }, 'readiness check failed');
          endResponse(jsonResponse(503, { status: 'unavailable' }));
        },
      );
    },
  };
}

/**
 * Refuses bodies over the limit by their declared length before anything reads them. Bodies sent
 * without a length (chunked) are counted by the HTTP server in src/index.ts.
 */
export function useBodyLimit(limitBytes: number): Plugin {
  return {
    onRequest({ request, endResponse }) {
      const declared = Number(request.headers.get('content-length') ?? '0');
      if (declared > limitBytes) {
        endResponse(
          restError(413, { error: 'payload_too_large', message: `The request body is over ${limitBytes} bytes.` }),
        );
      }
    },
  };
}

export function useRequestLog(deps: AppDeps): Plugin {
  const startedAt = new WeakMap<Request, number>();
  return {
    onRequest({ request }) {
      startedAt.set(request, performance.now());
    },
    onResponse({ request, response }) {
      const started = startedAt.get(request);
      const url = new URL(request.url);
      deps.logger.info(
        {
          method: request.method,
          path: url.pathname,
          status: response.status,
          ms: started === undefined ? undefined : Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    },
  };
}
