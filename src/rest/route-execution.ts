// How a REST route runs its root field: the GraphQL document Sofa builds for it, with the variables
// Sofa reads from the path, the query string and the body, executed through Yoga's envelope, and
// answered as Sofa answers (the root field's data as JSON with the route's status, or the error
// handler's body). Sofa's own handler did the same behind a second router (fets' server adapter,
// its route matching, a Request rebuilt for it, a Proxy over the URL): about a tenth of an uncached
// point read's CPU for a route the REST door has already matched, checked and read. Sofa still makes
// the documents (createSofa's models and @graphql-tools' buildOperationNodeForField, the functions
// its router calls), so a route's document, and with it its answer, are Sofa's by construction.
import { buildOperationNodeForField, createGraphQLError } from '@graphql-tools/utils';
import {
  GraphQLBoolean,
  isEqualType,
  isInputObjectType,
  isScalarType,
  Kind,
  OperationTypeNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type TypeNode,
  type VariableDefinitionNode,
} from 'graphql';
import { parse as parseQueryString } from 'qs';
import { createSofa } from 'sofa-api';
import { Response } from '../web/fetch-api.ts';
import type { RestRoute } from './routes.ts';

/** A route's operation, built once per schema. */
export interface RouteOperation {
  document: DocumentNode;
  operation: OperationDefinitionNode;
  variables: readonly VariableDefinitionNode[];
  /** The root field, whose data is the answer's body. */
  fieldName: string;
  successStatus: number;
}

/** Each route's operation over the REST door's schema, keyed by the route's root field (`Query.contacts`). */
export function routeOperations(served: GraphQLSchema, routes: readonly RestRoute[]): Map<string, RouteOperation> {
  // Sofa's models decide which nested records are answered whole and which by their id.
  const { models, ignore, depthLimit } = createSofa({ basePath: '', schema: served });
  const operations = new Map<string, RouteOperation>();
  for (const route of routes) {
    const [kind, fieldName] = route.field.split('.') as ['Query' | 'Mutation', string];
    const root = kind === 'Query' ? served.getQueryType() : served.getMutationType();
    if (!root?.getFields()[fieldName]) continue;
    const operation = buildOperationNodeForField({
      kind: kind === 'Query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION,
      schema: served,
      field: fieldName,
      models,
      ignore,
      circularReferenceDepth: depthLimit,
    });
    operations.set(route.field, {
      document: { kind: Kind.DOCUMENT, definitions: [operation] },
      operation,
      variables: operation.variableDefinitions ?? [],
      fieldName,
      successStatus: route.successStatus ?? 200,
    });
  }
  return operations;
}

/** A variable's text or JSON value as the operation takes it (Sofa's parseVariable). */
function variableValue(schema: GraphQLSchema, value: unknown, type: TypeNode): unknown {
  if (type.kind === Kind.NON_NULL_TYPE) return variableValue(schema, value, type.type);
  if (type.kind === Kind.LIST_TYPE) return (Array.isArray(value) ? value : [value]).map((item) => variableValue(schema, item, type.type));
  const named = schema.getType(type.name.value);
  if (isScalarType(named)) {
    // A Boolean's serializer takes only booleans and numbers: text is read as Sofa reads it.
    return named.serialize(isEqualType(GraphQLBoolean, named) ? value === 'true' || value === true : value);
  }
  if (isInputObjectType(named)) return value && typeof value === 'object' ? value : JSON.parse(value as string);
  return value;
}

/** What the REST door read of the request: the route's path parameters, its query string and its JSON body. */
export interface RouteInput {
  pathParams: Readonly<Record<string, string>>;
  /** The query string after `?`, as the request to run carries it (undefined: none). */
  search: string | undefined;
  /** The body's JSON text, or undefined when there is none. */
  body: string | undefined;
}

/**
 * The operation's variables, read as Sofa reads them: a path parameter first, else the query string
 * (qs' reading, so `a[b]=1` is an object), else the body's key of that name; an absent one is left out.
 */
function readVariables(schema: GraphQLSchema, route: RouteOperation, input: RouteInput): Record<string, unknown> {
  const body = input.body ? (JSON.parse(input.body) as Record<string, unknown>) : {};
  let query: Record<string, unknown> | undefined;
  const variables: Record<string, unknown> = {};
  for (const variable of route.variables) {
    const name = variable.variable.name.value;
    let raw: unknown;
    if (name in input.pathParams) raw = input.pathParams[name];
    else {
      // Objects without a prototype: a bracketed name cannot reach past them (qs never writes
      // `__proto__`; the REST door has refused such names before, src/web/refused-keys.ts).
      query ??= parseQueryString(input.search ?? '', { plainObjects: true }) as Record<string, unknown>;
      raw = query[name] || body[name];
    }
    if (raw === null || raw === undefined) continue;
    const value = variableValue(schema, raw, variable.type);
    if (value !== undefined) variables[name] = value;
  }
  return variables;
}

type Execute = (args: ExecutionArgs) => Promise<ExecutionResult> | ExecutionResult;

/** How a route's operation is run: the context made for the request, and the envelope's execute for that context. */
export interface RouteRunner {
  schema: GraphQLSchema;
  contextFor(request: Request): Promise<{ contextValue: object; execute: Execute }>;
  /** The answer to an operation that failed (Sofa's errorHandler). */
  errorResponse(errors: readonly unknown[]): Response;
}

/** The route's answer: as Sofa's handler gives it, every failure included (it never throws). */
export async function runRoute(runner: RouteRunner, route: RouteOperation, request: Request, input: RouteInput): Promise<Response> {
  try {
    let variableValues: Record<string, unknown>;
    try {
      variableValues = readVariables(runner.schema, route, input);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw createGraphQLError(message, { extensions: { http: { status: 400 } } });
    }
    const { contextValue, execute } = await runner.contextFor(request);
    const result = await execute({
      schema: runner.schema,
      document: route.document,
      contextValue,
      variableValues,
      operationName: route.operation.name?.value,
    });
    if (result.errors) return runner.errorResponse(result.errors);
    return Response.json(result.data?.[route.fieldName], { status: route.successStatus });
  } catch (error) {
    return runner.errorResponse([error]);
  }
}
