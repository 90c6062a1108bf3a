// The OpenAPI 3.1 document of the REST door, from the route table, the zod records of the routes' arguments and the GraphQL
// types of the routed root fields (the REST body IS the root field's result). Not Sofa's OpenAPI(): it writes OpenAPI 3.0
// without nullability, errors or headers, and `:id.json` as `{id.json}`, so post-processing it would be a rewrite.
import {
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLSchema,
  type GraphQLType,
} from 'graphql';
import { KEY_PATTERN } from '../auth/api-keys.ts';
import { permissionCatalogue, type Permission } from '../auth/permissions.ts';
import { restMayCall } from '../auth/api-view.ts';
import {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  idempotencyKeyReused,
} from '../domain/leads/idempotency.ts';
import { leadSourceLists, type LeadSourceLists } from '../domain/leads/values.ts';
import { isPlainObject } from '../lib/json.ts';
import { railsFormFields, railsFormSchema } from './form-body.ts';
import {
  applyInputLimits,
  recordArguments,
  withoutNull,
  withPortablePatterns,
  type InputSchemaOptions,
  type JsonSchema,
} from './input-schemas.ts';
import {
  openApiPath,
  parseParam,
  pathParamNames,
  restRoutes,
  restTags,
  rootFieldIn,
  routeTakesIdempotencyKey,
  type RestRoute,
} from './routes.ts';
import { accessOfField, type FieldAccess } from '../auth/field-access.ts';
import { restSchema } from './rest-schema.ts';
import operationExamples from './openapi-examples.json' with { type: 'json' };
import { deprecationHeaderDocs } from './deprecation.ts';
import { RECORD_EVENT_TYPES, type RecordEventType } from '../domain/record-events.ts';
import { readPermissionOfEvent, secretRotatedMeanwhile, subscriptionDisabled, tooManyWebhookSubscriptions } from '../domain/webhooks.ts';
import { webhookPayloadShape } from './webhook-payload-shape.ts';
import { databaseUnavailable, forbidden, invalidDealership, invalidInput, notFound, rateLimited, unauthenticated } from '../errors.ts';
import { internalError, malformedJson, malformedPathParameter, payloadTooLarge } from './errors.ts';
import { SETTINGS } from '../config/index.ts';
import { unknownPostcode } from '../domain/dealerships.ts';
import { noPlatformAccount, tokenExpired, tokenNotFound } from '../domain/partner-sign-on.ts';
import { noLeadFound } from '../domain/lead-events.ts';
import { leadTooOld } from '../domain/leads/update.ts';
import { stocknumTaken } from '../domain/car-updates.ts';
import { carAlreadyReserved } from '../domain/car-reservations.ts';

/** An API key of the right form, for examples (no such key exists). */
const EXAMPLE_API_KEY = 'dlr_0a1B2c3D4e5F_6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V2w3X4y';
/** What the examples show for `request_id`: each answer names its own request, so no real one is shown. */
const EXAMPLE_REQUEST_ID = '0b5a1c2e-7f3d-4e8a-9c61-2d4f6a8b0e13';

const ref = (kind: 'headers' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });
/** A media type's schema, with its example when there is one. */
const mediaType = <Schema>(schema: Schema, example: unknown) => (example !== undefined ? { schema, example } : { schema });

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

/** What each error status means, its first `code` being the one its example shows unless a route says otherwise. */
const errorDescriptions: Record<number, string> = {
  400: '`malformed_json`: the body is not valid JSON; `malformed_request`: a path parameter is not valid percent-encoded UTF-8.',
  401: '`unauthorized`: a missing, malformed, unknown, expired or revoked API key (one body for all).',
  403: '`forbidden`: the key lacks the permission this operation needs.',
  404: 'Not found, or outside the dealerships of the key (answered alike).',
  409: 'Conflict with the stored state.',
  410: 'Gone: the token expired or was used already.',
  413: '`payload_too_large`: the request body is over the size limit.',
  422: '`invalid_input`: `field` names the parameter or body field at fault, and `message` says why.',
  429: '`rate_limited`: a rate limit was reached (per key, dealership, cost or client address); `Retry-After` says how many seconds to wait, `RateLimit` and `RateLimit-Policy` which limit.',
  500: '`internal_error`: unexpected (logged; nothing internal in the body).',
  503: '`unavailable`: the database did not answer, or the instance was executing as many operations as it takes at once; `Retry-After` says how many seconds to wait before retrying (a write is safe to retry with its `Idempotency-Key`).',
};
/** The example code of the statuses whose description names none. */
const uncodedErrors: Record<number, string> = { 404: 'not_found', 409: 'conflict', 410: 'token_expired' };

