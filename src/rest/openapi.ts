// The OpenAPI 3.1 document of the REST door, built from the route table and the GraphQL types the
// routes answer with: the REST body IS the root field's result, so one source describes both, and
// test/openapi-contract.test.ts validates real responses against this document.
// (Sofa's generated document repeats arguments as query and body parameters and mangles paths such
// as `{id.json}`. This one reads each parameter where it is read.)
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { permissionCatalogue } from '../auth/permissions.ts';
import { restRoutes, type ParamType, type RestRoute } from './routes.ts';

type JsonSchema = Record<string, unknown>;

const scalarSchemas: Record<string, JsonSchema> = {
  Int: { type: 'integer' },
  Float: { type: 'number' },
  String: { type: 'string' },
  ID: { type: 'string' },
  Boolean: { type: 'boolean' },
  DateTime: { type: 'string', format: 'date-time' },
  Date: { type: 'string', format: 'date' },
  JSON: {},
  JSONObject: { type: 'object' },
};

const errorDescriptions: Record<number, string> = {
  400: 'Malformed request: the body is not valid JSON, or a path parameter is not valid percent-encoded UTF-8.',
  401: 'Missing, malformed, unknown, expired or revoked API key (one body for all).',
  403: 'The key lacks the permission this operation needs, or is not authorised for the website.',
  404: 'Not found, or outside the dealerships of the key (answered alike).',
  405: 'The path exists with another method.',
  409: 'Conflict with the stored state.',
  410: 'Gone: the token expired or was used already.',
  413: 'The request body is over the size limit.',
  422: 'Invalid input: `field` names the parameter or body field at fault.',
  429: 'Rate limited (README, Rate limits): `Retry-After` says in how many seconds to try again; `RateLimit` and `RateLimit-Policy` say which limit.',
  500: 'Unexpected error (logged; nothing internal in the body).',
};

/** The headers of a 429 answer (src/rate-limit/policy.ts). */
const rateLimitedHeaders = {
  'Retry-After': { schema: { type: 'integer', minimum: 1 }, description: 'Seconds until the limit that refused the request starts a new window.' },
  RateLimit: { schema: { type: 'string' }, description: 'Per policy, the requests (or cost) left `r` and the seconds until its window resets `t`.' },
  'RateLimit-Policy': { schema: { type: 'string' }, description: 'Per policy, its quota `q` and window `w` in seconds.' },
};

/** The error statuses a route can answer with: its own list, else what its shape implies. */
export function errorStatusesOf(route: RestRoute): number[] {
  if (route.errors) return [...route.errors].sort();
  const statuses = new Set<number>();
  if (route.access !== 'public') statuses.add(401);
  if (route.access !== 'public' && route.access !== 'authenticated') statuses.add(403);
  if (/:/.test(route.path)) {
    statuses.add(400); // a path parameter that is not percent-encoded UTF-8
    statuses.add(404);
  }
  // Every text input has a maximum length (src/domain/input-limits.ts), path parameters included.
  if (/:/.test(route.path) || route.params || route.query || route.body) statuses.add(422);
  if (route.body) {
    statuses.add(400);
    statuses.add(413);
  }
  return [...statuses].sort();
}

