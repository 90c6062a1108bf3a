// Small Yoga plugins for the concerns both doors share: liveness/readiness, the body limit and the
// error model's code on GraphQL's own input errors (the request log: src/gateway/request-telemetry.ts).
import { GraphQLError, Kind, visit, type DocumentNode, type ExecutionResult } from 'graphql';
import { createGraphQLError, shouldRenderGraphiQL } from 'graphql-yoga';
import type { Plugin } from 'graphql-yoga';
import { connectionArgumentError, DATABASE_RETRY_AFTER_SECONDS, finishedError, variableInputError, withExtensions } from '../errors.ts';
import type { AppDeps } from './app.ts';
import { jsonResponse, restError } from '../rest/errors.ts';
import { finalBytes, peekRequestBody } from '../web/bodies.ts';
import { jsonNestingExceeds, nestingReason } from '../domain/input-limits.ts';
import { recordOf } from '../telemetry/request-record.ts';
import { carriesApiKey } from '../rest/routes.ts';
import { parsedUrl, Response } from '../web/fetch-api.ts';

/** `/ready` says 503 when the database has not answered its check within this long. */
const READY_TIMEOUT_MS = 800;

/**
 * `/health`: the process answers. `/ready`: and it is not shutting down, and its database answers.
 * While draining, `/ready` is 503 at once so a load balancer sends no new work; `/health` stays 200.
 */
export function useHealthChecks(deps: AppDeps): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET') return undefined;
      if (url.pathname === '/health') {
        endResponse(jsonResponse(200, { status: 'ok' }));
        return undefined;
      }
      if (url.pathname !== '/ready') return undefined;
      if (deps.lifecycle?.draining) {
        endResponse(jsonResponse(503, { status: 'draining' }));
        return undefined;
      }
      // Answered within READY_TIMEOUT_MS whatever the database does: a load balancer's probe has a
      // timeout of its own, and a database that does not answer must read as "not ready", not as a
      // probe that timed out.
      let timer: NodeJS.Timeout | undefined;
      const tooLate = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the database did not answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      });
      return Promise.race([deps.db.$queryRaw`SELECT 1`, tooLate])
        .then(
          () => endResponse(jsonResponse(200, { status: 'ready' })),
          (error: unknown) => {
            deps.logger.warn({ err: error }, 'readiness check failed');
            endResponse(jsonResponse(503, { status: 'unavailable' }, { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }));
          },
        )
        .finally(() => clearTimeout(timer));
    },
  };
}

/**
 * Refuses bodies over the limit by their declared length before anything reads them. Bodies sent
 * without a length (chunked) are counted by the HTTP server in src/http/server.ts. A request without
 * a key gets the far smaller anonymous limit: nothing a keyless caller may do needs a large body, and
 * a large one would otherwise be read and parsed (a GraphQL document) before anyone asked for a key.
 */
export function useBodyLimit(limitBytes: number, anonymousLimitBytes: number = limitBytes): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      const declared = Number(request.headers.get('content-length') ?? '0');
      const limit = bodyLimitOf(request.headers, url, limitBytes, anonymousLimitBytes);
      if (declared > limit) endResponse(bodyTooLarge(limit, limit < limitBytes));
    },
  };
}

/** The body limit of a request: the anonymous one unless it presents an API key (carriesApiKey). */
export function bodyLimitOf(headers: Headers, url: URL, limitBytes: number, anonymousLimitBytes: number): number {
  return carriesApiKey(headers, url) ? limitBytes : Math.min(limitBytes, anonymousLimitBytes);
}

function bodyTooLarge(limit: number, anonymous: boolean): Response {
  const message = anonymous
    ? `The request body is over ${limit} bytes, the limit for a request without an API key.`
    : `The request body is over ${limit} bytes.`;
  return restError(413, { error: 'payload_too_large', message });
}

/** The argument each variable is passed to directly (`update_car(car: $input)`: input is car). */
function argumentsByVariable(document: DocumentNode): Map<string, string> {
  const names = new Map<string, string>();
  visit(document, {
    Argument(node) {
      if (node.value.kind === Kind.VARIABLE && !names.has(node.value.name.value)) names.set(node.value.name.value, node.name.value);
    },
  });
  return names;
}

