// Production mode (NODE_ENV=production) keeps the GraphQL schema from being mapped by strangers:
// introspection (`__schema`, `__type`) answers only a key holding `read:schema`, and error messages
// carry no "Did you mean …?" suggestions, which would otherwise spell out field and type names one
// guess at a time. Development keeps both, for GraphiQL's docs and for people learning the API.
import { getOperationAST, GraphQLError, Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.ts';
import { forbidden, unauthenticated } from '../errors.ts';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/** Whether the operation selects `__schema` or `__type` anywhere, fragments included. */
function selectsIntrospection(document: DocumentNode, operation: OperationDefinitionNode): boolean {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  const seen = new Set<string>();
  const visit = (selectionSet: SelectionSetNode): boolean =>
    selectionSet.selections.some((selection) => {
      if (selection.kind === Kind.FIELD)
        return INTROSPECTION_FIELDS.has(selection.name.value) || (selection.selectionSet ? visit(selection.selectionSet) : false);
      if (selection.kind === Kind.INLINE_FRAGMENT) return visit(selection.selectionSet);
      const name = selection.name.value;
      const fragment = fragments.get(name);
      if (!fragment || seen.has(name)) return false;
      seen.add(name);
      return visit(fragment);
    });
  return visit(operation.selectionSet);
}

/** GraphQL's suggestion, always the last sentence of its message: ` Did you mean "name"?`. */
const SUGGESTION = /\s*Did you mean [^?]*\?$/;

/**
 * The same error without its suggestion, in its message and in its original error's: the error
 * model reads an input error's field and reason by matching the two (variableInputError).
 * (graphql's own `hideSuggestions` option is not passed on by Yoga's executor when it coerces
 * variables, so the messages are trimmed here, after the fact, in one place for both doors.)
 */
function hideSuggestion(error: GraphQLError): GraphQLError {
  if (!SUGGESTION.test(error.message)) return error;
  // Yoga masks an error whose original is not a GraphQLError, so the original stays one.
  const original = error.originalError;
  const originalError = original instanceof GraphQLError ? hideSuggestion(original) : original;
  return new GraphQLError(error.message.replace(SUGGESTION, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError,
    extensions: error.extensions,
  });
}

export function useSchemaPrivacy({ production }: { production: boolean }): Plugin<Context> {
  if (!production) return {};
  return {
    // Validation errors: unknown fields, arguments, types, directives.
    onValidate() {
      return ({ result, setResult }) => {
        if (!result.some((error) => SUGGESTION.test(error.message))) return;
        setResult(result.map((error) => (error instanceof GraphQLError ? hideSuggestion(error) : error)));
      };
    },
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation && selectsIntrospection(args.document, operation)) {
        const actor = args.contextValue.actor;
        if (!actor) {
          setResultAndStopExecution({ errors: [unauthenticated()] });
          return;
        }
        if (!actor.permissions.has('read:schema')) {
          setResultAndStopExecution({ errors: [forbidden('Introspection needs a key with the read:schema permission.')] });
          return;
        }
      }
      // Variables and arguments are coerced during execution: their errors arrive here, on both doors.
      return {
        onExecuteDone({ result, setResult }) {
          if (!('errors' in result) || !result.errors?.some((error) => SUGGESTION.test(error.message))) return;
          setResult({ ...result, errors: result.errors.map(hideSuggestion) });
        },
      };
    },
  };
}
