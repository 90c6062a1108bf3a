// What one GraphQL document may ask for, and what it costs. The limits hold on the GraphQL door,
// where the client writes the document; the REST door runs the route table's fixed documents
// (bounded by their own parameter checks). Both doors' operations spend from one per-key budget
// (`operationCost`): a GraphQL document by what it selects (every field, times the items of the
// lists around it), a REST call by the records it answers (`restCallCost`), since its selection is
// the route's whole record, fixed, and the client chooses only how many records.
//
// Text limits (characters, tokens) are checked on the request's parameters, before the document is
// parsed. Shape limits (depth, aliases, directives) and the cost are checked just before execution,
// when the variables are known: a page size passed as `$n` is the value the resolver will see,
// coerced by GraphQL's own rules, so it costs exactly what the same literal costs.
import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  Lexer,
  Source,
  TokenKind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { connectionPageSize } from './builder.ts';
import { DEFAULT_GRAPHQL_MAX_COST } from '../config/index.ts';
import { apiError, invalidInput } from '../errors.ts';
import { BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';

export const queryLimits = {
  /** Characters in the document (variables travel apart and are bounded by the body limit). */
  maxCharacters: 20_000,
  /** Lexical tokens in the document (names, punctuation, values; comments excluded). */
  maxTokens: 1_000,
  /** Fields nested inside each other, fragments expanded: `{ cars { edges { node { id } } } }` is 4. */
  maxDepth: 8,
  /** Aliased fields, counted each time a fragment holding them is spread. */
  maxAliases: 15,
  /** Directive uses (`@include`, `@skip`, …), counted like aliases. */
  maxDirectives: 50,
  /** The estimated cost of the operation (see `operationShape`); GRAPHQL_MAX_COST sets it. */
  maxCost: DEFAULT_GRAPHQL_MAX_COST,
} as const;

type QueryLimits = { readonly [K in keyof typeof queryLimits]: number };

/** The query texts remembered as within the token limit (each at most maxCharacters long). */
const COUNTED_TEXTS_BOUNDS: CacheBounds = { maxEntries: 1_000, maxBytes: 8 * 1024 * 1024 };

/**
 * How many items a list field is assumed to answer when nothing bounds it: the plain lists that
 * follow a relation (a car's photos, a manufacturer's models). Connections use their page size.
 */
export const ASSUMED_LIST_SIZE = 10;

/**
 * Introspection may answer the whole schema, the largest answer there is: one `__schema` or `__type` field costs
 * this much, so a document holds at most two. How deep it may nest is GraphQL's own rule
 * (MaxIntrospectionDepthRule, part of validation).
 */
export const INTROSPECTION_COST = 2_000;

/**
 * A list field's size, declared in its `extensions.listSize` when it is paged by its own argument
 * (`contacts(per_page:)`) or bounded by a rule (the 5 nearest locations).
 */
export interface ListSize {
  /** The argument that sets how many items are answered. */
  slicingArgument?: string;
  /** The size when that argument is absent, or the fixed size when there is none. */
  defaultSize: number;
  /** The most the argument may ask for. */
  maxSize?: number;
}

interface OperationShape {
  cost: number;
  depth: number;
  aliases: number;
  directives: number;
  /** A connection's page size asked over the ceiling (`first: 1000`), refused rather than clamped. */
  oversizedPage?: { field: string; argument: 'first' | 'last'; size: number };
}

type Limit = 'characters' | 'tokens' | 'depth' | 'aliases' | 'directives' | 'cost';

const limitErrors: Record<Limit, { error: string; describe: (max: number, found: number) => string }> = {
  characters: {
    error: 'query_too_long',
    describe: (max, found) => `The document has ${found} characters; at most ${max} are accepted (send long text as variables).`,
  },
  tokens: {
    error: 'query_too_long',
    describe: (max, found) => `The document has more than ${max} tokens (found at least ${found}); split it into smaller operations.`,
  },
  depth: {
    error: 'query_too_deep',
    describe: (max, found) => `The operation nests fields ${found} deep; at most ${max} levels are accepted.`,
  },
  aliases: {
    error: 'too_many_aliases',
    describe: (max, found) => `The operation uses ${found} aliases; at most ${max} are accepted.`,
  },
  directives: {
    error: 'too_many_directives',
    describe: (max, found) => `The operation uses ${found} directives; at most ${max} are accepted.`,
  },
  cost: {
    error: 'query_too_costly',
    describe: (max, found) =>
      `The operation's estimated cost is ${found}; at most ${max} is accepted. Ask for smaller pages (first/last), fewer fields or fewer aliases.`,
  },
};

function limitError(limit: Limit, max: number, found: number) {
  const { error, describe } = limitErrors[limit];
  return apiError('BAD_REQUEST', error, describe(max, found), { limit, max, found });
}

/** Counts the document's tokens, stopping one past `max`; a lexical error is left to the parser. */
function countTokens(document: string, max: number): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF && count <= max; token = lexer.advance()) count += 1;
  } catch {
    // A syntax error: the parser reports it with its position.
  }
  return count;
}

