// What one GraphQL document may ask for, and what it costs. The limits hold on the GraphQL door; the REST
// door runs the route table's fixed documents, never parsed or validated, so never refused. Both doors spend
// from one per-key budget: a GraphQL document by what it selects, a REST call by the records it answers.
// Not armor's cost limit: it is one static ceiling, blind to page sizes, variables and the per-key budget.
// The cost is checked just before execution, so a page size passed as `$n` costs what the literal does.
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
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { ExecutionArgs, GraphQLError } from 'graphql';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { connectionPageSize } from './builder.ts';
import { DEFAULT_GRAPHQL_MAX_COST } from '../config/index.ts';
import { apiError, invalidInput } from '../errors.ts';
import { requestState, type RequestState } from '../web/request-state.ts';

export const queryLimits = {
  /** Characters in the document (variables travel apart and are bounded by the body limit). */
  maxCharacters: 20_000,
  maxTokens: 1_000,
  /** Fields nested inside each other, fragments expanded: `{ cars { edges { node { id } } } }` is 4. */
  maxDepth: 8,
  /** Aliased fields, counted each time a fragment holding them is spread. */
  maxAliases: 15,
  maxDirectives: 50,
  maxCost: DEFAULT_GRAPHQL_MAX_COST,
} as const;

/** Items assumed for a list nothing bounds (a car's photos); connections use their page size. */
export const ASSUMED_LIST_SIZE = 10;

/** Introspection may answer the whole schema: a document holds at most two such fields; GraphQL bounds its depth. */
export const INTROSPECTION_COST = 2_000;

/** A list's size in its `extensions.listSize`, when paged by its own argument or bounded by a rule. */
export interface ListSize {
  slicingArgument?: string;
  /** The size when that argument is absent, or the fixed size when there is none. */
  defaultSize: number;
  maxSize?: number;
}

interface OperationShape {
  cost: number;
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
  // 200 whatever Accept says, as the cost refusal met while executing: Yoga answers parse and validation errors 400 otherwise.
  return apiError('BAD_REQUEST', error, describe(max, found), { limit, max, found, http: { status: 200 } });
}

function clampSize(value: unknown, fallback: number, max: number | undefined): number {
  const size = typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.trunc(value)) : fallback;
  return max === undefined ? size : Math.min(size, max);
}

/** The size its `extensions.listSize` gives a list with these arguments; undefined when it declares none. */
function declaredListSize(field: GraphQLField<unknown, unknown> | undefined, args: Readonly<Record<string, unknown>>): number | undefined {
  const declared = field?.extensions?.listSize as ListSize | undefined;
  if (!declared || typeof declared.defaultSize !== 'number') return undefined;
  const requested = declared.slicingArgument === undefined ? undefined : args[declared.slicingArgument];
  return clampSize(requested, declared.defaultSize, declared.maxSize);
}

function listMultiplier(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, pageSize: number | undefined): number {
  if (!isListType(getNullableType(field.type))) return 1;
  return declaredListSize(field, args) ?? pageSize ?? ASSUMED_LIST_SIZE;
}

/** Invalid variables stop execution with their own error; until then, the walk counts with the defaults. */
function coercedVariables(schema: GraphQLSchema, operation: OperationDefinitionNode, raw: ExecutionArgs['variableValues']) {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], raw ?? {});
  return 'coerced' in coerced && coerced.coerced ? coerced.coerced : {};
}

// Each fragment is walked once per page size: fragments spread inside fragments cannot make the walk explode.
class CostWalk {
  oversizedPage: OperationShape['oversizedPage'];
  private readonly schema: GraphQLSchema;
  private readonly variables: Record<string, unknown>;
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly fragmentCosts = new Map<string, number>();
  private readonly walking = new Set<string>();

  constructor(schema: GraphQLSchema, document: DocumentNode, variables: Record<string, unknown>) {
    this.schema = schema;
    this.variables = variables;
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  field(node: FieldNode, parent: GraphQLNamedType, pageSize: number | undefined): number {
    const name = node.name.value;
    if (name === '__schema' || name === '__type') return INTROSPECTION_COST;
    if (name === '__typename' || !(isObjectType(parent) || isInterfaceType(parent))) return 1;
    const field = parent.getFields()[name];
    if (!field) return 0;
    let args: Record<string, unknown> = {};
    try {
      args = getArgumentValues(field, node, this.variables);
    } catch {
      // An invalid argument stops execution with its own error.
    }
    const type = getNamedType(field.type);
    const connection = field.args.some((arg) => arg.name === 'first') && isObjectType(type) && 'edges' in type.getFields();
    if (connection && !this.oversizedPage) {
      for (const argument of ['first', 'last'] as const) {
        const size = args[argument];
        if (typeof size === 'number' && size > connectionPageSize.max) this.oversizedPage = { field: name, argument, size };
      }
    }
    const childPageSize = connection ? clampSize(args.first ?? args.last, connectionPageSize.default, connectionPageSize.max) : undefined;
    const children = node.selectionSet ? this.selectionSet(node.selectionSet, type, childPageSize) : 0;
    return 1 + listMultiplier(field, args, pageSize) * children;
  }

  selectionSet(selectionSet: SelectionSetNode, type: GraphQLNamedType, pageSize: number | undefined): number {
    let cost = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        cost += this.field(selection, type, pageSize);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        cost += condition ? this.selectionSet(selection.selectionSet, condition, pageSize) : 0;
      } else {
        cost += this.fragment(selection.name.value, pageSize);
      }
    }
    return cost;
  }

  /** A named fragment's cost at this page size, walked once; 0 when it is unknown or already being walked (a cycle). */
  private fragment(name: string, pageSize: number | undefined): number {
    const fragment = this.fragments.get(name);
    if (!fragment || this.walking.has(name)) return 0;
    const key = `${name}:${pageSize ?? ''}`;
    let cost = this.fragmentCosts.get(key);
    if (cost === undefined) {
      this.walking.add(name);
      const condition = this.schema.getType(fragment.typeCondition.name.value);
      cost = condition ? this.selectionSet(fragment.selectionSet, condition, pageSize) : 0;
      this.walking.delete(name);
      this.fragmentCosts.set(key, cost);
    }
    return cost;
  }
}

