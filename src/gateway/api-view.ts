// Introspection with a key answers the key's view of the graph. Only `__schema` and `__type` are: a
// document is still validated and executed on the whole schema, so refusals stay as they were. Caches
// file answers under the caller's scope, so one key's view is never served to another.
import {
  getOperationAST,
  Kind,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { graphViewOf } from '../auth/api-view.ts';
import type { Context } from '../context.ts';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

function rootFieldsOf(document: DocumentNode, operation: OperationDefinitionNode): FieldNode[] {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  }
  const seen = new Set<string>();
  const fields: FieldNode[] = [];
  const collect = (selectionSet: SelectionSetNode): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || seen.has(selection.name.value)) continue;
        seen.add(selection.name.value);
        collect(fragment);
      }
    }
  };
  collect(operation.selectionSet);
  return fields;
}

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

type ExecuteFn = (args: ExecutionArgs) => unknown;

// Introspection alone runs on the view; mixed with other root fields it runs on the whole schema, and
// its introspection fields are answered again from the view.
async function executeWithView(executeFn: ExecuteFn, args: ExecutionArgs, viewOf: () => ExecutionArgs['schema']): Promise<unknown> {
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.operation !== 'query') return executeFn(args);
  const fields = rootFieldsOf(args.document, operation);
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
    onExecute({ args, executeFn, setExecuteFn }) {
      const actor = args.contextValue.actor;
      if (!actor) return;
      // Most operations never introspect: they run untouched.
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation || !rootFieldsOf(args.document, operation).some((field) => INTROSPECTION_FIELDS.has(field.name.value))) return;
      const viewOf = () => graphViewOf(args.schema, actor.permissions);
      setExecuteFn((executionArgs) => executeWithView(executeFn, executionArgs, viewOf) as ReturnType<typeof executeFn>);
    },
  };
}
