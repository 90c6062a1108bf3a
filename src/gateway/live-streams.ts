// Subscriptions as GraphQL over SSE ("distinct connections" mode), as Yoga sends them, but with the
// deployment's heartbeat (SUBSCRIPTION_HEARTBEAT_MS) instead of Yoga's fixed one, and each event's id.
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

const EVENT_STREAM_TYPE = 'text/event-stream';

const HEARTBEAT = ':\n\n';

/** Yoga's type, which its index does not export. */
type ResultProcessor = Parameters<Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor']>[0];

function eventStreamOf(heartbeatMs: number, eventIdOf: () => string | undefined): ResultProcessor {
  return (result, fetchAPI) => {
    const results = (result as AsyncIterable<ExecutionResult>)[Symbol.asyncIterator]();
    const encoder = new fetchAPI.TextEncoder();
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    const body = new fetchAPI.ReadableStream<Uint8Array>({
      start(controller) {
        // At once: some clients see no headers until a byte arrives.
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
        const eventId = eventIdOf();
        const data = await processRegularResult(next.value, fetchAPI, 'application/json').text();
        controller.enqueue(encoder.encode(`${eventId ? `id: ${eventId.replace(/[\r\n]/g, '')}\n` : ''}event: next\ndata: ${data}\n\n`));
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

export function useLiveStreams(heartbeatMs: number): Plugin {
  return {
    onSubscribe({ args }) {
      const { request, answering } = args.contextValue as Partial<Pick<Context, 'request' | 'answering'>>;
      if (request && answering) requestState(request).subscriptionAnswering = answering;
    },
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      // Without Yoga's processor the client accepts no event stream, and Yoga answers 406.
      const answering = requestState(request).subscriptionAnswering;
      if (!resultProcessor || !answering || !(Symbol.asyncIterator in Object(result))) return;
      setResultProcessor(
        eventStreamOf(heartbeatMs, () => answering.eventId),
        EVENT_STREAM_TYPE,
      );
    },
  };
}