/** Each field costs 1 plus what it selects times a list's size; null when execution will report no such operation. */
export function operationShape(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: ExecutionArgs['operationName'],
  rawVariables: ExecutionArgs['variableValues'],
): OperationShape | null {
  const operation = getOperationAST(document, operationName);
  if (!operation) return null;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return null;
  const walk = new CostWalk(schema, document, coercedVariables(schema, operation, rawVariables));
  const cost = walk.selectionSet(operation.selectionSet, rootType, undefined);
  return { cost, ...(walk.oversizedPage ? { oversizedPage: walk.oversizedPage } : {}) };
}

// Yoga keeps one parsed document per query text, so a repeated operation's shape is walked once per schema (a key's
// view is its own), document, name and variables; long variables or too many variations are walked every time.
const SHAPES_PER_DOCUMENT = 16;
const MAX_KEPT_VARIABLES_CHARACTERS = 512;
const shapesBySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, OperationShape | null>>>();

function keptOperationShape({ schema, document, operationName, variableValues }: ExecutionArgs): OperationShape | null {
  // Variables here were parsed from JSON (a REST route was costed before), so their JSON text is all of them.
  const variablesText = variableValues ? JSON.stringify(variableValues) : '';
  if (variablesText.length > MAX_KEPT_VARIABLES_CHARACTERS) return operationShape(schema, document, operationName, variableValues);
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
  const shape = operationShape(schema, document, operationName, variableValues);
  if (shapes.size < SHAPES_PER_DOCUMENT) shapes.set(key, shape);
  return shape;
}

/** The items of each list of records not inside another list: a page of contacts, not each contact's vehicles. */
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
    return declaredListSize(field, args) ?? ASSUMED_LIST_SIZE;
  }
  const named = getNamedType(nullable);
  if (!(isObjectType(named) || isInterfaceType(named)) || path.has(named.name)) return 0;
  path.add(named.name);
  let records = 0;
  for (const inner of Object.values(named.getFields())) records += answeredRecords(inner.type, {}, inner, path);
  path.delete(named.name);
  return records;
}

/** One, plus one per record answered at the size asked (`contacts?per_page=200` is 201), whatever its fields. */
export function restCallCost(field: GraphQLField<unknown, unknown>, args: Readonly<Record<string, unknown>>): number {
  return 1 + answeredRecords(field.type, args, field, new Set());
}

/** The root field an operation runs and its arguments, when it runs exactly one (a REST call does). */
function soleRootField({ schema, document, operationName, variableValues }: ExecutionArgs) {
  const operation = getOperationAST(document, operationName);
  const rootType = operation ? schema.getRootType(operation.operation) : undefined;
  const [selection, ...others] = operation?.selectionSet.selections ?? [];
  if (!operation || !rootType || !selection || others.length > 0 || selection.kind !== Kind.FIELD) return undefined;
  const field = rootType.getFields()[selection.name.value];
  if (!field) return undefined;
  try {
    return { field, args: getArgumentValues(field, selection, coercedVariables(schema, operation, variableValues)) };
  } catch {
    return { field, args: {} };
  }
}

declare module '../web/request-state.ts' {
  interface RequestState {
    /** Yoga read the operation's parameters from the client: the GraphQL door. */
    fromGraphqlDoor?: true;
    /** The estimated cost of the request's operation (either door), set just before it executes. */
    operationCost?: number;
  }
}

/** The estimated cost of the operation run with this context (either door); undefined before execution. */
export function operationCost(context: { request?: Request }): number | undefined {
  return context.request ? requestState(context.request).operationCost : undefined;
}

/** Where an operation starts: a query's or mutation's execution, or a subscription's opening (the same arguments). */
type OperationStart = Pick<Parameters<NonNullable<Plugin['onExecute']>>[0], 'args' | 'setResultAndStopExecution'>;