/** What an example says for an `error` code with no sample below (test/openapi.test.ts allows none). */
export const UNSAMPLED_ERROR_MESSAGE = 'The request failed.';

/** The body of each `error` code the examples show, built by the code that answers it. */
const errorSamples: Record<string, () => { message: string }> = {
  malformed_json: malformedJson,
  malformed_request: () => malformedPathParameter('id'),
  unauthorized: unauthenticated,
  forbidden,
  invalid_dealership: invalidDealership,
  payload_too_large: () => payloadTooLarge(Number(SETTINGS.BODY_LIMIT_BYTES.default)),
  invalid_input: () => invalidInput('id', (parseParam('integer', 'abc') as { reason: string }).reason),
  email_required: () => invalidInput('email', 'is required', 'email_required'),
  geolocation_error: () => unknownPostcode('9999'),
  idempotency_key_reused: idempotencyKeyReused,
  no_platform_account: noPlatformAccount,
  no_lead_found: noLeadFound,
  lead_too_old: leadTooOld,
  stocknum_taken: () => stocknumTaken('MEL1002'),
  car_already_reserved: carAlreadyReserved,
  token_not_found: tokenNotFound,
  token_expired: tokenExpired,
  rate_limited: () => rateLimited(30),
  too_many_webhook_subscriptions: tooManyWebhookSubscriptions,
  webhook_secret_rotated_meanwhile: secretRotatedMeanwhile,
  webhook_subscription_disabled: subscriptionDisabled,
  internal_error: internalError,
  unavailable: databaseUnavailable,
};

const codeList = (names: readonly string[], separator = ', '): string => names.map((name) => `\`${name}\``).join(separator);

const firstCode = (text: string | undefined): string | undefined => /`([a-z_]+)`/.exec(text ?? '')?.[1];

/** The example body of an error status: the first `error` code the route's outcome names, worded as the service words it. */
function errorExample(route: RestRoute, status: number): Record<string, string> {
  const code = firstCode(route.outcomes?.[status]) ?? uncodedErrors[status] ?? firstCode(errorDescriptions[status]) ?? 'error';
  const thing = /^(.+)_not_found$/.exec(code)?.[1];
  const message = errorSamples[code]?.().message ?? (thing ? notFound(thing).message : UNSAMPLED_ERROR_MESSAGE);
  const field = /^([a-z_.]+): /.exec(message)?.[1];
  return { error: code, message, ...(status === 422 && field ? { field } : {}), request_id: EXAMPLE_REQUEST_ID };
}

function errorDescriptionOf(route: RestRoute, access: FieldAccess, status: number): string {
  const own = route.outcomes?.[status];
  if (own) return own;
  const permissions = codeList(access.permissions, ' or ');
  if (status === 403 && permissions) return `\`forbidden\`: the key lacks ${permissions}.`;
  if (status === 401 && permissions && access.deniedStatus === 401) {
    return `\`unauthorized\`: a missing or invalid key, or a key without ${permissions} (the message says which).`;
  }
  return errorDescriptions[status] ?? 'Error.';
}

/** The error statuses a route can answer with: its own list, else what its shape implies and its outcomes describe. */
export function errorStatusesOf(route: RestRoute, access: FieldAccess): number[] {
  if (route.errors) return [...route.errors].sort();
  const statuses = [
    ...(access.access !== 'public' ? [401] : []),
    ...(access.permissions.length > 0 && (access.deniedStatus === 403 || access.alsoNeeds.length > 0) ? [403] : []),
    // A path parameter that is not percent-encoded UTF-8, or names nothing.
    ...(/:/.test(route.path) ? [400, 404] : []),
    // Every text input has a maximum length, path parameters included, and any route refuses a query key no input may have.
    422,
    ...(route.body ? [400, 413] : []),
    ...Object.keys(route.outcomes ?? {}).map(Number),
  ];
  return [...new Set(statuses)].sort();
}

