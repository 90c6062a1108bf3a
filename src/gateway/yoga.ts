// Builds the one Yoga instance that serves both doors: /graphql (with GraphiQL) and the REST paths.
import { createYoga, type YogaServerInstance, type YogaServerOptions } from 'graphql-yoga';
import { sentRequest, type Context } from '../context.ts';
import { createContext, lendLogger, type AppDeps } from './app.ts';
import { logError, maskUnexpectedError } from '../errors.ts';
import { graphiqlOptions, graphiqlPage } from '../rest/explorers.ts';
import { queryLimits, useQueryLimits } from '../schema/graphql-limits.ts';
import {
  useBodyLimit,
  useGraphQLAccept,
  useHealthChecks,
  useErrorCodes,
  useHttpConventions,
  useInputErrorCodes,
  useReadableGraphQLParams,
} from './http-plugins.ts';
import { useInputChecks } from './input-checks.ts';
import { useApiDocs } from '../rest/docs.ts';
import { useRestRoutes } from '../rest/plugin.ts';
import { getSchema } from '../schema/index.ts';
import { useReadCache } from './response-cache.ts';
import { useAnswerCache } from './answer-cache.ts';
import { useETags } from './etags.ts';
import { useCompression } from './compression.ts';
import { useSchemaPrivacy } from './schema-privacy.ts';
import { useKeyView } from './api-view.ts';
import { useSecurityHeaders } from './security-headers.ts';
import { pathMethods } from './path-methods.ts';
import { useRateLimits } from '../rate-limit/plugin.ts';
import { useKeyCallLog } from './key-call-log.ts';
import { createMetrics, type GatewayMetrics } from '../telemetry/metrics.ts';
import { useMetricsEndpoint } from './metrics-endpoint.ts';
import { useRequestTelemetry } from './request-telemetry.ts';
import { errorLogger, noteErrorLogger, requestLogger, useErrorLoggers } from '../telemetry/request-record.ts';
import { useTracing } from './tracing-plugin.ts';
import { useLiveStreams } from './live-streams.ts';

export type Yoga = YogaServerInstance<Record<string, never>, Context>;

const GRAPHQL_ENDPOINT = '/graphql';

type YogaOptions = YogaServerOptions<Record<string, never>, Context>;

function responseCaches(deps: AppDeps, rateLimits: ReturnType<typeof useRateLimits>, metrics: GatewayMetrics) {
  if (!deps.readCache) return { readCache: [], answerCache: null };
  const { generation, answers } = deps.readCache;
  const { costOf, spendServedAnswer } = rateLimits;
  return {
    readCache: useReadCache(deps.readCache, deps.now, metrics),
    answerCache: useAnswerCache(deps, { generation, answers, costOf, spendServedAnswer, metrics }, GRAPHQL_ENDPOINT),
  };
}

// Yoga's own error lines (the error behind a masked answer) carry the request id of the request the
// error was met in (see errorLogger), at the level of the code it is answered with (logError: a
// database that did not answer is a warning, only an unexpected error is an error); its debug lines,
// which name no error, carry none.
function yogaLogging(logger: AppDeps['logger']): YogaOptions['logging'] {
  return {
    // Yoga writes debug lines on every request: their text is built only when the level is on.
    debug: (...args) => {
      if (logger.isLevelEnabled('debug')) logger.debug(args.map(String).join(' '));
    },
    info: (...args) => {
      if (logger.isLevelEnabled('info')) logger.info(args.map(String).join(' '));
    },
    warn: (...args) => logger.warn(args.map(String).join(' ')),
    error: (...args) => {
      const error = args.find((arg) => arg instanceof Error);
      logError(errorLogger(logger, error), error, args.map(String).join(' '));
    },
  };
}

/** The plugins that make up the app, built by createApp; see appPlugins. */
interface AppParts {
  rateLimits: ReturnType<typeof useRateLimits>;
  http: ReturnType<typeof useHttpConventions>;
  metrics: GatewayMetrics;
  telemetry: ReturnType<typeof useRequestTelemetry>;
  tracing: ReturnType<typeof useTracing>;
  caches: ReturnType<typeof responseCaches>;
}

