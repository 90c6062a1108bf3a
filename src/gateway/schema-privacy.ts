// Production keeps strangers from mapping the schema: introspection needs `read:schema`, errors suggest no names.
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { KeyVerifier } from '../auth/key-cache.ts';
import { actorFromRequest } from '../context.ts';
import { forbidden, rebuilt, unauthenticated, withExtensions } from '../errors.ts';
import { requestState } from '../web/request-state.ts';

declare module '../web/request-state.ts' {
  interface RequestState {
    /** Introspection refused: with a valid key (403) or none (401). */
    introspectionRefusedWithKey?: boolean;
  }
}

const SUGGESTION = /\s*Did you mean [^?]*\?$/;

const INTROSPECTION_DISABLED = /^GraphQL introspection has been disabled/;

// Not armor's block-field-suggestions (validation messages only); the original too, as the error model reads both.
function hideSuggestion(error: GraphQLError): GraphQLError {
  if (!SUGGESTION.test(error.message)) return error;
  const original = error.originalError;
  const originalError = original instanceof GraphQLError ? hideSuggestion(original) : original;
  return rebuilt(error, error.message.replace(SUGGESTION, ''), error.extensions, originalError);
}

export function useSchemaPrivacy({ production, keys }: { production: boolean; keys: KeyVerifier }): Plugin<Record<string, unknown>> {
  if (!production) return {};
  const refused = new WeakSet<Error>();
  const isDisabled = async (request: Request): Promise<boolean> => {
    // A key that cannot be checked (the database is down) fails the request when its context is built.
    const actor = await actorFromRequest(keys, request).catch(() => undefined);
    if (actor === undefined || actor?.permissions.has('read:schema')) return false;
    requestState(request).introspectionRefusedWithKey = actor !== null;
    return true;
  };
  // Made only for a document that introspects, not for every request the rule applies to.
  const refusalFor = (withKey: boolean): GraphQLError => {
    const denial = withKey ? forbidden('Introspection needs a key with the read:schema permission.') : unauthenticated();
    // 200 whatever Accept says, as a refusal met while executing: Yoga answers validation errors 400 otherwise.
    const refusal = withExtensions(denial, { ...denial.extensions, http: { status: 200 } });
    refused.add(refusal);
    return refusal;
  };
  return {
    onPluginInit({ addPlugin }) {
      addPlugin(useDisableIntrospection({ isDisabled }));
    },
    onValidate({ context }) {
      return ({ result, setResult }) => {
        const withKey = requestState(context.request).introspectionRefusedWithKey;
        // Yoga keeps a document's validation result for the next request: it may hold another's refusal.
        const introspects = (error: Error) => refused.has(error) || INTROSPECTION_DISABLED.test(error.message);
        const errors = withKey !== undefined && result.some(introspects) ? result.filter((error) => !introspects(error)) : result;
        if (withKey !== undefined && errors !== result && errors.length === 0) setResult([refusalFor(withKey)]);
        else if (errors !== result || errors.some((error) => SUGGESTION.test(error.message)))
          setResult(errors.map((error) => (error instanceof GraphQLError ? hideSuggestion(error) : error)));
      };
    },
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