type FieldLike = { name: string; type: GraphQLType; description?: string | null | undefined; defaultValue?: unknown };

/** The GraphQL types' JSON Schemas, each object or input object a component. */
class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};

  constructor(readonly schema: GraphQLSchema) {}

  /** A nullable type's schema allows null (the JSON scalar, any value, includes it already). */
  of(type: GraphQLType): JsonSchema {
    if (isNonNullType(type)) return this.nonNull(type.ofType);
    const inner = this.nonNull(type);
    return Object.keys(inner).length === 0 ? inner : { anyOf: [inner, { type: 'null' }] };
  }

  private nonNull(type: GraphQLType): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.of(type.ofType) };
    if (isScalarType(type)) return { ...(scalarSchemas[type.name] ?? { type: 'string' }) };
    if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((value) => value.name) };
    if (!isObjectType(type) && !isInputObjectType(type)) return {};
    if (!this.components[type.name]) {
      this.components[type.name] = {}; // a placeholder while a recursive type is written
      this.components[type.name] = this.object(type.description, Object.values(type.getFields()));
    }
    return ref('schemas', type.name);
  }

  /** An object of these fields: those non-null and without a default are required. */
  object(description: string | null | undefined, fields: readonly FieldLike[]): JsonSchema {
    return {
      type: 'object',
      ...(description ? { description } : {}),
      properties: Object.fromEntries(
        fields.map((field) => [field.name, { ...this.of(field.type), ...(field.description ? { description: field.description } : {}) }]),
      ),
      required: fields.filter((field) => isNonNullType(field.type) && field.defaultValue === undefined).map((field) => field.name),
      additionalProperties: false,
    };
  }
}

interface OperationExample {
  /** The path and query parameters of the demo call, by name. */
  parameters?: Record<string, unknown>;
  request?: unknown;
  response?: unknown;
}

/** Each operation's demo call and answer (test/openapi-examples.test.ts writes them), by root field. */
const examples: Readonly<Record<string, OperationExample>> = operationExamples;

interface OperationSource {
  route: RestRoute;
  writer: SchemaWriter;
  inputs: InputSchemaOptions;
  argsByName: Map<string, GraphQLArgument>;
  declared: ReturnType<typeof recordArguments> | undefined;
  example: OperationExample | undefined;
}

/** An argument's schema and whether it is required: its declaration's, else its GraphQL type's, with the limits on every input. */
function argumentOf({ declared, argsByName, writer, inputs }: OperationSource, name: string): { schema: JsonSchema; required: boolean } {
  const fromDeclaration = declared?.properties[name];
  if (declared && fromDeclaration) return { schema: fromDeclaration, required: declared.required.includes(name) };
  const arg = argsByName.get(name);
  const schema = applyInputLimits(arg ? writer.of(arg.type) : { type: 'string' }, name, '', inputs);
  return { schema, required: arg !== undefined && isNonNullType(arg.type) };
}

// Swagger UI sends every example it is given ("Try it out"), so an optional parameter the demo call
// leaves out has none: a value of its own would change the call (`lookup_by=vin` with a car's id is a 404).
function parameterExample(source: OperationSource, name: string, schema: JsonSchema, required: boolean): unknown {
  const fromCall = source.example?.parameters?.[name];
  if (fromCall !== undefined || !required) return fromCall;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  return schema.type === 'boolean' ? true : undefined;
}

function parameterOf(source: OperationSource, name: string, where: 'path' | 'query') {
  // A query string or path carries text, never null.
  const argument = argumentOf(source, name);
  const schema = withoutNull(argument.schema);
  const { description: schemaDescription, examples: _examples, ...bare } = schema;
  const description = source.argsByName.get(name)?.description ?? (typeof schemaDescription === 'string' ? schemaDescription : undefined);
  const required = where === 'path' || argument.required;
  const example = parameterExample(source, name, schema, required);
  return {
    name,
    in: where,
    required,
    ...(description ? { description } : {}),
    ...(bare.type === 'object' || typeof bare.$ref === 'string' ? { style: 'deepObject', explode: true } : {}),
    schema: bare,
    ...(example !== undefined ? { example } : {}),
  };
}