class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};

  constructor(private readonly schema: GraphQLSchema) {}

  output(type: GraphQLOutputType): JsonSchema {
    if (isNonNullType(type)) return this.outputNonNull(type.ofType);
    const inner = this.outputNonNull(type);
    return { anyOf: [inner, { type: 'null' }] };
  }

  private outputNonNull(type: GraphQLOutputType): JsonSchema {
    if (isNonNullType(type)) return this.outputNonNull(type.ofType);
    if (isListType(type)) return { type: 'array', items: this.output(type.ofType) };
    if (isScalarType(type)) return scalarSchemas[type.name] ?? { type: 'string' };
    if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((value) => value.name) };
    if (isObjectType(type)) {
      if (!this.components[type.name]) {
        this.components[type.name] = {}; // placeholder for recursive types
        const fields = Object.values(type.getFields());
        this.components[type.name] = {
          type: 'object',
          ...(type.description ? { description: type.description } : {}),
          properties: Object.fromEntries(fields.map((field) => [field.name, this.describe(this.output(field.type), field.description)])),
          required: fields.filter((field) => isNonNullType(field.type)).map((field) => field.name),
          additionalProperties: false,
        };
      }
      return { $ref: `#/components/schemas/${type.name}` };
    }
    return {};
  }

  input(type: GraphQLInputType): JsonSchema {
    if (isNonNullType(type)) return this.inputNonNull(type.ofType);
    return { anyOf: [this.inputNonNull(type), { type: 'null' }] };
  }

  private inputNonNull(type: GraphQLInputType): JsonSchema {
    if (isNonNullType(type)) return this.inputNonNull(type.ofType);
    if (isListType(type)) return { type: 'array', items: this.input(type.ofType) };
    if (isScalarType(type)) return scalarSchemas[type.name] ?? { type: 'string' };
    if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((value) => value.name) };
    if (isInputObjectType(type)) {
      if (!this.components[type.name]) {
        this.components[type.name] = {};
        const fields = Object.values(type.getFields());
        this.components[type.name] = {
          type: 'object',
          ...(type.description ? { description: type.description } : {}),
          properties: Object.fromEntries(fields.map((field) => [field.name, this.describe(this.input(field.type), field.description)])),
          required: fields.filter((field) => isNonNullType(field.type) && field.defaultValue === undefined).map((field) => field.name),
          additionalProperties: false,
        };
      }
      return { $ref: `#/components/schemas/${type.name}` };
    }
    return {};
  }

  private describe(schema: JsonSchema, description: string | null | undefined): JsonSchema {
    return description ? { ...schema, description } : schema;
  }

  rootField(route: RestRoute): GraphQLField<unknown, unknown> | undefined {
    const [operation, name] = route.field.split('.') as ['Query' | 'Mutation', string];
    const type = operation === 'Query' ? this.schema.getQueryType() : this.schema.getMutationType();
    return type?.getFields()[name];
  }
}

const paramSchemas: Record<ParamType, JsonSchema> = {
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  string: { type: 'string' },
};

function parameterSchema(route: RestRoute, writer: SchemaWriter, arg: GraphQLArgument | undefined, name: string): JsonSchema {
  const declared = route.params?.[name];
  if (declared) return paramSchemas[declared];
  return arg ? writer.input(arg.type) : { type: 'string' };
}