interface SelectionTotals {
  cost: number;
  /** Deepest field level reached below the selection set's own level. */
  depth: number;
  aliases: number;
  directives: number;
}

const empty = (): SelectionTotals => ({ cost: 0, depth: 0, aliases: 0, directives: 0 });

function listSizeOf(field: GraphQLField<unknown, unknown>): ListSize | undefined {
  const declared = field.extensions?.listSize as ListSize | undefined;
  return declared && typeof declared.defaultSize === 'number' ? declared : undefined;
}

/** A Relay connection: paged by first/last, answering its items through `edges`. */
function isConnection(field: GraphQLField<unknown, unknown>): boolean {
  const type = getNamedType(field.type);
  return field.args.some((arg) => arg.name === 'first') && isObjectType(type) && 'edges' in type.getFields();
}

function clampSize(value: unknown, fallback: number, max: number | undefined): number {
  const size = typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.trunc(value)) : fallback;
  return max === undefined ? size : Math.min(size, max);
}

/** How many times a field's selection is answered: a list's size (its declared listSize, else the page around it, else ASSUMED_LIST_SIZE), else once. */
function listMultiplier(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, pageSize: number | undefined): number {
  if (!isListType(getNullableType(field.type))) return 1;
  const declared = listSizeOf(field);
  if (declared) {
    const requested = declared.slicingArgument === undefined ? undefined : args[declared.slicingArgument];
    return clampSize(requested, declared.defaultSize, declared.maxSize);
  }
  return pageSize ?? ASSUMED_LIST_SIZE;
}

/**
 * One walk over an operation's selections, with its fragments expanded. A fragment costs the same
 * wherever it is spread (given the page size around it), so each is walked once: a document that
 * spreads fragments inside fragments cannot make this walk explode.
 */
class ShapeWalk {
  /** The first connection page asked for over connectionPageSize.max, if any. */
  oversizedPage: OperationShape['oversizedPage'];
  private readonly schema: GraphQLSchema;
  private readonly variables: Record<string, unknown>;
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly fragmentTotals = new Map<string, SelectionTotals>();
  private readonly walking = new Set<string>();

