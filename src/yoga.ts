// Builds the one Yoga instance that serves both doors: /graphql (with GraphiQL) and the REST paths.
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import { createContext, type AppDeps, type Context } from './context.ts';
import { useBodyLimit, useHealthChecks, useInputErrorCodes, useReadableGraphQLParams, useRequestLog } from './http-plugins.ts';
import { useInputChecks } from './input-checks.ts';
import { useApiDocs } from './rest/docs.ts';
import { useRestRoutes } from './rest/plugin.ts';
import { getSchema } from './schema/index.ts';

export type Yoga = YogaServerInstance<Record<string, never>, Context>;

/**
 * Limits on what one /graphql document may ask for. REST paths run fixed documents and are not
 * parsed from the request, so these protect the GraphQL door (shared/notes/sofa-pothos.md).
 */
export const queryLimits = { maxDepth: 10, maxAliases: 15, maxTokens: 3000, maxCost: 20_000 } as const;

export function createApp(deps: AppDeps): Yoga {
  return createYoga<Record<string, never>, Context>({
    schema: getSchema(),
    context: ({ request }) => createContext(deps, request),
    graphqlEndpoint: '/graphql',
    // GraphiQL's code is served by the service itself, so it works with no internet access.
    graphiql: { title: 'Dealership API', defaultQuery: '{\n  apikey_details {\n    id\n    permissions\n  }\n}\n' },
    renderGraphiQL,
    landingPage: false,
    // Yoga's own health check answers 200 for any URL that merely ends in its endpoint; ours is exact
    // (src/http-plugins.ts). A serialised URL never contains a space, so this one never matches.
    healthCheckEndpoint: ' disabled',
    maskedErrors: true,
    logging: {
      debug: (...args) => deps.logger.debug(args.map(String).join(' ')),
      info: (...args) => deps.logger.info(args.map(String).join(' ')),
      warn: (...args) => deps.logger.warn(args.map(String).join(' ')),
      error: (...args) => deps.logger.error({ err: args.find((arg) => arg instanceof Error) }, args.map(String).join(' ')),
    },
    plugins: [
      useRequestLog(deps),
      useHealthChecks(deps),
      useBodyLimit(deps.config.bodyLimitBytes),
      useApiDocs(),
      useRestRoutes(deps),
      useInputErrorCodes(),
      useReadableGraphQLParams(),
      useInputChecks(),
      maxDepthPlugin({ n: queryLimits.maxDepth, flattenFragments: true }),
      maxAliasesPlugin({ n: queryLimits.maxAliases }),
      maxTokensPlugin({ n: queryLimits.maxTokens }),
      costLimitPlugin({ maxCost: queryLimits.maxCost }),
    ],
  });
}
