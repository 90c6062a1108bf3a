// The OpenAPI document and the server agree, operation by operation, as a client generated from the
// document finds them (item 3 of the contract: "the document says everything the server enforces").
//
// - Valid requests: for every operation of the served document, parameters and bodies are generated
//   FROM THE DOCUMENT (test/support/schema-arbitrary.ts; a value the document's validator refuses is
//   not sent) and sent with a key holding every permission. No answer may be a 5xx, and no 4xx but
//   404 and 409 (a record that is missing or taken), or a 422 naming a field the document marks
//   `x-references` (a value that must name a stored row, which no schema can say exists).
// - Invalid requests: from each operation's documented example (a valid request on the demo data),
//   every constraint the document states for a parameter or a body field is broken in turn (left out
//   when required, too long, out of bounds, of the wrong type, not in the list, not of the pattern,
//   null when not nullable, a list too long): each must be refused with 400 or 422.
//
// The seed is fixed and the runs few, so CI takes a bounded time and a failure repeats;
// OPENAPI_PROPERTY_RUNS=500 runs more cases.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEXT_PATTERN } from '../src/domain/input-limits.ts';
import { railsFormFields } from '../src/rest/form-body.ts';
import { restRoutes } from '../src/rest/routes.ts';
import type { TestApp } from './support/app.ts';
import { validationErrors } from './support/contract.ts';
import { createDemoApp } from './support/demo.ts';
import { SchemaArbitraries, type JsonSchema } from './support/schema-arbitrary.ts';

const SEED = 20_261_121;
const RUNS = Number(process.env.OPENAPI_PROPERTY_RUNS ?? 12);

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
  style?: string;
  example?: unknown;
}

interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: JsonSchema; example?: unknown }> };
  'x-graphql-field': string;
  security?: unknown[];
}

interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}

/** One request as the document describes it: values by parameter, and the JSON body. */
interface Call {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  body?: unknown;
}

let app: TestApp;
let key: string;
let document: Document;
let schemas: SchemaArbitraries;
/** Values of the documented examples that name rows this test's data does not have, and the ones it has. */
let stateful: { leadId: number };

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const operations = (): { path: string; method: string; operation: Operation }[] =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );

/** A query parameter's text: `name=value`, an object as `name[key][inner]=value` (deepObject, nested as Rails reads it). */
function queryPairs(name: string, value: unknown): [string, string][] {
  if (value === undefined || value === null) return [];
  if (isObject(value)) return Object.entries(value).flatMap(([key, inner]) => queryPairs(`${name}[${key}]`, inner));
  return [[name, String(value)]];
}

function urlOf(path: string, call: Call): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_whole, name: string) => encodeURIComponent(String(call.path[name])));
  const query = new URLSearchParams(Object.entries(call.query).flatMap(([name, value]) => queryPairs(name, value)));
  return query.size > 0 ? `${filled}?${query}` : filled;
}

async function send(path: string, method: string, call: Call, form = false, authorized = true): Promise<Response> {
  const headers = new Headers(authorized ? { authorization: `Bearer ${key}` } : {});
  for (const [name, value] of Object.entries(call.header)) if (value !== undefined) headers.set(name, String(value));
  let body: BodyInit | undefined;
  if (call.body !== undefined && form) {
    const data = new FormData();
    for (const [name, value] of Object.entries(railsFormFields(call.body))) {
      for (const text of Array.isArray(value) ? value : [value]) data.append(name, text);
    }
    body = data;
  } else if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers.set('content-type', 'application/json');
  }
  return app.request(urlOf(path, call), { method: method.toUpperCase(), headers, ...(body !== undefined ? { body } : {}) });
}

/** The schema at a field path of a 422 (`lead.payment_attributes.car_id`, `data.leadId`, `lead.tags[2]`) in this operation. */
function schemaAtField(operation: Operation, field: string): JsonSchema | undefined {
  const [first = '', ...rest] = field
    .replace(/\[\d+\]/g, '.[]')
    .split('.')
    .filter(Boolean);
  const parameter = operation.parameters?.find((candidate) => candidate.name === first);
  let schema: JsonSchema | undefined =
    parameter?.schema ??
    (operation.requestBody?.content['application/json']?.schema.properties as Record<string, JsonSchema> | undefined)?.[first];
  for (const part of rest) {
    if (!schema) return undefined;
    const resolved = nonNull(schemas.resolve(schema));
    schema =
      part === '[]'
        ? (resolved.items as JsonSchema | undefined)
        : ((resolved.properties as Record<string, JsonSchema> | undefined)?.[part] ?? undefined);
  }
  return schema ? schemas.resolve(schema) : undefined;
}

