// Introspection with a key answers the key's view of the graph (`__schema`, `__type`); documents are still validated
// and executed on the whole schema, and caches file answers under the caller's scope, so no key sees another's view.
import {
  getOperationAST,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { graphViewOf } from '../auth/api-view.ts';
import type { Context } from '../context.ts';
import { rootFieldNodes } from './root-fields.ts';
import { apiError } from '../errors.ts';
import { asksIncrementalDelivery } from './incremental.ts';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

function introspectionOnly(document: DocumentNode, operation: OperationDefinitionNode, fields: FieldNode[]): DocumentNode {
  const fragments = document.definitions.filter(
    (definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION,
  );
  return {
    ...document,
    definitions: [{ ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections: fields } }, ...fragments],
  };
}

function isPlainResult(result: unknown): result is ExecutionResult {
  return typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result);
}

// Introspection alone runs on the view; mixed with other root fields it runs on the whole schema, and
// its introspection fields are answered again from the view.
async function executeWithView(executeFn: (args: ExecutionArgs) => unknown, args: ExecutionArgs, viewOf: () => ExecutionArgs['schema']) {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'query') return executeFn(args);
  const fields = rootFieldNodes(args.document, operation);
  const introspection = fields.filter((field) => INTROSPECTION_FIELDS.has(field.name.value));
  if (introspection.length === 0) return executeFn(args);
  // Built (or found) only now: an operation without introspection never waits for a view.
  const view = viewOf();
  if (fields.every((field) => INTROSPECTION_FIELDS.has(field.name.value) || field.name.value === '__typename')) {
    return executeFn({ ...args, schema: view });
  }
  const [whole, viewed] = await Promise.all([
    executeFn(args),
    executeFn({ ...args, schema: view, document: introspectionOnly(args.document, operation, introspection) }),
  ]);
  if (!isPlainResult(whole) || !isPlainResult(viewed) || !whole.data || !viewed.data) return whole;
  const data: Record<string, unknown> = { ...whole.data };
  // Only the response keys the whole run answered: one skipped there (@skip, @include) stays skipped.
  for (const [responseKey, value] of Object.entries(viewed.data)) if (responseKey in data) data[responseKey] = value;
  return { ...whole, data };
}

export function useKeyView(): Plugin<Context> {
  return {
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const actor = args.contextValue.actor;
      if (!actor) return;
      const operation = getOperationAST(args.document, args.operationName);
      const fields = operation ? rootFieldNodes(args.document, operation) : [];
      if (!fields.some((field) => INTROSPECTION_FIELDS.has(field.name.value))) return;
      // A deferred part of the whole run would carry the whole schema's introspection past the view's answer.
      if (!fields.every((field) => INTROSPECTION_FIELDS.has(field.name.value)) && asksIncrementalDelivery(args.document)) {
        const message = 'Introspection is answered apart from @defer and @stream: send __schema and __type in an operation of their own.';
        setResultAndStopExecution({ errors: [apiError('BAD_REQUEST', 'invalid_input', message)] });
        return;
      }
      const viewOf = () => graphViewOf(args.schema, actor.permissions);
      setExecuteFn((executionArgs) => executeWithView(executeFn, executionArgs, viewOf) as ReturnType<typeof executeFn>);
    },
  };
}
