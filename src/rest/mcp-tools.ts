// The MCP tools of a key: one per operation of its OpenAPI view (buildOpenApiDocument), named by its
// operationId, its input the operation's path and query parameters and JSON body, so no tool is kept by hand.
import { IDEMPOTENCY_HEADER } from '../domain/leads/idempotency.ts';
import { isPlainObject } from '../lib/json.ts';
import type { ArgumentProblem } from './arguments.ts';
import type { JsonSchema } from './input-schemas.ts';
import type { OpenApiOperation } from './openapi.ts';

/** The argument holding the JSON body, and the one sent as the Idempotency-Key header. */
const BODY_ARGUMENT = 'body';
const IDEMPOTENCY_ARGUMENT = 'idempotency_key';

export type RestTool = ReturnType<typeof toolOf>;

/** A schema with its `$ref`s to the document's components moved into its own `$defs`: a tool's schema stands alone. */
function standalone<Schema extends JsonSchema>(schema: Schema, components: Record<string, unknown>): Schema {
  const defs: JsonSchema = {};
  const pending: string[] = [];
  const rewrite = (node: unknown): unknown => {
    const text = JSON.stringify(node);
    for (const [, name = ''] of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      if (!(name in defs)) pending.push(name);
      defs[name] ??= {};
    }
    return JSON.parse(text.replace(/("\$ref":")#\/components\/schemas\//g, '$1#/$defs/'));
  };
  const rewritten = rewrite(schema) as Schema;
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) defs[name] = rewrite(components[name]);
  return Object.keys(defs).length > 0 ? { ...rewritten, $defs: defs } : rewritten;
}

/** `path` is the OpenAPI path, `{name}` where a path parameter goes. */
function toolOf(method: string, path: string, operation: OpenApiOperation, components: Record<string, unknown>) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const queryParameters: string[] = [];
  let takesIdempotencyKey = false;
  const add = (name: string, schema: JsonSchema, description: string | undefined, isRequired: boolean): void => {
    if (name in properties) throw new Error(`${operation.operationId}: two inputs are named ${name}`);
    properties[name] = description ? { ...schema, description } : schema;
    if (isRequired) required.push(name);
  };
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'header') {
      // The other headers (If-None-Match) mean nothing to a tool's single answer.
      if (parameter.name !== IDEMPOTENCY_HEADER) continue;
      takesIdempotencyKey = true;
      add(IDEMPOTENCY_ARGUMENT, parameter.schema, parameter.description, false);
    } else if (parameter.in === 'query' && parameter.name === 'token') {
      // The key in the query is for providers without headers: a tool call carries the caller's Authorization.
    } else {
      if (parameter.in === 'query') queryParameters.push(parameter.name);
      add(parameter.name, parameter.schema, parameter.description, parameter.required);
    }
  }
  const body = operation.requestBody?.content['application/json']?.schema;
  if (body) add(BODY_ARGUMENT, body, 'The JSON request body.', true);
  return {
    name: operation.operationId,
    title: operation.summary,
    description: [operation.summary, operation.description].filter(Boolean).join('\n\n'),
    inputSchema: standalone({ type: 'object' as const, properties, required, additionalProperties: false }, components),
    annotations: {
      title: operation.summary,
      readOnlyHint: method === 'GET',
      destructiveHint: method === 'DELETE',
      idempotentHint: method === 'GET' || method === 'PUT' || method === 'DELETE',
      openWorldHint: false as const,
    },
    method,
    path,
    queryParameters,
    takesBody: body !== undefined,
    takesIdempotencyKey,
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The tools of an OpenAPI document written by buildOpenApiDocument, in its order of paths. */
export function toolsOfDocument(document: Record<string, unknown>): RestTool[] {
  // The document is this service's own: its shape is buildOpenApiDocument's.
  const paths = document.paths as Record<string, Partial<Record<(typeof METHODS)[number], OpenApiOperation>>>;
  const components = ((document.components as { schemas?: Record<string, unknown> } | undefined)?.schemas ?? {}) as Record<string, unknown>;
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation ? [toolOf(method.toUpperCase(), path, operation, components)] : [];
    }),
  );
}

function appendQuery(query: URLSearchParams, name: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) appendQuery(query, `${name}[]`, item);
  } else if (isPlainObject(value)) {
    // The deepObject style the document declares for object parameters (`data[key]=value`).
    for (const [key, item] of Object.entries(value)) appendQuery(query, `${name}[${key}]`, item);
  } else {
    query.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
}

/** The REST request a call of the tool is: its path filled in, its query and its JSON body, from arguments its schema accepted. */
export function restCallOf(
  tool: RestTool,
  args: Record<string, unknown>,
  origin: string,
): { url: URL; body?: string; idempotencyKey?: string } | { problem: ArgumentProblem } {
  let dotSegment: string | undefined;
  const path = tool.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_whole, name: string) => {
    const value = args[name];
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    // A URL resolves `.` and `..` (encoded or not) as segments: the call would reach another path.
    if (text === '.' || text === '..') dotSegment = name;
    return encodeURIComponent(text);
  });
  if (dotSegment) return { problem: { field: dotSegment, reason: 'must not be . or ..' } };
  const url = new URL(path, origin);
  for (const name of tool.queryParameters) appendQuery(url.searchParams, name, args[name]);
  const idempotencyKey = args[IDEMPOTENCY_ARGUMENT];
  return {
    url,
    ...(tool.takesBody && args[BODY_ARGUMENT] !== undefined ? { body: JSON.stringify(args[BODY_ARGUMENT]) } : {}),
    ...(typeof idempotencyKey === 'string' ? { idempotencyKey } : {}),
  };
}