  constructor(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>) {
    this.schema = schema;
    this.variables = variables;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  field(node: FieldNode, parent: GraphQLNamedType, pageSize: number | undefined): SelectionTotals {
    const totals = empty();
    totals.aliases += node.alias ? 1 : 0;
    totals.directives += node.directives?.length ?? 0;
    const name = node.name.value;
    if (name === '__schema' || name === '__type') {
      totals.cost = INTROSPECTION_COST;
      return totals;
    }
    if (name === '__typename' || !(isObjectType(parent) || isInterfaceType(parent))) {
      totals.cost = 1;
      totals.depth = 1;
      return totals;
    }
    const field = parent.getFields()[name];
    if (!field) return totals;
    let args: Record<string, unknown> = {};
    try {
      args = getArgumentValues(field, node, this.variables);
    } catch {
      // An invalid argument stops execution with its own error.
    }
    const multiplier = listMultiplier(field, args, pageSize);
    if (isConnection(field) && !this.oversizedPage) {
      for (const argument of ['first', 'last'] as const) {
        const size = args[argument];
        if (typeof size === 'number' && size > connectionPageSize.max) this.oversizedPage = { field: name, argument, size };
      }
    }
    const childPageSize = isConnection(field)
      ? clampSize(args.first ?? args.last, connectionPageSize.default, connectionPageSize.max)
      : undefined;
    const type = getNamedType(field.type);
    const children = node.selectionSet ? this.selectionSet(node.selectionSet, type, childPageSize) : empty();
    totals.cost = 1 + multiplier * children.cost;
    totals.depth = 1 + children.depth;
    // Aliases and directives inside a list are written once and answered many times: counted once.
    totals.aliases += children.aliases;
    totals.directives += children.directives;
    return totals;
  }

  selectionSet(selectionSet: SelectionSetNode, type: GraphQLNamedType, pageSize: number | undefined): SelectionTotals {
    const totals = empty();
    const add = (part: SelectionTotals): void => {
      totals.cost += part.cost;
      totals.depth = Math.max(totals.depth, part.depth);
      totals.aliases += part.aliases;
      totals.directives += part.directives;
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        add(this.field(selection, type, pageSize));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        const part = condition ? this.selectionSet(selection.selectionSet, condition, pageSize) : empty();
        add({ ...part, directives: part.directives + (selection.directives?.length ?? 0) });
      } else {
        const name = selection.name.value;
        add({ ...empty(), directives: selection.directives?.length ?? 0 });
        const part = this.fragment(name, pageSize);
        if (part) add(part);
      }
    }
    return totals;
  }

  /** A named fragment's totals at this page size, walked once; null when it is unknown or already being walked (a cycle). */
  private fragment(name: string, pageSize: number | undefined): SelectionTotals | null {
    const fragment = this.fragments.get(name);
    if (!fragment || this.walking.has(name)) return null;
    const key = `${name}:${pageSize ?? ''}`;
    let part = this.fragmentTotals.get(key);
    if (!part) {
      this.walking.add(name);
      const condition = this.schema.getType(fragment.typeCondition.name.value);
      part = condition ? this.selectionSet(fragment.selectionSet, condition, pageSize) : empty();
      part = { ...part, directives: part.directives + (fragment.directives?.length ?? 0) };
      this.walking.delete(name);
      this.fragmentTotals.set(key, part);
    }
    return part;
  }
}

/**
 * The cost, depth, aliases and directives of the operation that would run, with its fragments
 * expanded. Cost: every field costs 1 plus what it selects, and a list field multiplies what it
 * selects by its size: a connection's `edges` by the page size (`first`/`last`, default 20, at
 * most 100), a field with `extensions.listSize` by its argument, any other list by
 * ASSUMED_LIST_SIZE. Introspection fields cost INTROSPECTION_COST and are not counted for depth.
 * Null when the operation cannot be found (execution reports that itself).
 */
export function operationShape(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): OperationShape | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return null;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  // Invalid variables stop execution with their own error; until then, count with the defaults.
  const variables = 'coerced' in coerced && coerced.coerced ? coerced.coerced : {};
  const walk = new ShapeWalk(schema, document, variables);
  const totals = walk.selectionSet(operation.selectionSet, rootType, undefined);
  const { oversizedPage } = walk;
  const directives =
    totals.directives +
    (operation.directives?.length ?? 0) +
    (operation.variableDefinitions ?? []).reduce((sum, definition) => sum + (definition.directives?.length ?? 0), 0);
  return { cost: totals.cost, depth: totals.depth, aliases: totals.aliases, directives, ...(oversizedPage ? { oversizedPage } : {}) };
}