type ArmorLimit = 'depth' | 'aliases' | 'directives';

/** Only the first limit a document exceeds is reported, as the one error its client receives. */
function refuse(refused: WeakSet<ValidationContext>, context: ValidationContext, limit: ArmorLimit, max: number, found: number) {
  if (refused.has(context)) return;
  refused.add(context);
  context.reportError(limitError(limit, max, found));
}

/** Armor's options for one validation limit: its refusal is reported as ours (what it found is in its message only). */
function armorRefusal(limit: ArmorLimit, max: number, refused: WeakSet<ValidationContext>) {
  const onReject = (context: ValidationContext | null, error: GraphQLError): void => {
    if (context) refuse(refused, context, limit, max, Number(/found (\d+)/.exec(error.message)?.[1]));
  };
  return { n: max, propagateOnRejection: false, onReject: [onReject] };
}

// Not armor's max-directives: it drops the directives on a fragment spread met before (`...F @include(if: $a)` twice).
function directivesRule(max: number, refused: WeakSet<ValidationContext>): ValidationRule {
  return (context) => {
    const perFragment = new Map<string, number>();
    const inSelections = (selectionSet: SelectionSetNode): number =>
      selectionSet.selections.reduce((sum, selection) => {
        const own = selection.directives?.length ?? 0;
        if (selection.kind === Kind.FRAGMENT_SPREAD) return sum + own + inFragment(selection.name.value);
        return sum + own + (selection.selectionSet ? inSelections(selection.selectionSet) : 0);
      }, 0);
    const inFragment = (name: string): number => {
      const known = perFragment.get(name);
      if (known !== undefined) return known;
      perFragment.set(name, 0); // a cycle, which GraphQL's own rule refuses
      const fragment = context.getFragment(name);
      const total = fragment ? (fragment.directives?.length ?? 0) + inSelections(fragment.selectionSet) : 0;
      perFragment.set(name, total);
      return total;
    };
    return {
      OperationDefinition(operation) {
        const variables = (operation.variableDefinitions ?? []).reduce((sum, variable) => sum + (variable.directives?.length ?? 0), 0);
        const found = (operation.directives?.length ?? 0) + variables + inSelections(operation.selectionSet);
        if (found > max) refuse(refused, context, 'directives', max, found);
      },
    };
  };
}

/** Only operations whose parameters Yoga read from the client (the GraphQL door) are refused; every cost is kept. */
export function useQueryLimits(limits: { readonly [K in keyof typeof queryLimits]: number } = queryLimits): Plugin {
  const refused = new WeakSet<ValidationContext>();
  const limitOperation = ({ args, setResultAndStopExecution }: OperationStart): void => {
    const { request } = args.contextValue as { request?: Request };
    const state: RequestState = request ? requestState(request) : {};
    const fromRestDoor = !state.fromGraphqlDoor;
    const root = fromRestDoor ? soleRootField(args) : undefined;
    if (root) {
      state.operationCost = restCallCost(root.field, root.args);
      return;
    }
    const shape = keptOperationShape(args);
    if (!shape) return;
    state.operationCost = shape.cost;
    if (fromRestDoor) return;
    // Refused, not cut to the ceiling: the client would miss records it believes it asked for.
    const page = shape.oversizedPage;
    const refusal =
      (page && invalidInput(page.argument, `of ${page.field} must be at most ${connectionPageSize.max} (got ${page.size})`)) ||
      (shape.cost > limits.maxCost && limitError('cost', limits.maxCost, shape.cost));
    if (refusal) setResultAndStopExecution({ errors: [refusal] });
  };
  return {
    onPluginInit({ addPlugin }) {
      // The parser stops one token past the limit: that token is what it found.
      const tooManyTokens = (): never => {
        throw limitError('tokens', limits.maxTokens, limits.maxTokens + 1);
      };
      addPlugin(maxTokensPlugin({ n: limits.maxTokens, onReject: [tooManyTokens] }));
      // Fragments add no depth, and `__schema`'s (bounded by GraphQL's own rule) is not counted.
      addPlugin(maxDepthPlugin({ ...armorRefusal('depth', limits.maxDepth, refused), flattenFragments: true, ignoreIntrospection: true }));
      addPlugin(maxAliasesPlugin({ ...armorRefusal('aliases', limits.maxAliases, refused), allowList: [] }));
      addPlugin({ onValidate: ({ addValidationRule }) => addValidationRule(directivesRule(limits.maxDirectives, refused)) });
    },
    onParams({ params, request, setResult }) {
      requestState(request).fromGraphqlDoor = true;
      // Before parsing, on the text Yoga read (armor's character limit needs a parser plugin to hand it over).
      if (typeof params.query === 'string' && params.query.length > limits.maxCharacters) {
        setResult({ errors: [limitError('characters', limits.maxCharacters, params.query.length)] });
      }
    },
    // A subscription's document is costed and limited when it opens, as a query's when it runs.
    onSubscribe: (payload) => limitOperation(payload),
    onExecute: (payload) => limitOperation(payload),
  };
}
