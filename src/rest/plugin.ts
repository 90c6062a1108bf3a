// The REST door inside Yoga, for the documented paths only: each route runs the document Sofa builds
// for its root field over a schema filtered to the routed root fields (src/rest/route-execution.ts),
// and requests reach it only when their path is in the route table; every other path goes on to
// Yoga, which answers 404.
//
// Before the operation runs: a ?token= moves into the Authorization header where the route allows
// it, the caller's key and permission are checked, form bodies are turned into JSON, every argument's
// JSON type is checked against the root field's (src/rest/arguments.ts) and typed parameters are
// parsed (422 names the bad one). A path parameter that does not decode is a 400 before all that.
// After, a 302 route's {"location"} becomes a real redirect and deprecated routes get their headers.
import type { ExecutionArgs, ExecutionResult, GraphQLField, GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { actorFromRequest, carryActor, rebuiltFrom } from '../context.ts';
import type { Logger } from 'pino';
import type { KeyVerifier } from '../auth/key-cache.ts';

import { requestLogger } from '../telemetry/request-record.ts';
import { logError, permissionDenied, unauthenticated } from '../errors.ts';
import { matchPath, parseParam, restRoutes, type MatchedRoute } from './routes.ts';
import { accessOfField, refusalOf } from '../auth/field-access.ts';
import { readRestArguments } from './arguments.ts';
import { railsFormBody } from './form-body.ts';
import { restError, restErrorResponse } from './errors.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { restSchema } from './rest-schema.ts';
import { jsonNestingExceeds, nestingReason } from '../domain/input-limits.ts';
import { deprecationHeaders } from './deprecation.ts';
import { requestOver, Response } from '../web/fetch-api.ts';
import { cutText, headerValue } from '../web/header-value.ts';
import { REFUSED_KEY_REASON, refusedKeyIn, refusedName } from '../web/refused-keys.ts';
import { LOGGED_STRING_MAX } from '../logger.ts';
import { routeOperations, runRoute, type RouteInput, type RouteOperation, type RouteRunner } from './route-execution.ts';

/** What the REST door needs of the service: the key verifier and the log. */
interface RestDeps {
  keys: KeyVerifier;
  logger: Logger;
}

type GetEnveloped = Parameters<NonNullable<Plugin['onYogaInit']>>[0]['yoga']['getEnveloped'];
type Enveloped = ReturnType<GetEnveloped>;

/** The request the operation runs with and what it reads, or the response that ends it here; `ignored` collects what it skipped. */
interface Prepared {
  request: Request;
  input: RouteInput;
}

async function prepareRequest(
  deps: RestDeps,
  request: Request,
  { route, params }: MatchedRoute,
  field: GraphQLField<unknown, unknown>,
  ignored: string[],
): Promise<Prepared | Response> {
  const url = new URL(request.url);
  // Copied only when the request the operation runs with must differ from the one sent.
  let headers = request.headers;
  const ownHeaders = (): Headers => {
    if (headers === request.headers) headers = new Headers(request.headers);
    return headers;
  };
  let caller = request;
  if (route.tokenInQuery) {
    const token = url.searchParams.get('token');
    url.searchParams.delete('token');
    // A key is printable ASCII; anything else cannot be one (nor go in a header): no key, so 401.
    if (token && /^[\x21-\x7e]+$/.test(token) && !headers.has('authorization')) {
      ownHeaders().set('authorization', `Bearer ${token}`);
      // The key is checked as if sent in the header (a Request is built only then: each one costs).
      caller = requestOver(url, request.method, headers);
      rebuiltFrom(request, caller);
    }
  }
  // Who may call comes first: a caller without a valid key or permission learns nothing about the input.
  const refused = await refuseCaller(deps, caller, field);
  if (refused) return refused;

  const refusedQuery = refusedQueryParameter(url.searchParams);
  if (refusedQuery) return refusedQuery;
  const read = await readBody(request, route, headers);
  if (read instanceof Response) return read;
  const args = readRestArguments(field, {
    pathParams: params,
    query: url.searchParams,
    body: read,
    alsoRead: Object.keys(route.params ?? {}),
  });
  ignored.push(...args.ignored);
  if (args.problem) {
    const { field: name, reason } = args.problem;
    return restError(422, { error: 'invalid_input', message: `${name}: ${reason}`, field: name });
  }
  for (const name of args.readFromQuery) {
    for (const key of [...url.searchParams.keys()]) if (key === name || key.startsWith(`${name}[`)) url.searchParams.delete(key);
  }
  const body = args.body === undefined ? undefined : JSON.stringify(args.body);
  if (body !== undefined) ownHeaders().set('content-type', 'application/json');

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
  const input: RouteInput = { pathParams: params, search: url.href.split('?')[1], body };
  // A GET whose URL and headers stay as sent (most reads) runs with the request itself: no copy to build.
  const asSent = caller === request && headers === request.headers && url.href === request.url;
  if (asSent && request.method === 'GET' && body === undefined && !headers.has('content-length')) return { request, input };
  if (headers.has('content-length')) ownHeaders().delete('content-length');
  const prepared = requestOver(url, request.method, headers, body);
  carryActor(caller, prepared);
  return { request: prepared, input };
}

/**
 * The 422 of a query parameter that cannot be read safely, or null: one whose JSON text (lead events'
 * ?data={…}) nests too deep, measured before anything parses it; one whose name, read by its brackets
 * as the arguments' reading and qs read it, or whose JSON text has a key no input may have
 * (src/web/refused-keys.ts). Every parameter is checked, read or not, before anything reads one.
 */
function refusedQueryParameter(query: URLSearchParams): Response | null {
  for (const [name, value] of query) {
    const refused = refusedName(name);
    if (refused) return refusedKeyError(refused);
    if (!/^\s*[[{]/.test(value)) continue;
    if (jsonNestingExceeds(value)) {
      const field = cutText(name, IGNORED_HEADER_NAME_LENGTH);
      return restError(422, { error: 'invalid_input', message: `${field}: ${nestingReason()}`, field });
    }
    const inText = refusedKeyIn(jsonOrUndefined(value), name);
    if (inText) return refusedKeyError(inText);
  }
  return null;
}

/** The 422 naming the place of a key no input may have (`lead.__proto__`), cut like any name from the request. */
function refusedKeyError(place: string): Response {
  const field = cutText(place, IGNORED_HEADER_NAME_LENGTH);
  return restError(422, { error: 'invalid_input', message: `${field}: ${REFUSED_KEY_REASON}`, field });
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined; // not JSON: text, which no parser reads into an object
  }
}

/**
 * The body as JSON, or the 400/422 that ends the request: JSON; a form (application/x-www-form-urlencoded)
 * where the route accepts one; multipart/form-data with Rails-style keys where the route takes a body.
 */
async function readBody(request: Request, route: MatchedRoute['route'], headers: Headers): Promise<unknown> {
  if (request.method === 'GET' || request.body === null) return undefined;
  const contentType = (headers.get('content-type') ?? '').toLowerCase();
  if (route.body && contentType.startsWith('multipart/form-data')) {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return restError(400, { error: 'malformed_request', message: 'The multipart/form-data body could not be read.' });
    }
    const parsed = await railsFormBody(form);
    if ('problem' in parsed) {
      const { field: name, reason } = parsed.problem;
      return restError(422, { error: 'invalid_input', message: `${name}: ${reason}`, field: name });
    }
    return parsed.body;
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
  if (jsonNestingExceeds(text)) return restError(422, { error: 'invalid_input', message: `body: ${nestingReason()}`, field: 'body' });
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    return restError(400, { error: 'malformed_json', message: 'The request body is not valid JSON.' });
  }
  const refused = refusedKeyIn(body);
  return refused ? refusedKeyError(refused) : body;
}

/** How ignored parameters are named in X-Ignored-Parameters: at most this many, each this long, ASCII. */
const IGNORED_HEADER_NAMES = 20;
const IGNORED_HEADER_NAME_LENGTH = 100;
/** How many ignored names the log line names (each cut to LOGGED_STRING_MAX); ignored_count says how many there were. */
const IGNORED_LOGGED_NAMES = 20;

/** Each name percent-encoded (so `%` and the `,` between names too), cut on a code point: never throws. */
function ignoredParametersHeader(ignored: readonly string[]): string {
  return ignored
    .slice(0, IGNORED_HEADER_NAMES)
    .map((name) => headerValue(name, { maxCodePoints: IGNORED_HEADER_NAME_LENGTH, alsoEscape: '%,' }))
    .join(', ');
}

async function finishResponse(response: Response, route: MatchedRoute['route']): Promise<Response> {
  let result = response;
  if (route.successStatus === 302 && response.status === 302) {
    const { location } = (await response.json()) as { location: string };
    // The location is built from stored text (a slug): made header-safe, so the answer cannot fail.
    result = new Response(null, { status: 302, headers: { location: headerValue(location), 'cache-control': 'no-store' } });
  }
  if (route.deprecated) {
    const headers = new Headers(result.headers);
    const values = deprecationHeaders(route.deprecated);
    headers.set('deprecation', values.deprecation);
    headers.set('sunset', values.sunset);
    if (values.link) headers.set('link', values.link);
    result = new Response(result.body, { status: result.status, headers });
  }
  return result;
}

/**
 * Who may call the route, checked before its input is read: a caller without a valid key (401) or
 * without a permission the root field declares (its deniedStatus, else 403; src/auth/field-access.ts)
 * learns nothing about the shape of the input. The same declaration guards the field on /graphql.
 */
async function refuseCaller(deps: RestDeps, request: Request, field: GraphQLField<unknown, unknown>): Promise<Response | null> {
  const fieldAccess = accessOfField(field);
  if (fieldAccess.access === 'public') return null;
  const actor = await actorFromRequest(deps.keys, request);
  if (!actor) return restErrorResponse([unauthenticated()]);
  const refused = refusalOf(fieldAccess, actor.permissions);
  // Only a further permission is named: the operation's own is in its documentation.
  return refused ? restErrorResponse([permissionDenied(refused.status, refused.further)]) : null;
}

/** Yoga's envelope, once Yoga is initialised. */
interface YogaEnvelope {
  getEnveloped: GetEnveloped | undefined;
}

/** Runs route operations in Yoga's envelope: its context factory, then its execute, as for /graphql. */
function envelopeRunner(served: GraphQLSchema, envelope: YogaEnvelope, serverContext: unknown): RouteRunner {
  return {
    schema: served,
    async contextFor(request) {
      if (!envelope.getEnveloped) throw new Error('the REST layer was used before Yoga initialised it');
      // As under Sofa (whose server adapter isolated the server context): a context over Yoga's, with
      // its own copy of the fields and the request the operation runs with, leaving Yoga's unchanged.
      const withRequest = Object.assign(Object.create(serverContext as object) as object, serverContext, { request });
      const enveloped: Enveloped = envelope.getEnveloped(withRequest);
      const contextValue = (await enveloped.contextFactory(withRequest)) as object;
      return { contextValue, execute: (args: ExecutionArgs) => enveloped.execute(args) as Promise<ExecutionResult> };
    },
    errorResponse: restErrorResponse,
  };
}

/** The REST door over the current schema: the filtered schema, each route's operation and root field (whose arguments the door reads). */
interface Door {
  served: GraphQLSchema;
  operations: Map<string, RouteOperation>;
  rootFields: Map<string, GraphQLField<unknown, unknown>>;
}

/**
 * The routes' operations and root fields, both of the REST schema: its types are what REST bodies are
 * read as (an enum of spec values is their text there, src/rest/rest-schema.ts). Built for the first
 * REST request, not at start-up: it costs more CPU than the rest of the start, and a /graphql-only
 * instance never needs it.
 */
function openDoor(current: GraphQLSchema): Door {
  const served = restSchema(current);
  const rootFields = new Map(
    restRoutes.flatMap((route) => {
      const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
      const field = (operation === 'Query' ? served.getQueryType() : served.getMutationType())?.getFields()[name];
      return field ? [[route.field, field] as const] : [];
    }),
  );
  return { served, operations: routeOperations(served, restRoutes), rootFields };
}

/** The route the request's path and method name, or the 400 (undecodable path parameter) or 405 (other method) that ends it. */
function routeOrRefusal(matches: readonly MatchedRoute[], method: string): MatchedRoute | Response {
  // A path parameter that is not percent-encoded UTF-8 cannot name anything: refused before any other work.
  const malformed = matches.find((candidate) => candidate.malformedParam)?.malformedParam;
  if (malformed) {
    return restError(400, { error: 'malformed_request', message: `The path parameter ${malformed} is not valid percent-encoded UTF-8.` });
  }
  const match = matches.find((candidate) => candidate.route.method === method);
  if (!match) {
    const methods = new Set<string>(matches.map((candidate) => candidate.route.method));
    // HEAD is answered wherever GET is (useHttpConventions).
    if (methods.has('GET')) methods.add('HEAD');
    const allow = [...methods].join(', ');
    return restError(405, { error: 'method_not_allowed', message: `Use ${allow} for this path.` }, { allow });
  }
  return match;
}

/** The answer with X-Ignored-Parameters, and the log line that names them. */
function withIgnoredParameters(
  deps: RestDeps,
  request: Request,
  pathname: string,
  response: Response,
  ignored: readonly string[],
): Response {
  // Like Rails' strong parameters: unknown keys are skipped, and said so, never applied.
  // The names are the caller's text: a few, each cut, so one request cannot write a huge line.
  const logged = ignored.slice(0, IGNORED_LOGGED_NAMES).map((name) => cutText(name, LOGGED_STRING_MAX));
  requestLogger(deps.logger, request).info(
    { method: request.method, path: cutText(pathname, LOGGED_STRING_MAX), ignored: logged, ignored_count: ignored.length },
    'ignored parameters the operation does not take',
  );
  const headers = new Headers(response.headers);
  headers.set('x-ignored-parameters', ignoredParametersHeader(ignored));
  return new Response(response.body, { status: response.status, headers });
}

/** The answer of a routed request: checked and prepared here, run in Yoga's envelope, finished here. */
async function answerRoute(
  deps: RestDeps,
  request: Request,
  pathname: string,
  match: MatchedRoute,
  field: GraphQLField<unknown, unknown>,
  operation: RouteOperation,
  runner: RouteRunner,
): Promise<Response> {
  const ignored: string[] = [];
  const prepared = await prepareRequest(deps, request, match, field, ignored);
  // Refused before the operation or answered by it: a deprecated path says so to every caller.
  const response = await finishResponse(
    prepared instanceof Response ? prepared : await runRoute(runner, operation, prepared.request, prepared.input),
    match.route,
  );
  return ignored.length > 0 ? withIgnoredParameters(deps, request, pathname, response, ignored) : response;
}

export function useRestRoutes(deps: RestDeps): Plugin {
  let schema: GraphQLSchema | undefined;
  let door: Door | undefined;
  const envelope: YogaEnvelope = { getEnveloped: undefined };

  return {
    onYogaInit({ yoga }) {
      envelope.getEnveloped = yoga.getEnveloped;
    },
    onSchemaChange({ schema: changed }) {
      schema = changed;
      door = undefined;
    },
    onRequest({ request, url, endResponse, serverContext }) {
      const matches = matchPath(url.pathname);
      if (matches.length === 0) return undefined;
      const match = routeOrRefusal(matches, request.method);
      if (match instanceof Response) {
        endResponse(match);
        return undefined;
      }
      if (!schema) throw new Error('the REST layer has no schema yet');
      door ??= openDoor(schema);
      const field = door.rootFields.get(match.route.field);
      const operation = door.operations.get(match.route.field);
      // A documented route whose root field does not exist yet answers like any unknown path.
      if (!field || !operation) {
        endResponse(restError(404, { error: 'not_found', message: 'No such path.' }));
        return undefined;
      }
      const runner = envelopeRunner(door.served, envelope, serverContext);
      return (async () => {
        endResponse(await answerRoute(deps, request, url.pathname, match, field, operation, runner));
      })().catch((error: unknown) => {
        // The database did not answer while the caller or the arguments were being checked: the
        // REST door's 503 body, as for one met while the operation ran.
        if (!isDatabaseUnavailable(error)) throw error;
        logError(requestLogger(deps.logger, request), error, 'the database did not answer');
        endResponse(restErrorResponse([error]));
      });
    },
  };
}