/**
 * The shapes of the operations recently run, per schema (a key's view is a schema of its own) and
 * document: Yoga keeps one parsed document per query text, so a client repeating an operation
 * presents the same document, and its shape (a pure function of schema, document, operation name
 * and variables) is walked once. Variables enter the key as their JSON text; an operation with
 * long variables, or a document run with more variations than SHAPES_PER_DOCUMENT, is walked
 * every time rather than kept.
 */
const SHAPES_PER_DOCUMENT = 16;
const MAX_KEPT_VARIABLES_CHARACTERS = 512;
const shapesBySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, OperationShape | null>>>();

function keptOperationShape(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): OperationShape | null {
  // The variables reaching here were parsed from JSON (a REST route is costed before, by
  // soleRootField), so their JSON text is the whole of them.
  const variablesText = rawVariables ? JSON.stringify(rawVariables) : '';
  if (variablesText.length > MAX_KEPT_VARIABLES_CHARACTERS) return operationShape(schema, document, operationName, rawVariables);
  let byDocument = shapesBySchema.get(schema);
  if (!byDocument) {
    byDocument = new WeakMap();
    shapesBySchema.set(schema, byDocument);
  }
  let shapes = byDocument.get(document);
  if (!shapes) {
    shapes = new Map();
    byDocument.set(document, shapes);
  }
  const key = `${operationName ?? ''}\n${variablesText}`;
  if (shapes.has(key)) return shapes.get(key) ?? null;
  const shape = operationShape(schema, document, operationName, rawVariables);
  if (shapes.size < SHAPES_PER_DOCUMENT) shapes.set(key, shape);
  return shape;
}

/** What a REST call costs before any record: the call itself. */
const REST_CALL_BASE_COST = 1;

/**
 * The records a root field answers: the items of each list of records in its answer that is not
 * inside another list (a page of contacts is its page size; a contact's vehicles are part of their
 * contact, a car's features part of the car), sized as operationShape sizes lists (the `listSize`
 * paging argument, else ASSUMED_LIST_SIZE).
 */
function answeredRecords(
  type: GraphQLOutputType,
  args: Readonly<Record<string, unknown>>,
  field: GraphQLField<unknown, unknown> | undefined,
  path: Set<string>,
): number {
  const nullable = getNullableType(type);
  if (isListType(nullable)) {
    const item = getNamedType(nullable);
    if (!isObjectType(item) && !isInterfaceType(item)) return 0;
    const declared = field ? listSizeOf(field) : undefined;
    if (!declared) return ASSUMED_LIST_SIZE;
    const requested = declared.slicingArgument === undefined ? undefined : args[declared.slicingArgument];
    return clampSize(requested, declared.defaultSize, declared.maxSize);
  }
  const named = getNamedType(nullable);
  if (!(isObjectType(named) || isInterfaceType(named)) || path.has(named.name)) return 0;
  path.add(named.name);
  let records = 0;
  for (const inner of Object.values(named.getFields())) records += answeredRecords(inner.type, {}, inner, path);
  path.delete(named.name);
  return records;
}

/**
 * What a REST call spends from the per-key cost budget: REST_CALL_BASE_COST plus one per record it
 * answers at the size its arguments ask for (`contacts?per_page=200` is 201), whatever the fields
 * of each record. The route table's largest pages, and what the default budget allows of each, are
 * docs/rate-limits.md's table (test/rate-limits.test.ts holds the two together).
 */
export function restCallCost(field: GraphQLField<unknown, unknown>, args: Readonly<Record<string, unknown>>): number {
  return REST_CALL_BASE_COST + answeredRecords(field.type, args, field, new Set());
}

/** The root field an operation runs and its arguments, when it runs exactly one (a REST call does). */
function soleRootField(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
) {
  const operation = getOperationAST(document, operationName);
  const rootType = operation ? schema.getRootType(operation.operation) : undefined;
  const [selection, ...others] = operation?.selectionSet.selections ?? [];
  if (!operation || !rootType || !selection || others.length > 0 || selection.kind !== Kind.FIELD) return undefined;
  const field = rootType.getFields()[selection.name.value];
  if (!field) return undefined;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  try {
    return { field, args: getArgumentValues(field, selection, 'coerced' in coerced && coerced.coerced ? coerced.coerced : {}) };
  } catch {
    return { field, args: {} };
  }
}