/** The branch of a nullable schema that is not null. */
function nonNull(schema: JsonSchema): JsonSchema {
  if (!Array.isArray(schema.anyOf)) return schema;
  const branch = (schema.anyOf as JsonSchema[]).find((candidate) => candidate.type !== 'null');
  const { anyOf: _anyOf, ...beside } = schema;
  return branch ? { ...beside, ...schemas.resolve(branch) } : schema;
}

const refersToRows = (schema: JsonSchema | undefined): boolean =>
  schema !== undefined &&
  (typeof schema['x-references'] === 'string' ||
    (Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some((branch) => typeof branch['x-references'] === 'string')));

/** Where the operation's parts are in the document, for its validator. */
function pointers(path: string, method: string) {
  const base = `/paths/${escapePointer(path)}/${method}`;
  return {
    parameter: (index: number) => `${base}/parameters/${index}/schema`,
    body: `${base}/requestBody/content/application~1json/schema`,
    form: `${base}/requestBody/content/multipart~1form-data/schema`,
  };
}

/** Why the call is not what the document allows, or null when it is. */
function documentedProblem(path: string, method: string, operation: Operation, call: Call): string | null {
  const at = pointers(path, method);
  for (const [index, parameter] of (operation.parameters ?? []).entries()) {
    const value = call[parameter.in][parameter.name];
    if (value === undefined) {
      if (parameter.required) return `${parameter.name} is required`;
      continue;
    }
    const problem = validationErrors(at.parameter(index), value);
    if (problem) return `${parameter.name}: ${problem}`;
  }
  if (operation.requestBody) {
    if (call.body === undefined) return 'the body is required';
    const problem = validationErrors(at.body, call.body);
    if (problem) return `body: ${problem}`;
  }
  return null;
}

/** The demo data's example call of the operation, with the rows this test made where the example's are not here. */
function exampleCall(operation: Operation): Call {
  const call: Call = { path: {}, query: {}, header: {} };
  for (const parameter of operation.parameters ?? []) {
    if (parameter.example !== undefined && parameter.in !== 'header')
      call[parameter.in][parameter.name] = structuredClone(parameter.example);
  }
  const body = operation.requestBody?.content['application/json']?.example;
  if (body !== undefined) call.body = structuredClone(body);
  // The example lead of update_lead and of the event was made by the examples' own run.
  if (operation.operationId === 'update_lead') call.path.id = stateful.leadId;
  if (operation.operationId === 'create_lead_event' && isObject(call.query.data)) call.query.data.leadId = stateful.leadId;
  return call;
}

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  document = (await (await app.request('/openapi.json')).json()) as Document;
  schemas = new SchemaArbitraries(document.components.schemas);
  const created = await app.request('/api/v1/leads', {
    method: 'POST',
    key,
    json: {
      lead: { email: 'property@example.com', phone: '0412 345 678', dealership_id: 1, category: 'Used Vehicle Enquiry', source: 'Website' },
    },
  });
  expect(created.status).toBe(201);
  stateful = { leadId: ((await created.json()) as { lead: { id: number } }).lead.id };
}, 120_000);

