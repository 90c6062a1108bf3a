// Small Yoga plugins for what both doors share: health, body limits, error codes, HTTP conventions.
import { GraphQLError, Kind, visit, type DocumentNode, type ExecutionResult } from 'graphql';
import { createGraphQLError, shouldRenderGraphiQL } from 'graphql-yoga';
import type { Plugin } from 'graphql-yoga';
import { connectionArgumentError, DATABASE_RETRY_AFTER_SECONDS, finishedError, variableInputError, withExtensions } from '../errors.ts';
import type { AppDeps } from './app.ts';
import { jsonResponse, payloadTooLarge, restError } from '../rest/errors.ts';
import { finalBytes, peekRequestBody } from '../web/bodies.ts';
import { jsonNestingExceeds, nestingReason } from '../domain/input-limits.ts';
import { carriesApiKey } from '../rest/routes.ts';
import { parsedUrl, Response } from '../web/fetch-api.ts';
import { mapIncremental } from './incremental.ts';
import { acceptsAny } from '../web/accept.ts';
import { requestState } from '../web/request-state.ts';

const READY_TIMEOUT_MS = 800;

/** While draining, `/ready` is 503 at once so a load balancer sends no new work; `/health` stays 200. */
export function useHealthChecks(deps: AppDeps): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET') return undefined;
      if (url.pathname === '/health') return endResponse(jsonResponse(200, { status: 'ok' }));
      if (url.pathname !== '/ready') return undefined;
      if (deps.lifecycle?.draining) return endResponse(jsonResponse(503, { status: 'draining' }));
      // Bounded: a database that does not answer must read as "not ready", not as a probe that timed out.
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

/** Keyless callers get the smaller limit: nothing they may do needs a large body (chunked ones: src/http/server.ts). */
export function useBodyLimit(limitBytes: number, anonymousLimitBytes: number = limitBytes): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      const declared = Number(request.headers.get('content-length') ?? '0');
      const limit = bodyLimitOf(request.headers, url, limitBytes, anonymousLimitBytes);
      if (declared <= limit) return;
      const keyless = limit < limitBytes ? ', the limit for a request without an API key' : '';
      endResponse(restError(413, payloadTooLarge(limit, keyless)));
    },
  };
}

export function bodyLimitOf(headers: Headers, url: URL, limitBytes: number, anonymousLimitBytes: number): number {
  return carriesApiKey(headers, url) ? limitBytes : Math.min(limitBytes, anonymousLimitBytes);
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

/** The result with each error mapped, or the result itself when `map` changed none. */
export function mapErrors<T extends ExecutionResult>(result: T, map: (error: GraphQLError) => GraphQLError): T {
  if (!result.errors?.length) return result;
  const errors = result.errors.map(map);
  return errors.some((error, index) => error !== result.errors?.[index]) ? { ...result, errors } : result;
}

/** An onResultProcess hook mapping each result answered (each of a batch, each incremental payload); a subscription's are left alone. */
export function onEachResult(map: (result: ExecutionResult, request: Request) => ExecutionResult): NonNullable<Plugin['onResultProcess']> {
  return ({ request, result, setResult }) => {
    const payloads = mapIncremental(request, result, (single) => map(single, request));
    if (payloads) setResult(payloads);
    else if (Array.isArray(result)) {
      const mapped = result.map((single) => map(single, request));
      if (mapped.some((single, index) => single !== result[index])) setResult(mapped);
    } else if (!(Symbol.asyncIterator in result)) {
      const mapped = map(result, request);
      if (mapped !== result) setResult(mapped);
    }
  };
}

/** A client's input mistake is BAD_USER_INPUT naming the argument, as on REST, and never masked nor logged as ours. */
export function useInputErrorCodes(): Plugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          if (!('errors' in result)) return;
          const mapped = mapErrors(result, (error) => {
            const refusedArgument = connectionArgumentError(error);
            if (refusedArgument) return refusedArgument;
            const input = error.extensions?.code === undefined ? variableInputError(error) : null;
            if (!input) return error;
            const argument = argumentsByVariable(args.document).get(input.variable) ?? input.variable;
            return withExtensions(error, {
              ...error.extensions,
              code: 'BAD_USER_INPUT',
              error: 'invalid_input',
              field: argument + input.field.slice(input.variable.length),
            });
          });
          if (mapped !== result) setResult(mapped);
        },
      };
    },
  };
}

/** Every GraphQL answer's errors leave with a code and no raw control character (a message may echo the client). */
export function useErrorCodes(): Plugin {
  return {
    onResultProcess: onEachResult((result) =>
      mapErrors(result, (error) => (error instanceof GraphQLError ? finishedError(error, 'BAD_REQUEST') : error)),
    ),
  };
}

async function tooDeeplyNested(request: Request): Promise<string | null> {
  if (request.method === 'POST') return jsonNestingExceeds(await peekRequestBody(request)) ? 'body' : null;
  const params = parsedUrl(request).searchParams;
  for (const name of ['variables', 'extensions']) {
    const value = params.get(name);
    if (value !== null && jsonNestingExceeds(value)) return name;
  }
  return null;
}

/** Non-JSON GraphQL parameters are the client's mistake: 400, not the 500 Yoga's parsers answer. */
export function useReadableGraphQLParams(): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        // Before the parser, which recurses: a deeply nested body would exhaust the stack (a 500) first.
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

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The GET a HEAD request was rewritten to: its answer goes without its body. */
    head?: true;
  }
}

/** `first` must be the first plugin and `last` the last: it sees the final answer, after ETags and compression. */
export function useHttpConventions(): { first: Plugin; last: Plugin } {
  return {
    first: {
      onRequest({ request, setRequest, url }) {
        const { pathname } = parsedUrl(request);
        const trimmed = pathname.length > 1 ? pathname.replace(/\/+$/, '') || '/' : pathname;
        // Rewritten, not redirected: a POST's body is not lost to a client that does not follow redirects.
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
        if (isHead) requestState(rewritten).head = true;
        setRequest(rewritten);
        // The adapter's lazy Proxy parses on first read; once parsed, setRequest no longer updates it.
        if (Object.getPrototypeOf(url) !== Object.prototype) url.pathname = trimmed;
      },
    },
    last: {
      async onResponse({ request, response, setResponse }) {
        if (!requestState(request).head) return;
        const length = response.body ? (await finalBytes(response)).byteLength : 0;
        const headers = new Headers(response.headers);
        if (!headers.has('content-length')) headers.set('content-length', String(length));
        setResponse(new Response(null, { status: response.status, headers }));
      },
    },
  };
}

/** The media types Yoga can answer a (non-streamed) GraphQL result in, in its own order of preference. */
const GRAPHQL_ANSWER_TYPES = ['text/event-stream', 'multipart/mixed', 'application/graphql-response+json', 'application/json'] as const;

/** Refused before running: Yoga negotiates after executing, so a mutation would commit and then answer 406. */
export function useGraphQLAccept(graphqlEndpoint: string, explorers: boolean): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== graphqlEndpoint || (request.method !== 'GET' && request.method !== 'POST')) return;
      if (explorers && shouldRenderGraphiQL(request)) return;
      if (acceptsAny(request.headers.get('accept'), GRAPHQL_ANSWER_TYPES)) return;
      const message = `Accept admits none of the media types a GraphQL answer is sent in: ${GRAPHQL_ANSWER_TYPES.join(', ')}.`;
      const body = { errors: [{ message, extensions: { code: 'NOT_ACCEPTABLE', error: 'not_acceptable' } }] };
      endResponse(jsonResponse(406, body, { accept: 'application/graphql-response+json, application/json' }));
    },
  };
}