// No examples: Swagger UI would send them with each "Try it out" (a key that does not exist, one
// Idempotency-Key whatever the body, an ETag that matches nothing).
const optionalParameter = (name: string, where: 'query' | 'header', description: string, schema: JsonSchema) =>
  ({ name, in: where, required: false, description, schema }) as const;
const extraParameters = {
  token: optionalParameter(
    'token',
    'query',
    `The API key, for providers that cannot send an Authorization header (\`${EXAMPLE_API_KEY}\` is of its form).`,
    { type: 'string', pattern: KEY_PATTERN.source },
  ),
  idempotencyKey: optionalParameter(
    IDEMPOTENCY_HEADER,
    'header',
    `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters, new for each new request: a retry with the same key and body answers the first ` +
      'result without doing the work again; the same key with another body is 422 `idempotency_key_reused`. A UUID ' +
      '(`7f9c2ba4-e88f-4d1c-9a57-5c1d0e0c3a11`) is a good one.',
    { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, pattern: IDEMPOTENCY_KEY_PATTERN.source },
  ),
  ifNoneMatch: optionalParameter(
    'If-None-Match',
    'header',
    'The ETag of an earlier answer (e.g. `"3q2-7Kx9bV"`): 304 with no body while it is unchanged.',
    { type: 'string' },
  ),
};

/** Successful GET answers carry an ETag and honour If-None-Match. */
const isConditional = (route: RestRoute): boolean => route.method === 'GET' && (route.successStatus ?? 200) === 200;

function parametersOf(source: OperationSource) {
  const { route } = source;
  return [
    ...pathParamNames(route.path).map((name) => parameterOf(source, name, 'path')),
    ...(route.query ?? []).map((name) => parameterOf(source, name, 'query')),
    ...(route.tokenInQuery ? [extraParameters.token] : []),
    ...(routeTakesIdempotencyKey(route) ? [extraParameters.idempotencyKey] : []),
    ...(isConditional(route) ? [extraParameters.ifNoneMatch] : []),
  ];
}

function requestBodyOf(source: OperationSource, bodyNames: readonly string[]) {
  const args = bodyNames.map((name) => ({ name, ...argumentOf(source, name) }));
  const properties = Object.fromEntries(args.map((arg) => [arg.name, arg.schema]));
  const schema = { type: 'object', properties, required: args.filter((arg) => arg.required).map((arg) => arg.name) };
  const example = source.example?.request;
  const json = mediaType(schema, example);
  return {
    required: true,
    content: {
      'application/json': json,
      ...(source.route.acceptsForm ? { 'application/x-www-form-urlencoded': json } : {}),
      // The same body as form fields with Rails-style keys (lead[name], lead[tags][], a file part).
      'multipart/form-data': mediaType(
        railsFormSchema(schema, source.writer.components),
        example === undefined ? undefined : railsFormFields(example),
      ),
    },
  };
}

const rateLimitHeaders = { 'RateLimit-Policy': ref('headers', 'RateLimit-Policy'), RateLimit: ref('headers', 'RateLimit') };
const requestIdHeader = { 'Request-Id': ref('headers', 'Request-Id') };
const retryAfterHeader = { 'Retry-After': ref('headers', 'Retry-After') };

const errorResponse = (description: string, headers: object, example?: object) => ({
  description,
  headers,
  content: { 'application/json': mediaType(ref('schemas', 'Error'), example) },
});

function responsesOf(source: OperationSource, field: GraphQLField<unknown, unknown>, access: FieldAccess) {
  const { route } = source;
  const status = route.successStatus ?? 200;
  const response = source.example?.response;
  // Every answer names its request, and a deprecated operation's every answer says so.
  const answerHeaders = { ...requestIdHeader, ...(route.deprecated ? deprecationHeaderDocs(route.deprecated) : {}) };
  const success =
    status === 302
      ? {
          description: 'Redirect to the Location header.',
          headers: { Location: { schema: { type: 'string', format: 'uri' }, description: 'Where to go.' }, ...answerHeaders },
        }
      : {
          description: 'Success.',
          headers: {
            ...(isConditional(route)
              ? { ETag: { schema: { type: 'string' }, description: 'Names this exact answer, for If-None-Match.' } }
              : {}),
            ...rateLimitHeaders,
            ...answerHeaders,
          },
          content: { 'application/json': mediaType(source.writer.of(field.type), response) },
        };
  // 429 (the rate limits), 500 and 503 (the database did not answer, the instance was busy) can answer any operation.
  const errors = [...errorStatusesOf(route, access), 429, 500, 503].map((code) => {
    const retryHeaders = code === 429 ? { ...rateLimitHeaders, ...retryAfterHeader } : code === 503 ? retryAfterHeader : {};
    const headers = { ...retryHeaders, ...answerHeaders };
    return [String(code), errorResponse(errorDescriptionOf(route, access, code), headers, errorExample(route, code))];
  });
  return {
    [String(status)]: success,
    ...(isConditional(route) ? { '304': { description: 'Not modified: the answer is still the one named by If-None-Match.' } } : {}),
    ...Object.fromEntries(errors),
    // An operation that only redirects answers every other status with the error body.
    ...(status === 302 ? { default: errorResponse('Any other status: an error.', requestIdHeader) } : {}),
  };
}

