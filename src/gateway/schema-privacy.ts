// Production mode (NODE_ENV=production) keeps the GraphQL schema from being mapped by strangers:
// introspection (`__schema`, `__type`) answers only a key holding `read:schema`, and error messages
// carry no "Did you mean …?" suggestions, which would otherwise spell out field and type names one
// guess at a time. Development keeps both, for GraphiQL's docs and for people learning the API.
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { KeyVerifier } from '../auth/key-cache.ts';
import { actorFromRequest } from '../context.ts';
import { forbidden, unauthenticated, withExtensions } from '../errors.ts';

/** GraphQL's suggestion, always the last sentence of its message: ` Did you mean "name"?`. */
const SUGGESTION = /\s*Did you mean [^?]*\?$/;

/** What NoSchemaIntrospectionCustomRule reports, which the plugin adds for a request it disables. */
const INTROSPECTION_DISABLED = /^GraphQL introspection has been disabled/;

/**
 * The same error without its suggestion, in its message and in its original error's: the error
 * model reads an input error's field and reason by matching the two (variableInputError).
 * Not armor's block-field-suggestions: it trims validation messages only, and not `Did you mean the
 * enum value …?`; graphql's own `hideSuggestions` is not passed on by Yoga's executor.
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

export function useSchemaPrivacy({ production, keys }: { production: boolean; keys: KeyVerifier }): Plugin<Record<string, unknown>> {
  if (!production) return {};
  // The refusal a request gets if it introspects, decided with its key before the document is read.
  const refusals = new WeakMap<Request, GraphQLError>();
  const refused = new WeakSet<Error>();
  const isDisabled = async (request: Request): Promise<boolean> => {
    // A key that cannot be checked (the database is down) fails the request when its context is built.
    const actor = await actorFromRequest(keys, request).catch(() => undefined);
    if (actor === undefined || actor?.permissions.has('read:schema')) return false;
    const denial = actor ? forbidden('Introspection needs a key with the read:schema permission.') : unauthenticated();
    // 200 whatever Accept says, as a refusal met while executing: Yoga answers validation errors 400 otherwise.
    const refusal = withExtensions(denial, { ...denial.extensions, http: { status: 200 } });
    refused.add(refusal);
    refusals.set(request, refusal);
    return true;
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(useDisableIntrospection({ isDisabled }));
    },
    // Validation errors: unknown fields, arguments, types, directives; and introspection refused.
    onValidate({ context }) {
      return ({ result, setResult }) => {
        const refusal = refusals.get(context.request);
        // Yoga keeps a document's validation result for the next request: it may hold another's refusal.
        const introspects = (error: Error) => refused.has(error) || INTROSPECTION_DISABLED.test(error.message);
        // A document invalid anyway is answered its other errors, as if introspection had been allowed.
        const errors = refusal && result.some(introspects) ? result.filter((error) => !introspects(error)) : result;
        if (refusal && errors !== result && errors.length === 0) setResult([refusal]);
        else if (errors !== result || errors.some((error) => SUGGESTION.test(error.message)))
          setResult(errors.map((error) => (error instanceof GraphQLError ? hideSuggestion(error) : error)));
      };
    },
    // Variables and arguments are coerced during execution: their errors arrive here, on both doors.
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (!('errors' in result) || !result.errors?.some((error) => SUGGESTION.test(error.message))) return;
          setResult({ ...result, errors: result.errors.map(hideSuggestion) });
        },
      };
    },
  };
}
