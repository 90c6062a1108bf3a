// @defer and @stream on /graphql: Yoga's plugin validates them and graphql-tools' executor answers such an
// operation as payloads, which Yoga sends as multipart/mixed or as SSE by Accept. Only what Yoga leaves
// undone is here: it masks and codes the errors of a payload's top level, never those inside `incremental`.
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createGraphQLError, isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import { BREAK, visit, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import { sentRequest, type Context } from '../context.ts';
import { logError, maskUnexpectedError } from '../errors.ts';
import { requestState } from '../web/request-state.ts';
import { acceptsAny } from '../web/accept.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** The operation answered payloads (@defer, @stream): its answer is a stream that ends with its last. */
    incremental?: true;
  }
}

const INCREMENTAL_ANSWER_TYPES = ['multipart/mixed', 'text/event-stream'] as const;

const STREAMED_TYPES = /^(multipart\/mixed|text\/event-stream)\b/i;

/** An answer sent as its parts come (payloads, events): never read whole, digested, compressed or kept. */
export function isStreamedAnswer(response: Response): boolean {
  return STREAMED_TYPES.test(response.headers.get('content-type') ?? '');
}

// Yoga reuses a parsed document for every request that sends its text: each one is walked once.
const asksByDocument = new WeakMap<DocumentNode, boolean>();

export function asksIncrementalDelivery(document: DocumentNode): boolean {
  const known = asksByDocument.get(document);
  if (known !== undefined) return known;
  let asks = false;
  visit(document, {
    Directive(node) {
      if (node.name.value !== 'defer' && node.name.value !== 'stream') return undefined;
      asks = true;
      return BREAK;
    },
  });
  asksByDocument.set(document, asks);
  return asks;
}

/** One payload after the first: its parts, each with the errors met while completing it. */
interface IncrementalPayload extends ExecutionResult {
  hasNext?: boolean;
  incremental?: readonly (ExecutionResult & { path?: readonly (string | number)[] })[];
}

type ResultMap = (result: ExecutionResult) => ExecutionResult;

function mapParts(payload: IncrementalPayload, map: ResultMap): IncrementalPayload {
  if (!payload.incremental?.some((part) => part.errors?.length)) return payload;
  return { ...payload, incremental: payload.incremental.map((part) => (part.errors?.length ? { ...part, ...map(part) } : part)) };
}

/** Each payload of an incremental answer mapped; any other stream (a subscription's) is not one. */
export function mapIncremental(request: Request, result: unknown, map: ResultMap): AsyncIterable<ExecutionResult> | null {
  if (!requestState(sentRequest(request)).incremental || !isAsyncIterable<IncrementalPayload>(result)) return null;
  return mapAsyncIterator(result[Symbol.asyncIterator](), (payload) => mapParts(map(payload), map));
}

/** Each payload's parts masked as Yoga masks a payload's top-level errors, and logged as it logs them, under the request's logger. */
function maskedPayloads({ logger }: Partial<Context>) {
  const masked: ResultMap = (result) => {
    if (!result.errors?.length) return result;
    const errors = result.errors.map((error) => {
      const unexpected = maskUnexpectedError(error, 'Unexpected error.') as GraphQLError;
      if (unexpected !== error && logger) logError(logger, error, 'an unexpected error in a deferred part');
      return unexpected;
    });
    return { ...result, errors };
  };
  return {
    onNext({ result, setResult }: { result: ExecutionResult; setResult(result: ExecutionResult): void }) {
      const mapped = mapParts(result, masked);
      if (mapped !== result) setResult(mapped);
    },
  };
}

export function useIncrementalDelivery(): Plugin<Record<string, unknown>> {
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(useDeferStream());
    },
    // A subscription's events may be payloads too (each event its own); its stream is otherwise left as it is.
    onSubscribe({ args }) {
      if (!asksIncrementalDelivery(args.document)) return undefined;
      const payloads = maskedPayloads(args.contextValue as Partial<Context>);
      return { onSubscribeResult: () => payloads };
    },
    onExecute({ args, setResultAndStopExecution }) {
      const { request } = args.contextValue as Partial<Context>;
      if (!request || !asksIncrementalDelivery(args.document)) return undefined;
      // Refused before running (and, by its place in yoga.ts, before it is costed or charged): a mutation would commit, then 406.
      if (!acceptsAny(request.headers.get('accept'), INCREMENTAL_ANSWER_TYPES)) {
        const message = `@defer and @stream answer in ${INCREMENTAL_ANSWER_TYPES.join(' or ')}, which Accept does not admit.`;
        const extensions = { http: { status: 406 }, code: 'NOT_ACCEPTABLE', error: 'not_acceptable' };
        setResultAndStopExecution({ errors: [createGraphQLError(message, { extensions })] });
        return undefined;
      }
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return undefined;
          requestState(sentRequest(request)).incremental = true;
          return maskedPayloads(args.contextValue as Partial<Context>);
        },
      };
    },
  };
}