/** Who may call the operation, in words: the first paragraph of its description. */
function accessTextOf(access: FieldAccess): string {
  const { permissions, alsoNeeds, deniedStatus } = access;
  if (access.access === 'public') return 'No API key: anyone may call it.';
  if (access.access === 'authenticated') return 'Any valid API key.';
  const also = alsoNeeds.length > 0 ? `, without ${codeList(alsoNeeds, ' or ')} 403 \`forbidden\`` : '';
  return (
    `Needs a key with ${codeList(permissions, ' and ')}; without \`${access.access}\` the answer is ` +
    `${deniedStatus} \`${deniedStatus === 401 ? 'unauthorized' : 'forbidden'}\`${also}.`
  );
}

/** The route's operation, or null when the schema has no such root field or the key's view may not call it. */
function operationOf(route: RestRoute, writer: SchemaWriter, inputs: InputSchemaOptions, options: OpenApiOptions & { now: Date }) {
  const field = rootFieldIn(route, writer.schema);
  if (!field) return null;
  const access = accessOfField(field);
  if (options.viewOf && !restMayCall(access, options.viewOf)) return null;
  const source: OperationSource = {
    route,
    writer,
    inputs,
    argsByName: new Map(field.args.map((arg) => [arg.name, arg])),
    declared: route.input ? recordArguments(route.input(options.now), field.name, inputs) : undefined,
    example: examples[route.field],
  };
  // Written in this order (parameters, body, responses): each may add components to the writer.
  const parameters = parametersOf(source);
  const body = route.body ? requestBodyOf(source, route.body) : undefined;
  const responses = responsesOf(source, field, access);
  const { permissions, deniedStatus } = access;
  return {
    operationId: field.name,
    summary: route.summary,
    description: [
      accessTextOf(access),
      ...permissions.map((name) => `\`${name}\`: ${permissionCatalogue[name]}`),
      field.description,
      route.deprecated &&
        `Deprecated since ${route.deprecated.since}: answers carry \`Deprecation\` and \`Sunset\`; the path may stop answering from ${route.deprecated.sunset}.`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    ...(route.deprecated ? { deprecated: true } : {}),
    tags: [route.tag],
    'x-permission': access.access,
    'x-permissions': permissions,
    ...(permissions.length > 0 ? { 'x-permission-denied-status': deniedStatus } : {}),
    'x-graphql-field': route.field,
    security: access.access === 'public' ? [] : [{ bearer: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

export type OpenApiOperation = NonNullable<ReturnType<typeof operationOf>>;

export interface OpenApiOptions {
  /** This service's public origin (PUBLIC_URL): the document's server. */
  publicUrl: string;
  /** Where integrators write for help (API_CONTACT_EMAIL), if set. */
  contactEmail?: string | null;
  /** The lead sources this deployment accepts (Config.leadSources); the documented defaults when not given. */
  leadSources?: LeadSourceLists;
  /** The day the document is written on (a year's range can depend on it); today when not given. */
  now?: Date;
  /** A key's permissions: the document is that key's view, with only the operations it may call and what they reach. */
  viewOf?: ReadonlySet<Permission>;
}

function documentInfo(publicUrl: string, contactEmail: string | null | undefined, viewOf: ReadonlySet<Permission> | undefined) {
  const view = viewOf
    ? '\n\nThis is the view of the API key that asked for it: only the operations its permissions let it call ' +
      `(${viewOf.size > 0 ? codeList([...viewOf].sort()) : 'none'}). Without a key, \`/openapi.json\` lists every operation.`
    : '';
  return {
    title: 'Dealership Platform Public API',
    version: '1.0.0',
    description:
      'The REST paths of the dealership platform, for integrators: cars and their performance, the new-vehicle catalogue and offers, ' +
      'leads, contacts, dealership locations, plugins and partner sign-on. The same data is served as GraphQL at `/graphql`.\n\n' +
      'Send the API key as `Authorization: Bearer <key>`. Each operation says which permission it needs and what a key without it ' +
      'gets. Errors answer `{"error": "<code>", "message": "…"}`, with `field` naming the input at fault on 422; every operation ' +
      'documents the codes it answers. Answers may carry `RateLimit-Policy` and `RateLimit`; a 429 carries `Retry-After`.' +
      view,
    contact: { name: 'Dealership Platform API support', url: `${publicUrl}/docs`, ...(contactEmail ? { email: contactEmail } : {}) },
    license: {
      name: 'Proprietary: for use by integrators under their agreement with the dealership platform',
      identifier: 'LicenseRef-Dealership-Platform-Integrator-Agreement',
    },
  };
}

/** The response headers every operation refers to (`#/components/headers/…`). */
const sharedHeaders = {
  'Request-Id': {
    description:
      "This request's id: the caller's X-Request-Id when it is at most 128 characters of letters, digits and . _ : - / + = @, else a valid traceparent's trace id, else a new UUID. Error bodies quote it as request_id.",
    schema: { type: 'string', maxLength: 128 },
    example: EXAMPLE_REQUEST_ID,
  },
  'RateLimit-Policy': {
    description: 'The rate limit that applies to the key: `q` requests per window of `w` seconds (IETF RateLimit header fields).',
    schema: { type: 'string' },
    example: '"per-key";q=600;w=60',
  },
  RateLimit: {
    description: 'What is left of the current window: `r` requests remain, and the window resets in `t` seconds.',
    schema: { type: 'string' },
    example: '"per-key";r=598;t=42',
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 }, example: 42 },
};

const errorSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'A snake_case code to switch on, e.g. unauthorized, car_not_found.' },
    message: { type: 'string', description: 'What went wrong, in words meant for the integrator.' },
    field: { type: 'string', description: 'The parameter or body field at fault (422).' },
    request_id: {
      type: 'string',
      description: 'The id of this request, as in the Request-Id header: quote it when asking about the error.',
    },
  },
  required: ['error', 'message', 'request_id'],
  additionalProperties: false,
};

// ─── Outbound webhooks (OAS 3.1 `webhooks`): what the service POSTs to a subscription's URL ───

/** The Standard Webhooks headers the webhook worker signs every delivery with. */
const webhookHeaderParameters = [
  ['webhook-id', "The delivery's id, the same on every attempt and redelivery: deduplicate on it.", '^msg_[0-9a-f]{32}$'],
  [
    'webhook-timestamp',
    "The attempt's time, in whole seconds since 1970-01-01T00:00:00Z: refuse one too far from your clock.",
    '^[0-9]{1,12}$',
  ],
  [
    'webhook-signature',
    "`v1,` and the base64 HMAC-SHA256, keyed with the subscription's secret (`whsec_…`, its base64 after the prefix), of " +
      '`<webhook-id>.<webhook-timestamp>.<body>`; during a secret rotation two of them, space-separated, one per secret. ' +
      'The `standardwebhooks` packages verify it (docs/webhooks.md).',
    '^v1,[A-Za-z0-9+/]+={0,2}(?: v1,[A-Za-z0-9+/]+={0,2})*$',
  ],
].map(([name, description, pattern]) => ({ name, in: 'header', required: true, description, schema: { type: 'string', pattern } }));

/** An event type's payload `data`: the REST body's own component when it has the same fields. */
function webhookDataSchema(schema: GraphQLSchema, writer: SchemaWriter, type: RecordEventType): JsonSchema {
  const { recordType, fields } = webhookPayloadShape(schema, type);
  const restBody = writer.components[recordType.name]?.properties;
  const restNames = isPlainObject(restBody) ? Object.keys(restBody).sort().join() : null;
  const names = fields.map((field) => field.name);
  if (restNames === names.sort().join()) return ref('schemas', recordType.name);
  const component = `${recordType.name}WebhookData`;
  writer.components[component] ??= writer.object(
    `The ${recordType.name} as the subscribing key reads it when the delivery is sent (personal data null without \`read:personal_data\`), each field as the REST door names and types it.`,
    fields.map(({ name, field }) => ({ name, type: field.type, description: field.description })),
  );
  return ref('schemas', component);
}

/** One event type's webhook: the POST a subscription's URL receives, its signature headers and body. */
function webhookOf(schema: GraphQLSchema, writer: SchemaWriter, type: RecordEventType) {
  // `lead_event.created` → `LeadEventCreated`
  const name = type.replace(/(?:^|[._])([a-z])/g, (_whole, letter: string) => letter.toUpperCase());
  writer.components[`${name}Webhook`] ??= {
    type: 'object',
    description: `The body of a \`${type}\` delivery.`,
    properties: {
      type: { type: 'string', const: type, description: 'The event type.' },
      timestamp: { type: 'string', format: 'date-time', description: 'When the change was committed.' },
      data: { ...webhookDataSchema(schema, writer, type), description: 'The record the event is about, read when the delivery is sent.' },
    },
    required: ['type', 'timestamp', 'data'],
    additionalProperties: false,
  };
  return {
    post: {
      operationId: `webhook_${type.replace(/\./g, '_')}`,
      summary: `The \`${type}\` event, POSTed to a subscribed URL`,
      description:
        `Sent to each enabled subscription to \`${type}\` of the record's dealership, signed per Standard Webhooks. ` +
        `The subscribing key needs \`${readPermissionOfEvent(type)}\` (and reach to the dealership) when the delivery is sent, or the delivery is skipped. ` +
        'Delivery is at least once, in event order per record (docs/webhooks.md).',
      tags: ['webhooks'],
      security: [],
      parameters: webhookHeaderParameters,
      requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', `${name}Webhook`) } } },
      responses: {
        '2XX': { description: 'Received: answer quickly and do the work afterwards.' },
        '4XX': { description: 'A failed attempt: retried with backoff until WEBHOOK_RETRY_HOURS, then the subscription is disabled.' },
        '5XX': { description: 'A failed attempt, as is no answer within 10 seconds, or a redirect (never followed).' },
      },
    },
  };
}

export function buildOpenApiDocument(schema: GraphQLSchema, options: OpenApiOptions): Record<string, unknown> {
  const { viewOf } = options;
  // The REST door's own schema: the shapes its bodies have, without the graph-only fields.
  const writer = new SchemaWriter(restSchema(schema));
  const inputs: InputSchemaOptions = { components: writer.components, valueLists: options.leadSources ?? leadSourceLists() };
  const written = { ...options, now: options.now ?? new Date() };
  const paths: Record<string, Record<string, unknown>> = {};
  const listedTags = new Set<string>();
  for (const route of restRoutes) {
    const operation = operationOf(route, writer, inputs, written);
    if (!operation) continue;
    paths[openApiPath(route.path)] = { ...paths[openApiPath(route.path)], [route.method.toLowerCase()]: operation };
    listedTags.add(route.tag);
  }
  // A key's view lists the event types it may subscribe to.
  const events = RECORD_EVENT_TYPES.filter((type) => !viewOf || (viewOf.has('manage:webhook') && viewOf.has(readPermissionOfEvent(type))));
  const webhooks = Object.fromEntries(events.map((type) => [type, webhookOf(schema, writer, type)]));
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  if (events.length > 0) listedTags.add('webhooks');
  // The server's patterns are JavaScript's; every client's engine reads the document's.
  return withPortablePatterns({
    openapi: '3.1.0',
    info: documentInfo(publicUrl, options.contactEmail, viewOf),
    servers: [{ url: publicUrl, description: 'This service' }],
    security: [{ bearer: [] }],
    tags: Object.entries(restTags)
      .filter(([name]) => !viewOf || listedTags.has(name))
      .map(([name, description]) => ({ name, description })),
    ...(viewOf ? { 'x-permissions': [...viewOf].sort() } : {}),
    paths,
    ...(events.length > 0 ? { webhooks } : {}),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: dlr_…' } },
      headers: sharedHeaders,
      schemas: { Error: errorSchema, ...writer.components },
    },
  });
}
