// Every operation whose body may be sent as multipart/form-data (Rails-style keys, src/rest/form-body.ts):
// its form schema says what its JSON schema says, as the server reads the form. The form becomes the
// JSON body, so what the JSON body requires the form requires (a client generated from the document,
// such as openapi-fetch, must not compile `body: { lead: 'oops' }`); a part the operation does not
// read is ignored, as an unknown JSON field is; and the server agrees with both, on the demo data.
import { beforeAll, describe, expect, it } from 'vitest';
import { railsFormFields } from '../src/rest/form-body.ts';
import type { TestApp } from './support/app.ts';
import { validationErrors } from './support/contract.ts';
import { createDemoApp } from './support/demo.ts';

type JsonSchema = Record<string, unknown>;
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, { schema: JsonSchema; example?: unknown }> };
  responses: Record<string, unknown>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}

let app: TestApp;
let key: string;
let document: Document;
let leadId: number;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
  document = (await (await app.request('/openapi.json')).json()) as Document;
  const created = await app.request('/api/v1/leads', {
    method: 'POST',
    key,
    json: {
      lead: { email: 'forms@example.com', phone: '0412 345 678', dealership_id: 1, category: 'Used Vehicle Enquiry', source: 'Website' },
    },
  });
  expect(created.status).toBe(201);
  leadId = ((await created.json()) as { lead: { id: number } }).lead.id;
}, 120_000);

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every operation with a multipart/form-data body, walked from the served document. */
function formOperations(): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod)
      .filter(([, operation]) => operation.requestBody?.content['multipart/form-data'] !== undefined)
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

function resolve(schema: JsonSchema): JsonSchema {
  const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  if (ref) return resolve(document.components.schemas[ref] ?? {});
  const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as JsonSchema[]).filter((branch) => branch.type !== 'null') : [];
  return branches.length === 1 && branches[0] ? resolve(branches[0]) : schema;
}

/** The dotted paths of the fields the JSON schema requires, through the records it requires (lists aside). */
function requiredPaths(schema: JsonSchema, prefix = ''): string[] {
  const resolved = resolve(schema);
  const properties = isObject(resolved.properties) ? (resolved.properties as Record<string, JsonSchema>) : {};
  const required = Array.isArray(resolved.required) ? (resolved.required as string[]) : [];
  return required.flatMap((name) => {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    const field = properties[name] ? resolve(properties[name]) : {};
    return [path, ...(field.type === 'object' ? requiredPaths(field, path) : [])];
  });
}

/** A copy of `body` without the field at `path`. */
function without(body: unknown, path: string): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  const names = path.split('.');
  let node: Record<string, unknown> | undefined = copy;
  for (const name of names.slice(0, -1)) node = isObject(node?.[name]) ? (node[name] as Record<string, unknown>) : undefined;
  if (node) delete node[names.at(-1) ?? ''];
  return copy;
}

function pointers(path: string, method: string) {
  const base = `/paths/${escapePointer(path)}/${method}/requestBody/content`;
  return { json: `${base}/application~1json/schema`, form: `${base}/multipart~1form-data/schema` };
}

/** The operation's URL on the demo data: its path parameters' examples (update_lead: the lead made above). */
function urlOf(path: string, operation: Operation): string {
  return path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
    operation.operationId === 'update_lead' && name === 'id'
      ? String(leadId)
      : encodeURIComponent(String(operation.parameters?.find((parameter) => parameter.name === name)?.example)),
  );
}

function formOf(fields: Record<string, string | string[]>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const text of Array.isArray(value) ? value : [value]) form.append(name, text);
  return form;
}

async function sendForm(path: string, method: string, operation: Operation, fields: Record<string, string | string[]>): Promise<Response> {
  return app.request(urlOf(path, operation), { method: method.toUpperCase(), key, body: formOf(fields) });
}

const successOf = (operation: Operation): number => Number(Object.keys(operation.responses).find((status) => /^2/.test(status)));

describe('every multipart/form-data body against its JSON body', () => {
  it('covers the operations that take a form', () => {
    expect(
      formOperations()
        .map(({ operation }) => operation.operationId)
        .sort(),
    ).toEqual(expect.arrayContaining(['create_lead', 'create_partner_token', 'create_webhook_subscription', 'update_car', 'update_lead']));
  });

  it("accepts the example's form, and the server answers it as the JSON example", async () => {
    for (const { path, method, operation } of formOperations()) {
      const example = operation.requestBody?.content['application/json']?.example;
      expect(example, operation.operationId).toBeDefined();
      const fields = railsFormFields(example);
      expect(validationErrors(pointers(path, method).form, fields), operation.operationId).toBeNull();
      const response = await sendForm(path, method, operation, fields);
      expect(response.status, `${operation.operationId}: ${await response.clone().text()}`).toBe(successOf(operation));
    }
  });

  it('requires what the JSON body requires: a body without it is refused by both schemas and by the server, naming the field', async () => {
    let checked = 0;
    for (const { path, method, operation } of formOperations()) {
      const at = pointers(path, method);
      const jsonSchema = operation.requestBody?.content['application/json']?.schema ?? {};
      const example = operation.requestBody?.content['application/json']?.example;
      for (const field of requiredPaths(jsonSchema)) {
        const body = without(example, field);
        const label = `${operation.operationId} without ${field}`;
        expect(validationErrors(at.json, body), `${label}: the JSON schema`).not.toBeNull();
        expect(validationErrors(at.form, railsFormFields(body)), `${label}: the form schema`).not.toBeNull();
        const response = await sendForm(path, method, operation, railsFormFields(body));
        expect(response.status, label).toBe(422);
        expect(((await response.json()) as { field?: string }).field, label).toBe(field);
        checked += 1;
      }
      // A record sent as one text part: what a client compiled against a form with nothing required could send.
      for (const [name, property] of Object.entries((resolve(jsonSchema).properties ?? {}) as Record<string, JsonSchema>)) {
        if (resolve(property).type !== 'object') continue;
        expect(validationErrors(at.form, { [name]: 'oops' }), `${operation.operationId}: { ${name}: 'oops' }`).not.toBeNull();
        const response = await sendForm(path, method, operation, { [name]: 'oops' });
        expect(response.status, `${operation.operationId}: ${name}=oops`).toBe(422);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it('lets a part the operation does not read through, as the server ignores it and names it in X-Ignored-Parameters', async () => {
    for (const { path, method, operation } of formOperations()) {
      const example = operation.requestBody?.content['application/json']?.example;
      const record = Object.entries(example as Record<string, unknown>).find(([, value]) => isObject(value))?.[0];
      const extra = { zz_unknown_part: 'x', ...(record ? { [`${record}[zz_unknown_field]`]: 'y' } : {}) };
      const fields = { ...railsFormFields(example), ...extra };
      expect(validationErrors(pointers(path, method).form, fields), operation.operationId).toBeNull();
      const response = await sendForm(path, method, operation, fields);
      expect(response.status, `${operation.operationId}: ${await response.clone().text()}`).toBe(successOf(operation));
      const ignored = response.headers.get('x-ignored-parameters') ?? '';
      expect(ignored, operation.operationId).toContain('zz_unknown_part');
      if (record) expect(ignored, operation.operationId).toContain(`${record}.zz_unknown_field`);
    }
  });
});
