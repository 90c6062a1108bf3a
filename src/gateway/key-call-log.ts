// Counts each call of an accepted API key by root field, door and status, the same operation on either door. GraphQL's status is
// the one the REST door gives its first error, so the doors' refusals read alike. A request refused before its key was read is not counted.
import type { Plugin } from 'graphql-yoga';
import { presentedKeyVerdict, sentRequest, type Context } from '../context.ts';
import { NO_OPERATION, type KeyCallLog } from '../domain/api-key-calls.ts';
import { restStatusOf } from '../rest/errors.ts';
import { routeFor } from '../rest/routes.ts';
import { recordOf } from '../telemetry/request-record.ts';
import { parsedUrl } from '../web/fetch-api.ts';
import { requestState } from '../web/request-state.ts';
import { rootFieldNames } from './root-fields.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** On the request as the client sent it: the status the REST door gives the first GraphQL error. */
    executionErrorStatus?: number;
  }
}

export function useKeyCallLog(log: KeyCallLog, graphqlEndpoint: string): Plugin {
  return {
    // Before the limits and the cache, so what they refuse or answer still reaches onExecuteDone.
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context>;
      if (!context.actor || !context.request) return undefined;
      const sent = requestState(sentRequest(context.request));
      return {
        onExecuteDone({ result }) {
          const errors = 'errors' in result ? result.errors : undefined;
          if (errors && errors.length > 0) sent.executionErrorStatus ??= restStatusOf(errors[0]);
        },
      };
    },
    onResponse({ request, response }) {
      const verdict = presentedKeyVerdict(request);
      if (!verdict) return undefined;
      return verdict.then(
        (actor) => {
          if (!actor) return;
          const { pathname } = parsedUrl(request);
          const door = pathname === graphqlEndpoint ? 'graphql' : 'rest';
          const status = door === 'rest' || response.status !== 200 ? response.status : (requestState(request).executionErrorStatus ?? 200);
          // The one executed, or the one whose answer the answer cache served.
          const ran = recordOf(request)?.operation;
          const ranFields = ran ? rootFieldNames(ran.document, ran.operationName) : [];
          const routed = door === 'rest' ? routeFor(request.method, pathname)?.route.field.split('.')[1] : undefined;
          const operations = ranFields.length > 0 ? ranFields : [routed ?? NO_OPERATION];
          for (const operation of operations) log.record({ apiKeyId: actor.apiKeyId, operation, door, status });
        },
        () => undefined,
      );
    },
  };
}