function operationOf(route: RestRoute, writer: SchemaWriter): Record<string, unknown> | null {
  const field = writer.rootField(route);
  if (!field) return null;
  const argsByName = new Map(field.args.map((arg) => [arg.name, arg]));
  // Successful GET answers carry an ETag and honour If-None-Match (src/http-etags.ts).
  const conditional = route.method === 'GET' && (route.successStatus ?? 200) === 200;
  const pathNames = [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => match[1] ?? '');
  const parameters = [
    ...pathNames.map((name) => ({ name, in: 'path', required: true, schema: parameterSchema(route, writer, argsByName.get(name), name) })),
    ...(route.query ?? []).map((name) => {
      const arg = argsByName.get(name);
      const schema = parameterSchema(route, writer, arg, name);
      const isObject = arg !== undefined && (isInputObjectType(getNamedType(arg.type)) || ['JSON', 'JSONObject'].includes(getNamedType(arg.type).name));
      return {
        name,
        in: 'query',
        required: arg !== undefined && isNonNullType(arg.type),
        ...(arg?.description ? { description: arg.description } : {}),
        ...(isObject ? { style: 'deepObject', explode: true } : {}),
        schema,
      };
    }),
    ...(route.tokenInQuery
      ? [{ name: 'token', in: 'query', required: false, description: 'The API key, for providers that cannot send an Authorization header.', schema: { type: 'string' } }]
      : []),
    ...(conditional
      ? [{ name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of an earlier answer: 304 with no body while it is unchanged.', schema: { type: 'string' } }]
      : []),
  ];
  const body = route.body
    ? (() => {
        const properties = Object.fromEntries(route.body.map((name) => [name, argsByName.get(name) ? writer.input(argsByName.get(name)!.type) : {}]));
        const required = route.body.filter((name) => {
          const arg = argsByName.get(name);
          return arg !== undefined && isNonNullType(arg.type);
        });
        const schema = { type: 'object', properties, required };
        return {
          required: true,
          content: {
            'application/json': { schema },
            ...(route.acceptsForm ? { 'application/x-www-form-urlencoded': { schema } } : {}),
            // The same body as form fields with Rails-style keys (lead[name], lead[tags][],
            // lead[lead_files_attributes][0][file] as a file part); src/rest/form-body.ts.
            'multipart/form-data': {
              schema: {
                type: 'object',
                description: `The JSON body's fields as Rails-style keys, e.g. ${route.body.map((name) => `${name}[…]`).join(', ')}; a file part stands for a base64 text field.`,
                additionalProperties: true,
              },
            },
          },
        };
      })()
    : undefined;
  const status = route.successStatus ?? 200;
  const success =
    status === 302
      ? {
          description: 'Redirect to the Location header.',
          headers: { Location: { schema: { type: 'string', format: 'uri' }, description: 'Where to go.' } },
        }
      : {
          description: 'Success.',
          ...(conditional ? { headers: { ETag: { schema: { type: 'string' }, description: 'Names this exact answer, for If-None-Match.' } } } : {}),
          content: { 'application/json': { schema: writer.output(field.type) } },
        };
  const notModified = conditional ? { '304': { description: 'Not modified: the answer is still the one named by If-None-Match.' } } : {};
  // 429 (the rate limits) and 500 can answer any operation; errorStatusesOf lists what the operation itself decides.
  const errors = Object.fromEntries(
    [...errorStatusesOf(route), 429, 500].map((code) => [
      String(code),
      {
        description: errorDescriptions[code] ?? 'Error.',
        ...(code === 429 ? { headers: rateLimitedHeaders } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
  const permission = route.access === 'public' ? 'none (public)' : route.access === 'authenticated' ? 'any valid key' : `\`${route.access}\``;
  return {
    operationId: field.name,
    summary: route.summary,
    description: [
      `Spec ${route.spec}. Permission: ${permission}.`,
      route.access !== 'public' && route.access !== 'authenticated' ? permissionCatalogue[route.access] : '',
      field.description ?? '',
    ]
      .filter(Boolean)
      .join('\n\n'),
    ...(route.deprecated ? { deprecated: true } : {}),
    tags: [route.path.split('/').filter((part) => part && !part.startsWith(':') && part !== 'api' && part !== 'v1')[0] ?? 'api'],
    'x-permission': route.access,
    'x-graphql-field': route.field,
    security: route.access === 'public' ? [] : [{ bearer: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: { [String(status)]: success, ...notModified, ...errors },
  };
}

/** The OpenAPI path of a route: `/cars/:id/performance.json` → `/cars/{id}/performance.json`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export function buildOpenApiDocument(schema: GraphQLSchema): Record<string, unknown> {
  const writer = new SchemaWriter(schema);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of restRoutes) {
    const operation = operationOf(route, writer);
    if (!operation) continue;
    const key = openApiPath(route.path);
    paths[key] = { ...(paths[key] ?? {}), [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Dealership Platform Public API',
      version: '1.0.0',
      description:
        'The REST paths of the dealership platform. Every path answers from the same GraphQL schema as `/graphql`. ' +
        'Send the API key as `Authorization: Bearer <key>`. Errors answer `{"error": "<code>", "message": "…"}`, ' +
        'with `field` naming the input at fault on 422.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: dlr_…' } },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: { type: 'string', description: 'A snake_case code to switch on, e.g. unauthorized, car_not_found.' },
            message: { type: 'string' },
            field: { type: 'string', description: 'The parameter or body field at fault (422).' },
          },
          required: ['error', 'message'],
          additionalProperties: false,
        },
        ...writer.components,
      },
    },
  };
}