/** The plugins in the order they run: the order is the design (each comment says why a plugin sits where it does). */
function appPlugins(
  deps: AppDeps,
  { rateLimits, http, metrics, telemetry, tracing, caches: { readCache, answerCache } }: AppParts,
): YogaOptions['plugins'] {
  return [
    // First: it notes each operation's errors under the request's logger before any plugin re-wraps them.
    useErrorLoggers(),
    // First of the onResponse hooks: it keeps answers as the handler made them, before the hooks below add to them.
    ...(answerCache ? [answerCache.capture] : []),
    http.first,
    useSecurityHeaders({
      origins: deps.config.corsOrigins,
      methodsOf: pathMethods({
        graphqlEndpoint: GRAPHQL_ENDPOINT,
        explorers: deps.config.explorers,
        metrics: deps.config.metricsToken !== null,
      }),
    }),
    telemetry.first,
    // After the request record is started (its log lines carry the request span's ids), before anything else may answer.
    tracing.first,
    // Its onExecute comes before the query limits, the rate limits and the cache, which may end an operation.
    ...(deps.keyCalls ? [useKeyCallLog(deps.keyCalls, GRAPHQL_ENDPOINT)] : []),
    // ETags are computed on the plain body, then compression runs (onResponse hooks run in order).
    useETags(),
    useCompression(),
    useHealthChecks(deps),
    useMetricsEndpoint(metrics, deps.config.metricsToken),
    useBodyLimit(deps.config.bodyLimitBytes, deps.config.anonymousBodyLimitBytes),
    // Before anything can run an operation: a GraphQL answer nobody can receive is refused first.
    useGraphQLAccept(GRAPHQL_ENDPOINT, deps.config.explorers),
    useApiDocs(
      deps.config.explorers,
      {
        publicUrl: deps.config.publicUrl,
        contactEmail: deps.config.apiContactEmail,
        leadSources: deps.config.leadSources,
      },
      deps.keys,
    ),
    // After health checks and the explorers (never limited), before the REST door rebuilds requests.
    rateLimits.requests,
    // Repeated reads are answered here, before the REST door and GraphQL's own work.
    ...(answerCache ? [answerCache.serve] : []),
    useRestRoutes(deps),
    useInputErrorCodes(),
    useErrorCodes(),
    useReadableGraphQLParams(),
    useInputChecks(),
    useSchemaPrivacy({ production: deps.config.production, keys: deps.keys }),
    // Once privacy has let the introspection through; before the cache, which files its answer under the key's scope.
    useKeyView(),
    useQueryLimits({ ...queryLimits, maxCost: deps.config.graphqlMaxCost }),
    // Once the query limits have costed the operation; before the cache, so a cached answer is counted too.
    rateLimits.operations,
    // After the checks and limits: only a document that passed them is ever answered, or stored, by the cache.
    ...readCache,
    // Subscriptions' event streams, with the deployment's heartbeat (after Yoga has chosen SSE for them).
    useLiveStreams(deps.config.subscriptionHeartbeatMs),
    telemetry.errorBodies,
    http.last,
    // After every other answer-changing hook: the record is finished from the answer as sent.
    telemetry.last,
    tracing.last,
  ];
}

export function createApp(deps: AppDeps): Yoga {
  const rateLimits = useRateLimits(deps, GRAPHQL_ENDPOINT);
  const http = useHttpConventions();
  const metrics = deps.metrics ?? createMetrics(deps);
  const telemetry = useRequestTelemetry(deps, metrics, GRAPHQL_ENDPOINT);
  const tracing = useTracing(GRAPHQL_ENDPOINT);
  const caches = responseCaches(deps, rateLimits, metrics);
  return createYoga<Record<string, never>, Context>({
    schema: getSchema(),
    // A context that cannot be built (the database is unreachable) fails the request, and Yoga logs
    // the error: it is noted under the request's logger first, so the line carries the request id.
    context: (initial) =>
      createContext(deps, initial.request).then(
        (context) => lendLogger(initial, context),
        (error: unknown) => {
          noteErrorLogger(error, requestLogger(deps.logger, sentRequest(initial.request)));
          throw error;
        },
      ),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    // GraphiQL's code is served by the service itself, so it works with no internet access; off in
    // production unless EXPLORERS=on.
    graphiql: deps.config.explorers ? graphiqlOptions : false,
    renderGraphiQL: async () => (await graphiqlPage()).html,
    landingPage: false,
    // Bodies are capped before Yoga: the HTTP server reads each one with BODY_LIMIT_BYTES as its hard
    // cap (src/http/server.ts) and useBodyLimit refuses a declared length over it. Yoga's own limit
    // re-streamed every GraphQL POST body through a counting pipe, a measurable share of an uncached
    // GraphQL read's CPU (docs/benchmarks.md), for a limit that can never be the one reached.
    maxRequestBodySize: false,
    // CORS is answered by useSecurityHeaders, for the configured origins only.
    cors: false,
    // Yoga's own health check answers 200 for any URL that merely ends in its endpoint; ours is exact
    // (src/gateway/http-plugins.ts). A serialised URL never contains a space, so this one never matches.
    healthCheckEndpoint: ' disabled',
    // A database that does not answer is 503 `unavailable`, not 500 (src/db/unavailable.ts).
    maskedErrors: { maskError: maskUnexpectedError },
    logging: yogaLogging(deps.logger),
    plugins: appPlugins(deps, { rateLimits, http, metrics, telemetry, tracing, caches }),
  });
}