describe('requests generated from the OpenAPI document', () => {
  it('covers every operation of the route table', () => {
    for (const { operation } of operations())
      expect(
        restRoutes.find((route) => route.field === operation['x-graphql-field']),
        operation.operationId,
      ).toBeDefined();
    expect(operations().length).toBeGreaterThanOrEqual(21);
  });

  it('that the document allows are never refused but as missing or taken records, and never fail', async () => {
    let sent = 0;
    let requests = 0;
    for (const { path, method, operation } of operations()) {
      const example = exampleCall(operation);
      const parameters = operation.parameters ?? [];
      const part = (where: Parameter['in']) =>
        fc.record(
          Object.fromEntries(
            parameters
              .filter((parameter) => parameter.in === where)
              .map((parameter) => [parameter.name, schemas.of(parameter.schema, example[where][parameter.name])]),
          ),
          {
            requiredKeys: parameters.filter((parameter) => parameter.in === where && parameter.required).map((parameter) => parameter.name),
          },
        );
      const bodySchema = operation.requestBody?.content['application/json']?.schema;
      const calls = fc
        .record({
          path: part('path'),
          query: part('query'),
          header: part('header'),
          body: bodySchema ? schemas.of(bodySchema, example.body) : fc.constant(undefined),
        })
        .map((call): Call => (call.body === undefined ? { path: call.path, query: call.query, header: call.header } : call))
        .filter((call) => documentedProblem(path, method, operation, call) === null);
      await fc.assert(
        fc.asyncProperty(calls, async (call) => {
          requests += 1;
          // An Idempotency-Key is new for each new request (as the document says): a repeated one answers the first request's result.
          if (call.header['Idempotency-Key'] !== undefined)
            call.header['Idempotency-Key'] = `${String(call.header['Idempotency-Key'])}-${requests}`.slice(-255);
          const answers = [await send(path, method, call)];
          // The same body as a Rails-style multipart form, where the document's form allows it (free-form keys are
          // any text in JSON, but not in a form key), is read alike.
          const form = call.body === undefined ? undefined : railsFormFields(call.body);
          if (
            form &&
            operation.requestBody?.content['multipart/form-data'] &&
            validationErrors(pointers(path, method).form, form) === null
          ) {
            // A new request, with a new Idempotency-Key (a form without the JSON's nulls is another body).
            const formCall =
              call.header['Idempotency-Key'] === undefined
                ? call
                : { ...call, header: { ...call.header, 'Idempotency-Key': `form-${requests}` } };
            answers.push(await send(path, method, formCall, true));
          }
          for (const [index, response] of answers.entries()) {
            sent += 1;
            const label = `${method.toUpperCase()} ${urlOf(path, call)}${index === 1 ? ' (multipart)' : ''} ${JSON.stringify(call.body ?? null).slice(0, 600)}`;
            const text = await response.text();
            expect(response.status, `${label} → ${text.slice(0, 400)}`).toBeLessThan(500);
            if (response.status < 400 || response.status === 404 || response.status === 409) continue;
            const error = JSON.parse(text) as { error: string; field?: string };
            const reference = response.status === 422 && error.field !== undefined && refersToRows(schemaAtField(operation, error.field));
            expect(reference, `${label} → ${response.status} ${text.slice(0, 400)}`).toBe(true);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    }
    expect(sent).toBeGreaterThanOrEqual(operations().length * RUNS);
  }, 600_000);
});

/** One way to break a constraint the document states for a value: a value to put in its place (`undefined`: leave it out). */
interface Breach {
  label: string;
  value: unknown;
}

/** The breaches of what `raw` says, for a value at a place where `required` says whether it must be there. */
function breachesOf(raw: JsonSchema, required: boolean, inQuery: boolean): Breach[] {
  const nullable = Array.isArray(raw.anyOf) && (raw.anyOf as JsonSchema[]).some((branch) => branch.type === 'null');
  const schema = nonNull(schemas.resolve(raw));
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const breaches: Breach[] = [];
  if (required) breaches.push({ label: 'missing', value: undefined });
  if (!nullable && !inQuery && !types.includes('null')) breaches.push({ label: 'null', value: null });
  if (Array.isArray(schema.enum))
    breaches.push({ label: 'not in the list', value: typeof schema.enum[0] === 'number' ? 987_654 : 'no-such-value-zz' });
  if (types.includes('string')) {
    if (!inQuery) breaches.push({ label: 'wrong type', value: 12_345 });
    if (typeof schema.maxLength === 'number') breaches.push({ label: 'too long', value: 'x'.repeat(schema.maxLength + 1) });
    if (typeof schema.pattern === 'string') {
      const pattern = new RegExp(schema.pattern, 'u');
      const unlike = ['a\u0000b', 'x\ud800y', '99/99/9999', 'not valid here!', ' ', 'x'].find((text) => !pattern.test(text));
      if (unlike !== undefined)
        breaches.push({ label: `not of the pattern (${schema.pattern === TEXT_PATTERN ? 'NUL' : 'form'})`, value: unlike });
    }
  }
  if (types.includes('integer') || types.includes('number')) {
    breaches.push({ label: 'wrong type', value: 'abc' });
    if (typeof schema.minimum === 'number') breaches.push({ label: 'below the minimum', value: schema.minimum - 1 });
    if (typeof schema.maximum === 'number') breaches.push({ label: 'above the maximum', value: schema.maximum + 1 });
    if (types.includes('integer') && !inQuery) breaches.push({ label: 'not whole', value: 1.5 });
  }
  if (types.includes('boolean')) breaches.push({ label: 'wrong type', value: 'maybe' });
  if (types.includes('object') && !inQuery) breaches.push({ label: 'wrong type', value: 'text' });
  if (types.includes('array')) {
    breaches.push({ label: 'wrong type', value: { not: 'a list' } });
    if (typeof schema.maxItems === 'number' && isObject(schema.items)) {
      const item = fc.sample(schemas.of(schema.items), { numRuns: 1, seed: SEED })[0];
      breaches.push({ label: 'too many items', value: Array.from({ length: schema.maxItems + 1 }, () => structuredClone(item)) });
    }
  }
  return breaches;
}

/** An object of `schema` the document allows, for a place the example leaves empty. */
function someRecord(schema: JsonSchema): unknown {
  return fc.sample(schemas.of(schema).filter(isObject), { numRuns: 1, seed: SEED })[0];
}

describe('requests that break a constraint the document states', () => {
  it('are refused with 400 or 422, each constraint of each parameter and body field in turn', async () => {
    let checked = 0;
    const failures: string[] = [];
    for (const { path, method, operation } of operations()) {
      const base = exampleCall(operation);
      const baseProblem = documentedProblem(path, method, operation, base);
      expect(baseProblem, `${operation.operationId}: the example call is what the document allows`).toBeNull();
      const attempt = async (label: string, call: Call, credential = false): Promise<void> => {
        // A breach the document does not see (a value it allows after all) proves nothing here.
        if (documentedProblem(path, method, operation, call) === null) return;
        checked += 1;
        // The key in ?token= is the request's credential: sent alone, and a bad one is 401 like any bad key.
        const response = await send(path, method, call, false, !credential);
        const refused = credential ? response.status === 401 : response.status === 400 || response.status === 422;
        if (!refused) {
          failures.push(`${operation.operationId} ${label}: ${response.status} ${(await response.text()).slice(0, 200)}`);
        }
      };
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'header') continue;
        for (const breach of breachesOf(parameter.schema, parameter.required, true)) {
          if (parameter.in === 'path' && breach.value === undefined) continue; // no path without it
          const call = structuredClone(base);
          if (breach.value === undefined) delete call[parameter.in][parameter.name];
          else call[parameter.in][parameter.name] = breach.value;
          await attempt(
            `${parameter.in} ${parameter.name} ${breach.label}`,
            call,
            parameter.in === 'query' && parameter.name === 'token' && operation.security?.length !== 0,
          );
        }
      }
      const bodySchema = operation.requestBody?.content['application/json']?.schema;
      if (!bodySchema) continue;
      // Every field of the body, two records deep (`lead.address_attributes.postcode`).
      const walk = async (schema: JsonSchema, at: string[], depth: number): Promise<void> => {
        const record = nonNull(schemas.resolve(schema));
        const required = (record.required ?? []) as string[];
        for (const [name, field] of Object.entries((record.properties ?? {}) as Record<string, JsonSchema>)) {
          for (const breach of breachesOf(field, required.includes(name), false)) {
            const call = structuredClone(base);
            const parent = placeAt(call, at, someRecord, bodySchema);
            if (!parent) continue;
            if (breach.value === undefined) delete parent[name];
            else parent[name] = breach.value;
            await attempt(`${[...at, name].join('.')} ${breach.label}`, call);
          }
          const inner = nonNull(schemas.resolve(field));
          if (depth < 2 && inner.type === 'object' && isObject(inner.properties)) await walk(field, [...at, name], depth + 1);
        }
      };
      await walk(bodySchema, [], 0);
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  }, 600_000);
});

/**
 * The object at `at` in the call's body, made from a value the document allows where the example has
 * none (so that only the field under test breaks a rule); null when none can be made.
 */
function placeAt(
  call: Call,
  at: readonly string[],
  make: (schema: JsonSchema) => unknown,
  bodySchema: JsonSchema,
): Record<string, unknown> | null {
  if (!isObject(call.body)) call.body = {};
  let node = call.body as Record<string, unknown>;
  let schema = bodySchema;
  for (const name of at) {
    schema = (nonNull(schemas.resolve(schema)).properties as Record<string, JsonSchema>)[name] ?? {};
    if (!isObject(node[name])) {
      const made = make(nonNull(schemas.resolve(schema)));
      if (!isObject(made)) return null;
      node[name] = made;
    }
    node = node[name] as Record<string, unknown>;
  }
  return node;
}