const costByContext = new WeakMap<object, number>();

/** The estimated cost of the operation run with this context (either door); undefined before execution. */
export function operationCost(context: object): number | undefined {
  return costByContext.get(context);
}

/** The first limit the shape exceeds, as the error the client receives. */
function shapeLimitError(shape: OperationShape, limits: QueryLimits = queryLimits) {
  if (shape.depth > limits.maxDepth) return limitError('depth', limits.maxDepth, shape.depth);
  if (shape.aliases > limits.maxAliases) return limitError('aliases', limits.maxAliases, shape.aliases);
  if (shape.directives > limits.maxDirectives) return limitError('directives', limits.maxDirectives, shape.directives);
  if (shape.cost > limits.maxCost) return limitError('cost', limits.maxCost, shape.cost);
  return null;
}

/** Where an operation starts: a query's or mutation's execution, or a subscription's opening (the same arguments). */
interface OperationStart {
  args: ExecutionArgs;
  setResultAndStopExecution(result: ExecutionResult): void;
}

/**
 * The limits as one Yoga plugin. Requests whose parameters Yoga read from the client (the GraphQL
 * door) are remembered, so that only their operations are refused; every operation's cost is kept.
 */
export function useQueryLimits(limits: QueryLimits = queryLimits): Plugin {
  const fromGraphqlDoor = new WeakSet<Request>();
  // Query texts already counted within the token limit: a client repeating an operation sends the
  // same text, which is lexed once (a text over the limit is never kept, so it is refused each time).
  const withinTokenLimit = new BoundedCache<true>(COUNTED_TEXTS_BOUNDS, () => 0);
  const limitOperation = ({ args, setResultAndStopExecution }: OperationStart): void => {
    const variables = args.variableValues as Record<string, unknown> | undefined;
    const context = args.contextValue as { request?: Request };
    const fromRestDoor = !context.request || !fromGraphqlDoor.has(context.request);
    // The REST door: a route's fixed document, costed by the records it answers, with no walk of its
    // selection (the walk is the GraphQL door's limits; a route's document is within them by construction).
    const root = fromRestDoor ? soleRootField(args.schema, args.document, args.operationName, variables) : undefined;
    if (root) {
      costByContext.set(context, restCallCost(root.field, root.args));
      return;
    }
    const shape = keptOperationShape(args.schema, args.document, args.operationName, variables);
    if (!shape) return;
    costByContext.set(context, shape.cost);
    if (fromRestDoor) return;
    // A page over the ceiling is refused, not silently cut to it: the client would miss records it
    // believes it asked for (the documented range is 1 to connectionPageSize.max).
    const page = shape.oversizedPage;
    const refused =
      (page && invalidInput(page.argument, `of ${page.field} must be at most ${connectionPageSize.max} (got ${page.size})`)) ??
      shapeLimitError(shape, limits);
    if (refused) setResultAndStopExecution({ errors: [refused] });
  };
  return {
    onParams({ params, request, setResult }) {
      fromGraphqlDoor.add(request);
      const query = params.query;
      if (typeof query !== 'string') return;
      if (query.length > limits.maxCharacters) {
        setResult({ errors: [limitError('characters', limits.maxCharacters, query.length)] });
        return;
      }
      if (withinTokenLimit.get(query)) return;
      const tokens = countTokens(query, limits.maxTokens);
      if (tokens > limits.maxTokens) setResult({ errors: [limitError('tokens', limits.maxTokens, tokens)] });
      else withinTokenLimit.set(query, true);
    },
    // A subscription's document is costed and limited when it opens, as a query's when it runs.
    onSubscribe: (payload) => limitOperation(payload),
    onExecute: (payload) => limitOperation(payload),
  };
}
