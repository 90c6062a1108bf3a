// Sofa routes and runs the documented paths; around it, what it cannot do: each piece says which.
import type { ExecutionArgs, GraphQLField, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { useSofa } from 'sofa-api';
import { actorFromRequest, carryActor, rebuiltFrom } from '../context.ts';
import type { Logger } from 'pino';
import type { KeyVerifier } from '../auth/key-cache.ts';

import { requestLogger } from '../telemetry/request-record.ts';
import { permissionDenied, unauthenticated } from '../errors.ts';
import { matchPath, methodsOf, parseParam, restRoutes, rootFieldIn, typedParams, type MatchedRoute, type RestRoute } from './routes.ts';
import { accessOfField, refusalOf, type FieldAccess } from '../auth/field-access.ts';
import type { Permission } from '../auth/permissions.ts';
import { readRestArguments, type ArgumentProblem } from './arguments.ts';
import { railsFormBody } from './form-body.ts';
import {
  invalidInputBody,
  malformedJson,
  malformedPathParameter,
  methodNotAllowed,
  noSuchPath,
  restError,
  restErrorResponse,
  unavailableAnswer,
} from './errors.ts';
import { restSchema } from './rest-schema.ts';
import { jsonNestingExceeds, nestingReason } from '../domain/input-limits.ts';
import { parsedJson } from '../lib/json.ts';
import { deprecationHeaders } from './deprecation.ts';
import { parsedUrl, requestOver, Response } from '../web/fetch-api.ts';
import { cutText, headerValue } from '../web/header-value.ts';
import { REFUSED_KEY_REASON, refusedKeyIn, refusedName } from '../web/refused-keys.ts';
import { LOGGED_STRING_MAX } from '../logger.ts';

interface RestDeps {
  keys: KeyVerifier;
  logger: Logger;
}

type GetEnveloped = Parameters<NonNullable<Plugin['onYogaInit']>>[0]['yoga']['getEnveloped'];
type Enveloped = ReturnType<GetEnveloped>;

async function prepareRequest(keys: KeyVerifier, request: Request, { route, params }: MatchedRoute, { field }: Served, ignored: string[]) {
  const url = new URL(request.url);
  // Copied only when changed: most reads go to Sofa as they came.
  let headers = request.headers;
  const ownHeaders = (): Headers => {
    if (headers === request.headers) headers = new Headers(request.headers);
    return headers;
  };
  let caller = request;
  // Sofa reads only arguments, not credentials: a webhook provider's ?token= becomes the Authorization header.
  if (route.tokenInQuery) {
    const token = url.searchParams.get('token');
    url.searchParams.delete('token');
    // A key is printable ASCII; anything else cannot be one (nor go in a header): no key, so 401.
    if (token && /^[\x21-\x7e]+$/.test(token) && !headers.has('authorization')) {
      ownHeaders().set('authorization', `Bearer ${token}`);
      caller = requestOver(url, request.method, headers);
      rebuiltFrom(request, caller);
    }
  }
  // Sofa reads the input before any resolver runs: the caller is checked here first, so a refused one learns nothing of it.
  const fieldAccess = accessOfField(field);
  if (fieldAccess.access !== 'public') {
    const actor = await actorFromRequest(keys, caller);
    const refused = actor ? permissionRefusal(fieldAccess, actor.permissions) : restErrorResponse([unauthenticated()]);
    if (refused) return refused;
  }

  const refusedQuery = refusedQueryParameter(url.searchParams);
  if (refusedQuery) return refusedQuery;
  // Sofa takes JSON bodies only and passes every argument strictly (src/rest/arguments.ts is Rails' leniency).
  const read = await readBody(request, route, headers);
  if (read instanceof Response) return read;
  const args = readRestArguments(field, { pathParams: params, query: url.searchParams, body: read });
  ignored.push(...args.ignored);
  if (args.problem) return invalidInput(args.problem);
  for (const name of args.readFromQuery) {
    for (const key of [...url.searchParams.keys()]) if (key === name || key.startsWith(`${name}[`)) url.searchParams.delete(key);
  }
  const body = args.body === undefined ? undefined : JSON.stringify(args.body);
  if (body !== undefined) ownHeaders().set('content-type', 'application/json');

  // Sofa coerces query text loosely (any Boolean but "true" is false): typed parameters are parsed here, 422 naming them.
  for (const [name, type] of typedParams(route, field)) {
    const fromPath = params[name];
    const raw = fromPath ?? url.searchParams.get(name);
    if (raw === null) continue;
    const parsed = parseParam(type, raw);
    if ('reason' in parsed) return invalidInput({ field: name, reason: parsed.reason });
    if (fromPath === undefined) url.searchParams.set(name, parsed.value);
  }
  const asSent = caller === request && headers === request.headers && url.href === request.url;
  if (asSent && request.method === 'GET' && body === undefined && !headers.has('content-length')) return request;
  if (headers.has('content-length')) ownHeaders().delete('content-length');
  const prepared = requestOver(url, request.method, headers, body);
  carryActor(caller, prepared);
  return prepared;
}

/** The 422 of a query parameter nested too deep or naming a prototype key, checked before qs (in Sofa) reads any. */
function refusedQueryParameter(query: URLSearchParams): Response | null {
  for (const [name, value] of query) {
    const refused = refusedName(name);
    if (refused) return refusedKeyError(refused);
    if (!/^\s*[[{]/.test(value)) continue;
    if (jsonNestingExceeds(value)) return invalidInput({ field: cutText(name, IGNORED_HEADER_NAME_LENGTH), reason: nestingReason() });
    // Text that is not JSON is text, which no parser reads into an object.
    const inText = refusedKeyIn(parsedJson(value), name);
    if (inText) return refusedKeyError(inText);
  }
  return null;
}

function refusedKeyError(place: string): Response {
  return invalidInput({ field: cutText(place, IGNORED_HEADER_NAME_LENGTH), reason: REFUSED_KEY_REASON });
}

function invalidInput(problem: ArgumentProblem): Response {
  return restError(422, invalidInputBody(problem));
}

/** The body as JSON, or the 400/422 that ends the request: Sofa reads JSON only, legacy clients send forms too. */
async function readBody(request: Request, route: RestRoute, headers: Headers): Promise<unknown> {
  if (request.method === 'GET' || request.body === null) return undefined;
  const contentType = (headers.get('content-type') ?? '').toLowerCase();
  if (route.body && contentType.startsWith('multipart/form-data')) {
    const form = await request.formData().catch(() => null);
    if (!form) return restError(400, { error: 'malformed_request', message: 'The multipart/form-data body could not be read.' });
    const parsed = await railsFormBody(form);
    return 'problem' in parsed ? invalidInput(parsed.problem) : parsed.body;
  }
  const text = await request.text();
  if (route.acceptsForm && contentType.startsWith('application/x-www-form-urlencoded')) {
    const fields = new URLSearchParams(text);
    for (const name of fields.keys()) {
      const refused = refusedName(name);
      if (refused) return refusedKeyError(refused);
    }
    return Object.fromEntries(fields);
  }
  if (text.trim() === '') return undefined;
  // Measured before it is parsed: everything after JSON.parse recurses over the value.
  if (jsonNestingExceeds(text)) return invalidInput({ field: 'body', reason: nestingReason() });
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return restError(400, malformedJson());
  }
  const refused = refusedKeyIn(body);
  return refused ? refusedKeyError(refused) : body;
}

/** How ignored parameters are named in X-Ignored-Parameters: at most this many, each this long, ASCII. */
const IGNORED_HEADER_NAMES = 20;
const IGNORED_HEADER_NAME_LENGTH = 100;
const IGNORED_LOGGED_NAMES = 20;

/** Sofa answers every result as a JSON body, with no deprecation and silently dropped unknown parameters: its answer, finished. */
async function finishResponse(deps: RestDeps, request: Request, response: Response, route: RestRoute, ignored: readonly string[]) {
  const redirects = route.successStatus === 302 && response.status === 302;
  if (!redirects && !route.deprecated && ignored.length === 0) return response;
  let body: BodyInit | null = response.body;
  let headers = new Headers(response.headers);
  if (redirects) {
    const { location } = (await response.json()) as { location: string };
    body = null;
    headers = new Headers({ location: headerValue(location), 'cache-control': 'no-store' });
  }
  for (const [name, value] of Object.entries(route.deprecated ? deprecationHeaders(route.deprecated) : {})) headers.set(name, value);
  if (ignored.length > 0) {
    // Rails-era clients are told which parameters were ignored.
    const logged = ignored.slice(0, IGNORED_LOGGED_NAMES).map((name) => cutText(name, LOGGED_STRING_MAX));
    const path = cutText(parsedUrl(request).pathname, LOGGED_STRING_MAX);
    requestLogger(deps.logger, request).info(
      { method: request.method, path, ignored: logged, ignored_count: ignored.length },
      'ignored parameters the operation does not take',
    );
    const named = ignored
      .slice(0, IGNORED_HEADER_NAMES)
      .map((name) => headerValue(name, { maxCodePoints: IGNORED_HEADER_NAME_LENGTH, alsoEscape: '%,' }));
    headers.set('x-ignored-parameters', named.join(', '));
  }
  return new Response(body, { status: response.status, headers });
}

/** The REST door's answer to a key without the operation's permissions, or null: the MCP door refuses a hidden tool with it. */
export function permissionRefusal(fieldAccess: FieldAccess, permissions: ReadonlySet<Permission>): Response | null {
  const refused = refusalOf(fieldAccess, permissions);
  // Only a further permission is named: the operation's own is in its documentation.
  return refused ? restErrorResponse([permissionDenied(refused.status, refused.further)]) : null;
}

/** The handler Sofa built for one route: it reads the arguments, executes the operation and answers its result. */
type SofaHandler = (request: Request, serverContext: object) => Promise<Response>;

/** Sofa over the routed root fields, run in Yoga's envelope; built at the first REST request, as /graphql never needs it. */
function openDoor(current: GraphQLSchema, getEnveloped: GetEnveloped): Door {
  const served = restSchema(current);
  const byContext = new WeakMap<object, Enveloped>();
  const sofa = useSofa({
    basePath: '',
    schema: served,
    routes: Object.fromEntries(
      restRoutes.map((route) => [route.field, { method: route.method, path: route.path, responseStatus: route.successStatus ?? 200 }]),
    ),
    async context(serverContext) {
      const enveloped = getEnveloped(serverContext);
      const contextValue = (await enveloped.contextFactory(serverContext)) as object;
      byContext.set(contextValue, enveloped);
      return contextValue;
    },
    execute: ((args: ExecutionArgs) => {
      const enveloped = byContext.get(args.contextValue as object);
      if (!enveloped) throw new TypeError('REST execution without a Yoga context');
      return enveloped.execute(args);
    }) as never,
    // fets types its own Response class; ours is the platform's, which fets accepts at run time.
    errorHandler: ((errors: readonly unknown[]) => restErrorResponse(errors)) as never,
  });
  // The route is matched already (matchPath): its handler is called without fets' second server adapter, URL parse and match.
  const handlers = new Map(sofa.__routes.map((route) => [`${route.method} ${route.path}`, route.handler as unknown as SofaHandler]));
  const door: Door = new Map();
  for (const route of restRoutes) {
    const field = rootFieldIn(route, served);
    const handler = handlers.get(`${route.method} ${route.path}`);
    if (field && handler) door.set(route, { field, handler });
  }
  return door;
}

/** Each route whose root field the schema has, with the handler Sofa built for it. */
type Served = { field: GraphQLField<unknown, unknown>; handler: SofaHandler };
type Door = Map<RestRoute, Served>;

/** Sofa's router has no 405 and throws on undecodable path parameters: both are answered here. */
function routeOrRefusal(matches: readonly MatchedRoute[], method: string): MatchedRoute | Response {
  const malformed = matches.find((candidate) => candidate.malformedParam)?.malformedParam;
  if (malformed) return restError(400, malformedPathParameter(malformed));
  return matches.find((candidate) => candidate.route.method === method) ?? methodNotAllowed([...methodsOf(matches)].join(', '));
}

async function answerRoute(deps: RestDeps, request: Request, serverContext: object, match: MatchedRoute, served: Served) {
  const ignored: string[] = [];
  const prepared = await prepareRequest(deps.keys, request, match, served, ignored);
  if (prepared instanceof Response) return finishResponse(deps, request, prepared, match.route, ignored);
  // What fets' adapter gave a handler: the path parameters on the request, the server context isolated as whatwg-node does.
  Object.defineProperty(prepared, 'params', { value: match.params, configurable: true });
  const isolated = Object.defineProperties(Object.create(serverContext) as object, Object.getOwnPropertyDescriptors(serverContext));
  return finishResponse(deps, request, await served.handler(prepared, isolated), match.route, ignored);
}

export function useRestRoutes(deps: RestDeps): Plugin {
  let schema: GraphQLSchema | undefined;
  let door: Door | undefined;
  let getEnveloped: GetEnveloped | undefined;

  return {
    onYogaInit({ yoga }) {
      getEnveloped = yoga.getEnveloped;
    },
    onSchemaChange({ schema: changed }) {
      schema = changed;
      door = undefined;
    },
    onRequest({ request, url, serverContext, endResponse }) {
      const matches = matchPath(url.pathname);
      if (matches.length === 0) return undefined;
      const match = routeOrRefusal(matches, request.method);
      if (match instanceof Response) return endResponse(match);
      if (!schema || !getEnveloped) throw new Error('the REST layer was used before Yoga initialised it');
      door ??= openDoor(schema, getEnveloped);
      const served = door.get(match.route);
      // A documented route whose root field does not exist yet answers like any unknown path.
      if (!served) return endResponse(restError(404, noSuchPath()));
      // The database failed before Sofa ran (the key check): the same 503 as Sofa's errorHandler gives.
      return answerRoute(deps, request, serverContext, match, served)
        .catch((error: unknown) => unavailableAnswer(error, requestLogger(deps.logger, request)))
        .then(endResponse);
    },
  };
}