/**
 * Gives GraphQL's input errors the error model's code and field on /graphql (the REST door words
 * them itself, src/rest/errors.ts), so a missing or malformed argument is BAD_USER_INPUT naming the
 * argument on both doors, whether the schema or a domain rule refuses it. A connection argument the
 * Pothos plugins refused (an unreadable cursor, `first: -1`) is coded here too, as the operation
 * ends and before the masking: a client's mistake is never masked, nor logged as the service's.
 */
export function useInputErrorCodes(): Plugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          if (!('errors' in result) || !result.errors?.length) return;
          let changed = false;
          const errors = result.errors.map((error) => {
            const refusedArgument = connectionArgumentError(error);
            if (refusedArgument) {
              changed = true;
              return refusedArgument;
            }
            const input = error.extensions?.code === undefined ? variableInputError(error) : null;
            if (!input) return error;
            changed = true;
            const argument = argumentsByVariable(args.document).get(input.variable) ?? input.variable;
            return withExtensions(error, {
              ...error.extensions,
              code: 'BAD_USER_INPUT',
              error: 'invalid_input',
              field: argument + input.field.slice(input.variable.length),
            });
          });
          if (changed) setResult({ ...result, errors });
        },
      };
    },
  };
}

/** One answer's errors finished (finishedError); the same answer when none changed. */
function finishedResult<T extends ExecutionResult>(result: T): T {
  if (!result.errors?.length) return result;
  let changed = false;
  const errors = result.errors.map((error) => {
    if (!(error instanceof GraphQLError)) return error;
    const finished = finishedError(error, 'BAD_REQUEST');
    if (finished !== error) changed = true;
    return finished;
  });
  return changed ? { ...result, errors } : result;
}

/**
 * The one place every GraphQL answer's errors pass on their way out (parse and validation errors,
 * errors met while executing, the plugins' own): each carries `extensions.code` (the Pothos relay
 * plugin's connection-argument refusals become BAD_USER_INPUT naming the argument; anything else
 * still without a code is BAD_REQUEST, a request GraphQL refused) and no raw control character in
 * its message (a message may echo what the client sent). Masked errors already carry a code.
 */
export function useErrorCodes(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) {
        const finished = result.map(finishedResult);
        if (finished.some((answer, index) => answer !== result[index])) setResult(finished);
      } else if (!(Symbol.asyncIterator in result)) {
        const finished = finishedResult(result);
        if (finished !== result) setResult(finished);
      }
    },
  };
}

/** The GraphQL parameter (or `body`) whose JSON nests deeper than MAX_BODY_DEPTH, if any. */
async function tooDeeplyNested(request: Request): Promise<string | null> {
  if (request.method === 'POST') return jsonNestingExceeds(await peekRequestBody(request)) ? 'body' : null;
  const params = parsedUrl(request).searchParams;
  for (const name of ['variables', 'extensions']) {
    const value = params.get(name);
    if (value !== null && jsonNestingExceeds(value)) return name;
  }
  return null;
}

/**
 * GraphQL parameters that are not JSON (`/graphql?query={__typename}&variables={`) are the client's
 * mistake: 400, not the 500 Yoga's request parsers answer when JSON.parse throws inside them.
 */
export function useReadableGraphQLParams(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        // Before the parser, which recurses over the JSON: a body nested thousands deep would
        // otherwise exhaust the stack (a 500) before the input checks could refuse it.
        const nested = await tooDeeplyNested(request);
        if (nested) {
          throw createGraphQLError(`${nested}: ${nestingReason()}`, {
            extensions: { http: { status: 422 }, code: 'BAD_USER_INPUT', error: 'invalid_input', field: nested },
          });
        }
        try {
          return await requestParser(request);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          throw createGraphQLError('The GraphQL parameters are not valid JSON (variables and extensions must be JSON objects).', {
            extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
          });
        }
      });
    },
  };
}

/** Whether the hook's `url` is already a parsed URL (mutable), rather than the server adapter's lazy stand-in. */
function isParsedUrl(url: URL): boolean {
  // The adapter passes a Proxy over a plain object until some hook reads the URL; reading it then
  // parses the current request's URL. Once parsed, it is a real URL that setRequest does not update.
  return Object.getPrototypeOf(url) !== Object.prototype;
}

/**
 * HTTP as clients and load balancers expect it, on every path of both doors:
 * - HEAD is answered wherever GET is, as the GET (same status and headers, Content-Length included),
 *   without the body;
 * - a trailing slash on a path answers like the path without it (`/health/`, `/api/v1/leads/`): the
 *   request is handled as if sent without it, not redirected, so a POST's body is not lost to a client
 *   that does not follow redirects;
 * - every 404, unknown paths included, has the JSON error body and content type.
 * `first` must be the first plugin (every later one sees the rewritten request) and `last` the last
 * (it sees the final answer, after ETags and compression).
 */
