// Counts each call made with a valid API key, by operation, door and status, into the key call log
// (src/domain/api-key-calls.ts) that `npm run keys -- audit` reads. One plugin for both doors: the
// REST door's routes run the same GraphQL root fields, so a call counts under the same operation
// whichever door it came through.
//
// - The operation is the root field(s) of the operation in the request record (src/telemetry): the
//   one it executed, or the one whose answer the answer cache served (a GraphQL document asking for
//   two counts once under each). A REST call refused before it ran (403, 422) counts under its route's
//   field, a request to no route under NO_OPERATION.
// - The status is the HTTP status on REST; on GraphQL, which answers errors with 200, the status the
//   REST door gives the same first error, so both doors' refusals read alike.
// - Only requests whose key was verified and accepted are counted: a refused key has no key id
//   (the rate limits count those per address), and a request turned away before its key was looked
//   at is not counted either (the per-address limit, a body over the limit, a GraphQL document that
//   does not parse or validate): looking keys up for those would spend the work they were refused
//   to save.
// Recording is a Map increment in the answer's path; the writes happen in the log's flushes.
import { getOperationAST, Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { presentedKeyVerdict, sentRequest, type Context } from '../context.ts';
import { NO_OPERATION, type KeyCallLog } from '../domain/api-key-calls.ts';
import { restStatusOf } from '../rest/errors.ts';
import { matchPath } from '../rest/routes.ts';
import { recordOf } from '../telemetry/request-record.ts';
import { parsedUrl } from '../web/fetch-api.ts';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** On the request as the client sent it: the status the REST door gives the first GraphQL error. */
    executionErrorStatus?: number;
  }
}

function collectRootFields(
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  into: Set<string>,
  seen: Set<string>,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (!selection.name.value.startsWith('__')) into.add(selection.name.value);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectRootFields(selection.selectionSet, fragments, into, seen);
    } else {
      const fragment = fragments.get(selection.name.value);
      if (fragment && !seen.has(fragment.name.value)) {
        seen.add(fragment.name.value);
        collectRootFields(fragment.selectionSet, fragments, into, seen);
      }
    }
  }
}

/** The root fields the document's chosen operation asks for (introspection aside), in document order. */
export function rootFieldsOf(document: DocumentNode, operationName: string | null | undefined): string[] {
  const operation = getOperationAST(document, operationName);
  if (!operation) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const fields = new Set<string>();
  collectRootFields(operation.selectionSet, fragments, fields, new Set());
  return [...fields];
}

/** The root field a REST path and method answer, when the path is a route's. */
function routeOperation(method: string, pathname: string): string | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const field = matchPath(pathname).find((match) => match.route.method === wanted)?.route.field;
  return field?.slice(field.indexOf('.') + 1);
}

export function useKeyCallLog(log: KeyCallLog, graphqlEndpoint: string): Plugin {
  // Yoga's parse cache hands out the same document for the same text, so a repeated query's root
  // fields are worked out once.
  const fieldsByDocument = new WeakMap<DocumentNode, Map<string, string[]>>();
  const rootFieldsCached = (document: DocumentNode, operationName: string | null | undefined): string[] => {
    let byName = fieldsByDocument.get(document);
    if (!byName) {
      byName = new Map();
      fieldsByDocument.set(document, byName);
    }
    let fields = byName.get(operationName ?? '');
    if (!fields) {
      fields = rootFieldsOf(document, operationName);
      byName.set(operationName ?? '', fields);
    }
    return fields;
  };
  return {
    // Before the query limits, the rate limits and the cache: an operation they refuse or answer is
    // still seen here, and their result reaches onExecuteDone.
    onExecute({ args }) {
      const context = args.contextValue as Partial<Context>;
      if (!context.actor || !context.request) return undefined;
      // Under the request as the client sent it, which onResponse is given (the REST door rebuilds it).
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
          // The operation the request record holds: the one executed, or the one whose answer the
          // answer cache served (src/gateway/answer-cache.ts).
          const ran = recordOf(request)?.operation;
          const ranFields = ran ? rootFieldsCached(ran.document, ran.operationName) : [];
          const operations =
            ranFields.length > 0 ? ranFields : [(door === 'rest' && routeOperation(request.method, pathname)) || NO_OPERATION];
          for (const operation of operations) log.record({ apiKeyId: actor.apiKeyId, operation, door, status });
        },
        // A verification that failed (the database down) was answered as such; there is no key to count under.
        () => undefined,
      );
    },
  };
}
