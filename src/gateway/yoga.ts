// The one Yoga instance of every door; its plugins' order is the design (each comment says why a plugin sits there).
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
import { useRateLimits } from '../rate-limit/plugin.ts';
import { useKeyCallLog } from './key-call-log.ts';
import { createMetrics } from '../telemetry/metrics.ts';
import { useMetricsEndpoint } from './metrics-endpoint.ts';
import { useRequestTelemetry } from './request-telemetry.ts';
import { errorLogger, noteErrorLogger, requestLogger, useErrorLoggers } from '../telemetry/request-record.ts';
import { useLiveStreams } from './live-streams.ts';
import { useIncrementalDelivery } from './incremental.ts';
import { executionSlots } from './execution-slots.ts';
import { useMcp } from './mcp.ts';
import { useTrustedDocuments } from './trusted-documents.ts';

export type Yoga = YogaServerInstance<Record<string, never>, Context>;

const GRAPHQL_ENDPOINT = '/graphql';

type YogaOptions = YogaServerOptions<Record<string, never>, Context>;

function yogaLogging(logger: AppDeps['logger']): YogaOptions['logging'] {
  const line =
    (level: 'debug' | 'info' | 'warn') =>
    (...args: unknown[]): void => {
      if (logger.isLevelEnabled(level)) logger[level](args.map(String).join(' '));
    };
  return {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: (...args) => {
      const error = args.find((arg) => arg instanceof Error);
      logError(errorLogger(logger, error), error, args.map(String).join(' '));
    },
  };
}

function appPlugins(deps: AppDeps, sendThrough: (request: Request) => Promise<Response>): YogaOptions['plugins'] {
  const rateLimits = useRateLimits(deps, GRAPHQL_ENDPOINT);
  const http = useHttpConventions();
  const metrics = deps.metrics ?? createMetrics(deps);
  const telemetry = useRequestTelemetry(deps, metrics, GRAPHQL_ENDPOINT);
  const { costOf, spendServedAnswer } = rateLimits;
  const answerCache = deps.readCache
    ? useAnswerCache(deps, { ...deps.readCache, costOf, spendServedAnswer, metrics }, GRAPHQL_ENDPOINT)
    : null;
  const slots = executionSlots(deps.config.executionSlots);
  metrics.readExecutionSlots(slots);
  const documentOptions = {
    publicUrl: deps.config.publicUrl,
    contactEmail: deps.config.apiContactEmail,
    leadSources: deps.config.leadSources,
  };
  return [
    // First: it notes each operation's errors under the request's logger before any plugin re-wraps them.
    useErrorLoggers(),
    // First of the onResponse hooks: it keeps answers as the handler made them, before the hooks below add to them.
    ...(answerCache ? [answerCache.capture] : []),
    http.first,
    useSecurityHeaders({
      origins: deps.config.corsOrigins,
      graphqlEndpoint: GRAPHQL_ENDPOINT,
      explorers: deps.config.explorers,
      metrics: deps.config.metricsToken !== null,
    }),
    telemetry.first,
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
    useApiDocs(deps.config.explorers, documentOptions, deps.keys),
    // After health checks and the explorers (never limited), before the REST door rebuilds requests.
    rateLimits.requests,
    // After the body and request limits, as any path; its tool calls re-enter the app (handleRequest), so every plugin applies to each.
    useMcp({ sendThrough, keys: deps.keys, logger: deps.logger, documentOptions, bodyLimitBytes: deps.config.bodyLimitBytes }),
    // Repeated reads are answered here, before the REST door and GraphQL's own work.
    ...(answerCache ? [answerCache.serve] : []),
    useRestRoutes(deps),
    useInputErrorCodes(),
    useErrorCodes(),
    useReadableGraphQLParams(),
    // Before every check of the parameters: a persisted document's text is checked, limited and cached as if it were sent.
    ...useTrustedDocuments(deps),
    useInputChecks(),
    useSchemaPrivacy({ production: deps.config.production, keys: deps.keys }),
    // Once privacy has let the introspection through; before the cache, which files its answer under the key's scope.
    useKeyView(),
    useIncrementalDelivery(),
    useQueryLimits({ ...queryLimits, maxCost: deps.config.graphqlMaxCost }),
    // Once the query limits have costed the operation; before the cache, so a cached answer is counted too.
    rateLimits.operations,
    // After the checks and limits: only a document that passed them is ever answered, or stored, by the cache.
    ...(deps.readCache ? useReadCache(deps.readCache, deps.now, metrics) : []),
    // The last onExecute: only an operation every check let through and the cache did not answer waits, for its execution alone.
    slots.plugin,
    useLiveStreams(deps.config.subscriptionHeartbeatMs),
    telemetry.errorBodies,
    http.last,
    // After every other answer-changing hook: the record is finished from the answer as sent.
    telemetry.last,
  ];
}

export function createApp(deps: AppDeps): Yoga {
  let app: Yoga | undefined;
  const sendThrough = async (request: Request): Promise<Response> => {
    if (!app) throw new Error('a request was sent through the app before it was built');
    return app.handleRequest(request, {});
  };
  app = createYoga<Record<string, never>, Context>({
    schema: getSchema(),
    context: (initial) =>
      createContext(deps, initial.request).then(
        (context) => lendLogger(initial, context),
        (error: unknown) => {
          noteErrorLogger(error, requestLogger(deps.logger, sentRequest(initial.request)));
          throw error;
        },
      ),
    graphqlEndpoint: GRAPHQL_ENDPOINT,
    extraParamNames: ['documentId'],
    graphiql: deps.config.explorers ? graphiqlOptions : false,
    renderGraphiQL: async () => (await graphiqlPage()).html,
    landingPage: false,
    // Not Yoga's body limit (it re-streams every POST body; ours cap first) nor its health check (any URL ending in it).
    maxRequestBodySize: false,
    healthCheckEndpoint: ' disabled',
    cors: false,
    maskedErrors: { maskError: maskUnexpectedError },
    logging: yogaLogging(deps.logger),
    plugins: appPlugins(deps, sendThrough),
  });
  return app;
}