export function useHttpConventions(): { first: Plugin; last: Plugin } {
  const headRequests = new WeakSet<Request>();
  return {
    first: {
      onRequest({ request, setRequest, url }) {
        const { pathname } = parsedUrl(request);
        const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') || '/' : pathname;
        const isHead = request.method === 'HEAD';
        if (!isHead && trimmed === pathname) return;
        const target = new URL(request.url);
        target.pathname = trimmed;
        const rewritten = new Request(target, {
          method: isHead ? 'GET' : request.method,
          headers: request.headers,
          body: isHead ? null : request.body,
          signal: request.signal,
          // A streamed body must say it is sent half-duplex (the WHATWG fetch rule Node follows).
          ...(request.body && !isHead ? { duplex: 'half' } : {}),
        } as RequestInit);
        if (isHead) headRequests.add(rewritten);
        setRequest(rewritten);
        if (isParsedUrl(url)) url.pathname = trimmed;
      },
    },
    last: {
      async onResponse({ request, response, setResponse }) {
        let answer = response;
        if (answer.status === 404 && !(answer.headers.get('content-type') ?? '').includes('json')) {
          const headers = new Headers(answer.headers);
          headers.set('content-type', 'application/json; charset=utf-8');
          headers.delete('content-length');
          // Built after the request record's error bodies are stamped (src/telemetry), so it is stamped here.
          const record = recordOf(request);
          if (record) record.errorCode ??= 'not_found';
          answer = new Response(
            JSON.stringify({ error: 'not_found', message: 'No such path.', ...(record ? { request_id: record.id } : {}) }),
            { status: 404, headers },
          );
        }
        if (headRequests.has(request)) {
          const length = answer.body ? (await finalBytes(answer)).byteLength : 0;
          const headers = new Headers(answer.headers);
          if (!headers.has('content-length')) headers.set('content-length', String(length));
          answer = new Response(null, { status: answer.status, headers });
        }
        if (answer !== response) setResponse(answer);
      },
    },
  };
}

/** The media types Yoga can answer a (non-streamed) GraphQL result in, in its own order of preference. */
const GRAPHQL_ANSWER_TYPES = ['text/event-stream', 'multipart/mixed', 'application/graphql-response+json', 'application/json'] as const;

/**
 * Whether Yoga will find a way to answer this Accept header: the same reading as its result
 * processors (graphql-yoga's result-processor/accept.js: only UTF-8, wildcards on the asked side,
 * no header means anything), which it applies only once the operation has run.
 */
function acceptsGraphQLAnswer(accept: string | null): boolean {
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',');
  return asked.some((entry) => {
    const [mediaType = '', ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') return false;
    const [type, subtype] = mediaType.split('/');
    return GRAPHQL_ANSWER_TYPES.some((offered) => {
      const [offeredType, offeredSubtype] = offered.split('/');
      return (type === '*' || type === offeredType) && (subtype === '*' || subtype === offeredSubtype);
    });
  });
}

/**
 * Content negotiation on /graphql is decided before anything runs. Yoga picks how to answer from
 * Accept only after executing, so a mutation asked for with `Accept: text/html` committed and was
 * then answered 406: the client never learned its write happened. Here an Accept header Yoga could
 * not satisfy is refused (406, nothing run) first; a GET that GraphiQL answers is left to it.
 * The REST door always answers JSON, whatever Accept says (RFC 9110 lets a server disregard it),
 * so it has nothing to refuse.
 */
export function useGraphQLAccept(graphqlEndpoint: string, explorers: boolean): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== graphqlEndpoint || (request.method !== 'GET' && request.method !== 'POST')) return;
      if (explorers && shouldRenderGraphiQL(request)) return;
      if (acceptsGraphQLAnswer(request.headers.get('accept'))) return;
      endResponse(
        jsonResponse(
          406,
          {
            errors: [
              {
                message: `Accept admits none of the media types a GraphQL answer is sent in: ${GRAPHQL_ANSWER_TYPES.join(', ')}.`,
                extensions: { code: 'NOT_ACCEPTABLE', error: 'not_acceptable' },
              },
            ],
          },
          { accept: 'application/graphql-response+json, application/json' },
        ),
      );
    },
  };
}
