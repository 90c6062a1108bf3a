// How a subscription is sent: GraphQL over Server-Sent Events in its "distinct connections" mode (one
// response per subscription, which graphql-sse's client and GraphiQL speak), as Yoga sends it, but
// with the heartbeat the deployment sets (SUBSCRIPTION_HEARTBEAT_MS) instead of Yoga's fixed one.
//
// The stream: a comment line at once (some clients see no headers until a byte arrives), then
// `event: next` with each result (with `id:`, the record event's id, which a client that reconnects
// sends back as Last-Event-ID: src/schema/subscriptions.ts), a comment line every heartbeat, and `event: complete` when the
// subscription ends (the client closed it, or the instance is shutting down: src/service.ts closes
// the live event hub first, which ends every stream). The HTTP server writes it as it comes
// (src/http/server.ts); nothing in front of it reads it whole (src/gateway/etags.ts, compression.ts).
import { type Plugin, processRegularResult } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import type { Context } from '../context.ts';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** What the request's subscription answers: Yoga hands the result processor the request, not the context. */
    subscriptionAnswering?: Context['answering'];
  }
}

/** The media type of a live stream; the plugins that read answers whole leave it alone. */
const EVENT_STREAM_TYPE = 'text/event-stream';

export function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith(EVENT_STREAM_TYPE);
}

const HEARTBEAT = ':\n\n';

/** What turns an operation's result into its answer (Yoga's type, which its index does not export). */
type ResultProcessor = Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor'] extends (
  processor: infer P,
  type: string,
) => void
  ? P
  : never;

/** An SSE field's value on one line: an event id is the service's own, but nothing in it may end the line. */
const oneLine = (value: string): string => value.replace(/[\r\n]/g, '');

/**
 * The SSE answer of one subscription: its results as they come, each with the id of the event it
 * answers (`eventIdOf`, read once the result is made), a heartbeat every `heartbeatMs`.
 */
function eventStreamOf(heartbeatMs: number, eventIdOf: () => string | undefined): ResultProcessor {
  return (result, fetchAPI) => {
    const results = (result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
    const encoder = new fetchAPI.TextEncoder();
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const body = new fetchAPI.ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(HEARTBEAT));
        heartbeat = setInterval(() => {
          if (controller.desiredSize === null) clearInterval(heartbeat);
          // A reader that has not taken the last heartbeat yet needs no other.
          else if (controller.desiredSize > 0) controller.enqueue(encoder.encode(HEARTBEAT));
        }, heartbeatMs);
      },
      async pull(controller) {
        const next = await results.next();
        if (next.done) {
          clearInterval(heartbeat);
          controller.enqueue(encoder.encode('event: complete\ndata:\n\n'));
          controller.close();
          return;
        }
        // Yoga's own serialisation of one result (internal error details left out), as a query's answer.
        const eventId = eventIdOf();
        const data = await processRegularResult(next.value, fetchAPI, 'application/json').text();
        controller.enqueue(encoder.encode(`${eventId ? `id: ${oneLine(eventId)}\n` : ''}event: next\ndata: ${data}\n\n`));
      },
      async cancel() {
        clearInterval(heartbeat);
        await results.return?.();
      },
    });
    return new fetchAPI.Response(body, {
      status: 200,
      headers: {
        'content-type': `${EVENT_STREAM_TYPE}; charset=utf-8`,
        'cache-control': 'no-store',
        // Proxies that buffer answers (nginx) would hold the events back.
        'x-accel-buffering': 'no',
      },
    });
  };
}

/** Sends subscriptions' streams with the deployment's heartbeat (Yoga has chosen SSE for them by then). */
export function useLiveStreams(heartbeatMs: number): Plugin {
  return {
    onSubscribe({ args }) {
      const { request, answering } = args.contextValue as Partial<Pick<Context, 'request' | 'answering'>>;
      if (request && answering) requestState(request).subscriptionAnswering = answering;
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      // A subscription's stream is only ever given Yoga's SSE processor; without one, the client
      // accepts no event stream and Yoga answers 406.
      const answering = requestState(request).subscriptionAnswering;
      if (!resultProcessor || !answering || !(Symbol.asyncIterator in Object(result))) return;
      setResultProcessor(
        eventStreamOf(heartbeatMs, () => answering.eventId),
        EVENT_STREAM_TYPE,
      );
    },
  };
}
