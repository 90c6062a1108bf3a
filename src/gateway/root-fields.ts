// The root fields an operation selects, through its fragments (directives aside): the key call log and
// the metric label name them, the key's view and the rate limits look for particular ones.
import { getOperationAST, Kind, type DocumentNode, type FieldNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';

interface RootFields {
  nodes: FieldNode[];
  /** Each schema field once, introspection left out. */
  names: string[];
}

// Found once per operation: Yoga's parse cache hands out one document per query text.
const rootFieldsByOperation = new WeakMap<OperationDefinitionNode, RootFields>();

function rootFields(document: DocumentNode, operation: OperationDefinitionNode): RootFields {
  const known = rootFieldsByOperation.get(operation);
  if (known) return known;
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  const seen = new Set<string>();
  const nodes: FieldNode[] = [];
  const collect = (selectionSet: SelectionSetNode): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) nodes.push(selection);
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
  const names = [...new Set(nodes.map((node) => node.name.value).filter((name) => !name.startsWith('__')))];
  const found = { nodes, names };
  rootFieldsByOperation.set(operation, found);
  return found;
}

export function rootFieldNodes(document: DocumentNode, operation: OperationDefinitionNode): FieldNode[] {
  return rootFields(document, operation).nodes;
}

export function rootFieldNames(document: DocumentNode, operationName: string | null | undefined): string[] {
  const operation = getOperationAST(document, operationName);
  return operation ? rootFields(document, operation).names : [];
}
