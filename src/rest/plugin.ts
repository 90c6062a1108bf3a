// Mounts Sofa inside Yoga for the documented paths only. Sofa gets a schema filtered to the routed
// root fields (so it cannot serve anything else), and requests reach it only when their path is in
// the route table; every other path goes on to Yoga, which answers 404.
//
// Before Sofa sees a request: a ?token= moves into the Authorization header where the route allows
// it, the caller's key and permission are checked, typed parameters are parsed (422 names the bad
// one) and form bodies are turned into JSON.
// After, a 302 route's {"location"} becomes a real redirect and deprecated routes get their headers.
import { filterSchema, pruneSchema } from '@graphql-tools/utils';
import type { ExecutionArgs, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { useSofa as createSofaHandler } from 'sofa-api';
import { actorFromRequest, carryActor, type AppDeps } from '../context.ts';
import { forbidden, unauthenticated } from '../errors.ts';
import { matchPath, parseParam, restRoutes, type MatchedRoute } from './routes.ts';
import { restError, restErrorResponse } from './errors.ts';

type SofaHandler = ReturnType<typeof createSofaHandler>;
type GetEnveloped = Parameters<NonNullable<Plugin['onYogaInit']>>[0]['yoga']['getEnveloped'];
type Enveloped = ReturnType<GetEnveloped>;

const routedFields = new Set<string>(restRoutes.map((route) => route.field));

export function restSchema(schema: GraphQLSchema): GraphQLSchema {
  return pruneSchema(
    filterSchema({
      schema,
      rootFieldFilter: (operation, fieldName) => operation !== 'Subscription' && routedFields.has(`${operation}.${fieldName}`),
    }),
  );
}

/** The request Sofa should see, or the response that ends it here. */
async function prepareRequest(deps: AppDeps, request: Request, { route, params }: MatchedRoute): Promise<Request | Response> {
  const url = new URL(request.url);
  const headers = new Headers(request.headers);
  if (route.tokenInQuery) {
    const token = url.searchParams.get('token');
    url.searchParams.delete('token');
    if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
  }
  // Who may call comes first: a caller without a valid key or permission learns nothing about the input.
  const caller = new Request(url, { method: request.method, headers });
  const refused = await refuseCaller(deps, caller, route);
  if (refused) return refused;

  for (const [name, type] of Object.entries(route.params ?? {})) {
    const fromPath = params[name];
    const raw = fromPath ?? url.searchParams.get(name);
    if (raw === null) continue;
    const parsed = parseParam(type, raw);
    if ('reason' in parsed) {
      return restError(422, { error: 'invalid_input', message: `${name}: ${parsed.reason}`, field: name });
    }
    if (fromPath === undefined) url.searchParams.set(name, parsed.value);
  }
  let body: string | undefined;
  if (request.method !== 'GET' && request.body !== null) {
    body = await request.text();
    const contentType = headers.get('content-type') ?? '';
    if (route.acceptsForm && contentType.startsWith('application/x-www-form-urlencoded')) {
      body = JSON.stringify(Object.fromEntries(new URLSearchParams(body)));
      headers.set('content-type', 'application/json');
    } else if (body.trim() !== '') {
      try {
        JSON.parse(body);
      } catch {
        return restError(400, { error: 'malformed_json', message: 'The request body is not valid JSON.' });
      }
    }
  }
  const prepared = new Request(url, { method: request.method, headers, body });
  carryActor(caller, prepared);
  return prepared;
}

async function finishResponse(response: Response, route: MatchedRoute['route']): Promise<Response> {
  let result = response;
  if (route.successStatus === 302 && response.status === 302) {
    const { location } = (await response.json()) as { location: string };
    result = new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } });
  }
  if (route.deprecated) {
    const headers = new Headers(result.headers);
    headers.set('deprecation', 'true');
    if (route.deprecated.sunset) headers.set('sunset', route.deprecated.sunset);
    if (route.deprecated.link) headers.set('link', `<${route.deprecated.link}>; rel="deprecation"`);
    result = new Response(result.body, { status: result.status, headers });
  }
  return result;
}

/**
 * Who may call the route, checked before its input is read: a caller without a valid key (401) or
 * without the permission (403) learns nothing about the shape of the input. The root field's own
 * authScopes say the same (test/schema-auth.test.ts holds the two together) and guard /graphql.
 */
async function refuseCaller(deps: AppDeps, request: Request, route: MatchedRoute['route']): Promise<Response | null> {
  if (route.access === 'public') return null;
  const actor = await actorFromRequest(deps, request);
  const error = !actor ? unauthenticated() : route.access !== 'authenticated' && !actor.permissions.has(route.access) ? forbidden() : null;
  return error ? restErrorResponse([error]) : null;
}

export function useRestRoutes(deps: AppDeps): Plugin {
  let sofa: SofaHandler | undefined;
  let getEnveloped: GetEnveloped | undefined;
  const envelopedByContext = new WeakMap<object, Enveloped>();

  return {
    onYogaInit({ yoga }) {
      getEnveloped = yoga.getEnveloped;
    },
    onSchemaChange({ schema }) {
      sofa = createSofaHandler({
        basePath: '',
        schema: restSchema(schema),
        routes: Object.fromEntries(
          restRoutes.map((route) => [route.field, { method: route.method, path: route.path, responseStatus: route.successStatus ?? 200 }]),
        ),
        async context(serverContext) {
          if (!getEnveloped) throw new Error('the REST layer was used before Yoga initialised it');
          const enveloped = getEnveloped(serverContext);
          const context = (await enveloped.contextFactory(serverContext)) as object;
          envelopedByContext.set(context, enveloped);
          return context;
        },
        execute: ((args: ExecutionArgs) => {
          const enveloped = envelopedByContext.get(args.contextValue as object);
          if (!enveloped) throw new TypeError('REST execution without a Yoga context');
          return enveloped.execute(args);
        }) as never,
        // fets types its own Response class; ours is the platform's, which fets accepts at run time.
        errorHandler: ((errors: readonly unknown[]) => restErrorResponse(errors)) as never,
      });
    },
    onRequest({ request, url, endResponse, serverContext }) {
      const matches = matchPath(url.pathname);
      if (matches.length === 0) return undefined;
      const match = matches.find((candidate) => candidate.route.method === request.method);
      if (!match) {
        const allow = [...new Set(matches.map((candidate) => candidate.route.method))].join(', ');
        endResponse(restError(405, { error: 'method_not_allowed', message: `Use ${allow} for this path.` }, { allow }));
        return undefined;
      }
      const handler = sofa;
      if (!handler) throw new Error('the REST layer has no schema yet');
      return (async () => {
        const prepared = await prepareRequest(deps, request, match);
        if (prepared instanceof Response) {
          endResponse(prepared);
          return;
        }
        const response = (await handler.handleRequest(prepared, serverContext as never)) as Response | undefined;
        // A documented route whose root field does not exist yet answers like any unknown path.
        endResponse(response ? await finishResponse(response, match.route) : restError(404, { error: 'not_found', message: 'No such path.' }));
      })();
    },
  };
}
