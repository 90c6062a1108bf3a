// No input reaches a 5xx, and every input has a limit (issue 10, sections 3 and 4): each class of
// bad input is walked over all its members (every route's path parameters, every integer
// parameter, every body argument, every text input of the schema) on the door it enters by, and
// answers a 400 or a 422 naming the field, with nothing stored.
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isCompositeType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions } from '../src/auth/permissions.ts';
import { DEFAULT_TEXT_MAX_LENGTH, MAX_JSON_DEPTH, UNLIMITED_TEXT_FIELDS, textMaxLength } from '../src/domain/input-limits.ts';
import { pathParamNames, restRoutes, rootFieldIn, typedParams } from '../src/rest/routes.ts';
import { restSchema } from '../src/rest/rest-schema.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, expectAnswer, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey, makeLocation } from './support/fixtures.ts';
import { graphLead, samplePayload } from './support/fixtures-leads.ts';
import { deeplyNested } from './support/fuzz.ts';

let app: TestApp;
let key: string;
let dealershipId: number;

beforeAll(async () => {
  app = await createTestApp();
  const dealership = await makeDealership(app.db);
  dealershipId = dealership.id;
  await makeCar(app.db, dealership.id);
  await makeLocation(app.db, dealership.id, { tracking_phone: '+61293744000' });
  key = (await makeKey(app.db, { permissions: allPermissions })).key;
});

/** Every stored row a refused write could have left behind. */
async function storedRows(): Promise<Record<string, number>> {
  const [leads, contacts, outbox, phoneCalls, partnerTokens, cars] = await Promise.all([
    app.db.lead.count(),
    app.db.contact.count(),
    app.db.outboxMessage.count(),
    app.db.phoneCall.count(),
    app.db.partnerToken.count(),
    app.db.car.count(),
  ]);
  return { leads, contacts, outbox, phoneCalls, partnerTokens, cars };
}

const pathWith = (path: string, values: Record<string, string>): string =>
  path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_whole, name: string) => values[name] ?? '1');

describe('a path parameter that is not percent-encoded UTF-8', () => {
  const routes = restRoutes.filter((route) => pathParamNames(route.path).length > 0);

  it('is a 400 with the JSON error body on every route, before the key is even looked at', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(15);
    for (const route of routes) {
      for (const name of pathParamNames(route.path)) {
        for (const bad of ['%E0%A4%A', '%', '%zz', '%ED%A0%80', '%C0%AF']) {
          const path = pathWith(route.path, { [name]: bad });
          await expectAnswer(
            await app.request(path, { method: route.method }),
            400,
            { error: 'malformed_request', message: `The path parameter ${name} is not valid percent-encoded UTF-8.` },
            `${route.method} ${path}`,
          );
        }
      }
    }
  });

  it('still decodes a well-formed escape (a car slug with a space finds nothing, but is read)', async () => {
    await expectAnswer(await app.request('/api/v1/cars/no%20such%20car/performance.json', { key }), 404, {
      error: 'car_not_found',
      message: 'No car with that identifier.',
    });
  });
});

describe('an integer parameter outside 32 bits', () => {
  const served = restSchema(getSchema());
  const integerParams = restRoutes.flatMap((route) =>
    typedParams(route, rootFieldIn(route, served)!)
      .filter(([, type]) => type === 'integer')
      .map(([name]) => ({ route, name, inPath: pathParamNames(route.path).includes(name) })),
  );

  it('is a 422 naming the parameter on every route, like a longer number', async () => {
    expect(integerParams.length).toBeGreaterThanOrEqual(10);
    for (const { route, name, inPath } of integerParams) {
      for (const value of ['2147483648', '-2147483649', '9999999999999', '99999999999999999999']) {
        const path = inPath ? pathWith(route.path, { [name]: value }) : `${pathWith(route.path, {})}?${name}=${value}`;
        const response = await app.request(path, { method: route.method, key });
        expect(response.status, `${route.method} ${path}`).toBe(422);
        const body = (await response.json()) as { field?: string; error?: string };
        expect(body, `${route.method} ${path}`).toMatchObject({ error: 'invalid_input', field: name });
      }
      // The largest Int is a whole number in range: whatever the answer (a 404, a domain's own range), not this one.
      const path = inPath ? pathWith(route.path, { [name]: '2147483647' }) : `${pathWith(route.path, {})}?${name}=2147483647`;
      const body = (await (await app.request(path, { method: route.method, key })).json()) as { message?: string };
      expect(body.message ?? '', `${route.method} ${path}`).not.toContain('from -2147483648');
    }
  });
});

describe('an identifier given as text ("id, slug or custom slug") that is a number beyond 32 bits', () => {
  it('finds nothing (404), on every engine, instead of overflowing the database integer', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/api/v1/cars/2147483648/performance.json', 'car_not_found'],
      ['GET', '/api/v1/cars/9999999999/payment_processors.json', 'car_not_found'],
      ['PUT', '/api/v1/cars/4294967296/reserve?reserved=true', 'car_not_found'],
      ['GET', '/api/v1/websites/2147483648/models', 'website_not_found'],
      ['GET', '/api/v1/model_variants/some-variant?website_id=2147483648', 'website_not_found'],
    ];
    for (const [method, path, error] of cases) {
      const response = await app.request(path, { method, key });
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toMatchObject({ error });
    }
    const dealership = await app.db.dealership.findUniqueOrThrow({ where: { id: dealershipId } });
    const redirect = await app.request(`/api/v1/dealerships/${dealership.slug}/redirect_service?website_id=2147483648&stocknum=A1`);
    expect(redirect.status).toBe(404);
    expect(await redirect.json()).toMatchObject({ error: 'website_not_found' });
  });
});

/** JSON values of every type but the one the GraphQL input type takes. */
function wrongJsonFor(type: GraphQLInputType): unknown[] {
  const named = getNamedType(type);
  const all: unknown[] = [12345, 1.5, true, 'text', [], {}];
  if (isInputObjectType(named)) return all.filter((value) => typeof value !== 'object' || Array.isArray(value));
  if (!isScalarType(named) && !isEnumType(named)) return [];
  switch (named.name) {
    case 'Int':
      return [1.5, true, 'text', '12', {}, 2_147_483_648];
    case 'Boolean':
      return [1, 'true', 'text', {}];
    case 'Float':
      return [true, 'text', {}];
    case 'String':
    case 'ID':
      return [12345, 1.5, true, {}, [{}]];
    default:
      return isEnumType(named) ? [1, true, {}] : [];
  }
}

describe('a body value of the wrong JSON type', () => {
  const schema = getSchema();
  const bodyArguments = restRoutes.flatMap((route) => {
    const [operation, fieldName] = route.field.split('.') as ['Query' | 'Mutation', string];
    const field = (operation === 'Query' ? schema.getQueryType() : schema.getMutationType())?.getFields()[fieldName];
    return (route.body ?? []).map((name) => ({ route, name, arg: field?.args.find((arg) => arg.name === name) }));
  });

  it('is a 422 naming the argument on every route that reads a body, and nothing is stored', async () => {
    expect(bodyArguments.length).toBeGreaterThanOrEqual(6);
    const before = await storedRows();
    for (const { route, name, arg } of bodyArguments) {
      expect(arg, `${route.field}(${name})`).toBeDefined();
      if (!arg) continue;
      for (const wrong of wrongJsonFor(arg.type)) {
        const response = await app.request(pathWith(route.path, {}), { method: route.method, key, json: { [name]: wrong } });
        const label = `${route.method} ${route.path} ${name}=${JSON.stringify(wrong)}`;
        expect(response.status, label).toBe(422);
        expect(await response.json(), label).toMatchObject({ error: 'invalid_input', field: name });
      }
    }
    expect(await storedRows()).toEqual(before);
  });

  it('answers the two reported cases by name: a numeric e-mail and a boolean called number', async () => {
    const before = await storedRows();
    await expectAnswer(await app.request('/api/v1/partner/tokens', { method: 'POST', key, json: { email: 12345 } }), 422, {
      error: 'invalid_input',
      message: 'email: must be text',
      field: 'email',
    });
    await expectAnswer(
      await app.request('/api/v1/webhooks/phone_calls_webhooks/generic', {
        method: 'POST',
        key,
        json: { called_number: true, caller_number: '0412345678' },
      }),
      422,
      { error: 'invalid_input', message: 'called_number: must be text', field: 'called_number' },
    );
    expect(await storedRows()).toEqual(before);
  });

  it('is a 422 naming `body` when the body is JSON but not an object, on every route that reads one', async () => {
    for (const route of restRoutes.filter((candidate) => candidate.method !== 'GET')) {
      for (const body of ['null', '[]', '12', '"text"']) {
        const response = await app.request(pathWith(route.path, {}), {
          method: route.method,
          key,
          body,
          headers: { 'content-type': 'application/json' },
        });
        const label = `${route.method} ${route.path} ${body}`;
        expect(response.status, label).toBe(422);
        expect(await response.json(), label).toMatchObject({ error: 'invalid_input', field: 'body' });
      }
    }
  });

  it('is a 422 naming a query parameter sent twice or as an object', async () => {
    const queryArguments = restRoutes.flatMap((route) =>
      (route.query ?? []).filter((name) => name !== 'data').map((name) => ({ route, name })),
    );
    expect(queryArguments.length).toBeGreaterThanOrEqual(10);
    for (const { route, name } of queryArguments) {
      for (const query of [`${name}=1&${name}=2`, `${name}[x]=1`]) {
        const path = `${pathWith(route.path, {})}?${query}`;
        const response = await app.request(path, { method: route.method, key });
        expect(response.status, path).toBe(422);
        expect(await response.json(), path).toMatchObject({ error: 'invalid_input', field: name });
      }
    }
  });
});

/** One step into an argument: an argument or input field, and whether it is a list (entry 0 is used). */
interface Step {
  name: string;
  list: boolean;
}

/** One text input of the schema: where it sits in which root field's arguments. */
interface TextInput {
  operation: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
  /** Argument, then input fields: lead, address_attributes, city. */
  steps: Step[];
  /** The input type declaring it ('' for an argument): the limit table's exemptions name it. */
  owner: string;
}

const isList = (type: GraphQLInputType): boolean => isListType(isNonNullType(type) ? type.ofType : type);
const fieldLabel = (input: TextInput): string =>
  input.steps.map((step, index) => `${index === 0 ? '' : '.'}${step.name}${step.list ? '[0]' : ''}`).join('');
const nameOf = (input: TextInput): string => input.steps[input.steps.length - 1]?.name ?? '';

function textInputs(): TextInput[] {
  const schema = getSchema();
  const found: TextInput[] = [];
  const walk = (
    base: Pick<TextInput, 'operation' | 'field'>,
    type: GraphQLInputType,
    steps: Step[],
    owner: string,
    seen: Set<string>,
  ): void => {
    const named = getNamedType(type);
    if (isScalarType(named) && ['String', 'ID'].includes(named.name)) found.push({ ...base, steps, owner });
    if (isInputObjectType(named) && !seen.has(named.name)) {
      for (const inner of Object.values(named.getFields())) {
        walk(base, inner.type, [...steps, { name: inner.name, list: isList(inner.type) }], named.name, new Set([...seen, named.name]));
      }
    }
  };
  for (const [operation, type] of [
    ['query', schema.getQueryType()],
    ['mutation', schema.getMutationType()],
  ] as const) {
    for (const field of Object.values(type?.getFields() ?? {})) {
      for (const arg of field.args) walk({ operation, field }, arg.type, [{ name: arg.name, list: isList(arg.type) }], '', new Set());
    }
  }
  return found;
}

/** The smallest value GraphQL accepts for the type: required fields only, each as simple as it gets. */
function minimalValue(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return minimalValue(type.ofType);
  if (isListType(type)) return [];
  if (isEnumType(type)) return type.getValues()[0]?.name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined)
        .map((field) => [field.name, minimalValue(field.type)]),
    );
  }
  return (
    {
      Int: 1,
      Float: 1,
      Boolean: true,
      String: 'x',
      ID: '1',
      JSON: {},
      JSONObject: {},
      Date: '2026-01-01',
      DateTime: '2026-01-01T00:00:00Z',
    } as Record<string, unknown>
  )[type.name];
}

/** A document calling the input's root field with every argument as a variable, and variables with `text` at the input's place. */
function operationWith(input: TextInput, text: string): { query: string; variables: Record<string, unknown> } {
  const { field, operation, steps } = input;
  const definitions = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const args = field.args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const selection = isCompositeType(getNamedType(field.type)) ? ' { __typename }' : '';
  const variables: Record<string, unknown> = Object.fromEntries(
    field.args.filter((arg) => isNonNullType(arg.type)).map((arg) => [arg.name, minimalValue(arg.type)]),
  );
  // Walk down from the variables, making each container on the way (a list gets one entry).
  let container: Record<string, unknown> = variables;
  let fieldsHere: Record<string, { type: GraphQLInputType }> = Object.fromEntries(field.args.map((arg) => [arg.name, arg]));
  for (const [index, step] of steps.entries()) {
    const type = fieldsHere[step.name]?.type;
    if (!type) throw new Error(`no input ${step.name} in ${fieldLabel(input)}`);
    const named = getNamedType(type);
    if (index === steps.length - 1) {
      container[step.name] = step.list ? [text] : text;
      break;
    }
    const element = (
      step.list
        ? ((container[step.name] as unknown[] | undefined)?.[0] ?? minimalValue(named as GraphQLInputType))
        : (container[step.name] ?? minimalValue(named as GraphQLInputType))
    ) as Record<string, unknown>;
    container[step.name] = step.list ? [element] : element;
    container = element;
    fieldsHere = isInputObjectType(named) ? named.getFields() : {};
  }
  return { query: `${operation}(${definitions}) { ${field.name}(${args})${selection} }`, variables };
}

describe('every text input of the schema', () => {
  const inputs = textInputs();
  // Attachment content is limited by its decoded size (LEAD_FILE_MAX_BYTES), not by length.
  const limitedInputs = inputs.filter((input) => !UNLIMITED_TEXT_FIELDS.has(`${input.owner}.${nameOf(input)}`));

  it('is found by the walk (arguments and input fields at every depth)', () => {
    const labels = inputs.map((input) => `${input.field.name}:${fieldLabel(input)}`);
    expect(labels).toEqual(
      expect.arrayContaining([
        'create_lead:lead.message',
        'create_lead:lead.address_attributes.city',
        'update_car:car.custom_attributes[0].value',
        'update_lead:lead.lead_files_attributes[0].file',
        'create_partner_token:email',
      ]),
    );
    expect(inputs.length).toBeGreaterThanOrEqual(100);
  });

  it('refuses a lone surrogate or a NUL character with a 422 naming the field, before anything runs', async () => {
    const before = await storedRows();
    const cases = [
      ['Jo\ud800rdan', 'must be valid Unicode text (it contains an unpaired surrogate)'],
      ['nul\u0000here', 'must not contain the NUL character (U+0000)'],
    ] as const;
    for (const input of inputs) {
      for (const [text, reason] of cases) {
        const { query, variables } = operationWith(input, text);
        const result = await app.graphql(query, variables, key);
        const label = `${input.field.name}: ${fieldLabel(input)} ${JSON.stringify(text)}`;
        expect(result.errors?.[0]?.extensions, label).toMatchObject({
          code: 'BAD_USER_INPUT',
          error: 'invalid_input',
          field: fieldLabel(input),
        });
        expect(result.errors?.[0]?.message, label).toBe(`${fieldLabel(input)}: ${reason}`);
      }
    }
    expect(await storedRows()).toEqual(before);
  });

  it('has a maximum length: one character more is a 422 naming the field, and nothing is stored', async () => {
    const before = await storedRows();
    for (const input of limitedInputs) {
      const max = textMaxLength(nameOf(input));
      const { query, variables } = operationWith(input, 'x'.repeat(max + 1));
      const result = await app.graphql(query, variables, key);
      const label = `${input.field.name}: ${fieldLabel(input)}`;
      expect(result.errors?.[0]?.extensions, label).toMatchObject({ code: 'BAD_USER_INPUT', field: fieldLabel(input) });
      expect(result.errors?.[0]?.message, label).toBe(`${fieldLabel(input)}: must be at most ${max} characters`);
    }
    expect(await storedRows()).toEqual(before);
  });

  it('takes text of exactly the maximum length past the check', async () => {
    for (const input of limitedInputs) {
      const max = textMaxLength(nameOf(input));
      const { query, variables } = operationWith(input, 'x'.repeat(max));
      const result = await app.graphql(query, variables, key);
      const label = `${input.field.name}: ${fieldLabel(input)}`;
      expect(result.errors?.some((error) => error.message.endsWith(`must be at most ${max} characters`)) ?? false, label).toBe(false);
    }
  });

  it('is limited on the REST door too: a 9.9 MB lead message is a 422, and no lead or e-mail is made', async () => {
    const before = await storedRows();
    const message = 'x'.repeat(9_900_000);
    await expectAnswer(
      await app.request('/api/v1/leads', { method: 'POST', key, json: { lead: samplePayload(dealershipId, { message }) } }),
      422,
      {
        error: 'invalid_input',
        message: 'lead.message: must be at most 10000 characters',
        field: 'lead.message',
      },
    );
    await expectAnswer(
      await app.request('/api/v1/leads', {
        method: 'POST',
        key,
        json: { lead: samplePayload(dealershipId, { message: 'Still \ud800 there?' }) },
      }),
      422,
      {
        error: 'invalid_input',
        message: 'lead.message: must be valid Unicode text (it contains an unpaired surrogate)',
        field: 'lead.message',
      },
    );
    await expectAnswer(await app.request(`/api/v1/cars/${'x'.repeat(DEFAULT_TEXT_MAX_LENGTH + 1)}/performance.json`, { key }), 422, {
      error: 'invalid_input',
      message: `id: must be at most ${DEFAULT_TEXT_MAX_LENGTH} characters`,
      field: 'id',
    });
    expect(await storedRows()).toEqual(before);
  });

  it("checks each request's own values, though a route's document is the same object every time", async () => {
    // The fields to check are found once per document (src/gateway/input-checks.ts); the values never are.
    const tooLong = `/api/v1/cars/${'x'.repeat(DEFAULT_TEXT_MAX_LENGTH + 1)}/performance.json`;
    for (const path of ['/api/v1/cars/no-such-car/performance.json', tooLong, '/api/v1/cars/no-such-car/performance.json', tooLong]) {
      const response = await app.request(path, { key });
      expect(response.status, path.slice(0, 40)).toBe(path === tooLong ? 422 : 404);
    }
  });
});

describe('free-form JSON (lead.fields, lead.charge_breakdown)', () => {
  it(`is refused when it nests more than ${MAX_JSON_DEPTH} levels deep, naming the field, on both doors`, async () => {
    const before = await storedRows();
    for (const field of ['fields', 'charge_breakdown']) {
      for (const depth of [MAX_JSON_DEPTH + 1, 200, 1_000]) {
        const lead = samplePayload(dealershipId, { [field]: deeplyNested(depth, field === 'charge_breakdown') });
        await expectAnswer(
          await app.request('/api/v1/leads', { method: 'POST', key, json: { lead } }),
          422,
          {
            error: 'invalid_input',
            message: `lead.${field}: must not nest objects and lists more than ${MAX_JSON_DEPTH} levels deep`,
            field: `lead.${field}`,
          },
          `${field} ${depth}`,
        );
        const result = await app.graphql(
          'mutation ($lead: LeadInput!) { create_lead(lead: $lead) { lead { id: databaseId } } }',
          { lead: graphLead(lead) },
          key,
        );
        expect(result.errors?.[0]?.extensions, `${field} ${depth}`).toMatchObject({ code: 'BAD_USER_INPUT', field: `lead.${field}` });
      }
    }
    // Lead event data is an input object, not free-form JSON: a nested key it does not name is refused
    // on the graph door, however deep (the REST door ignores it, as it ignores every unknown key).
    const data = { leadId: 1, messageDetail: { description: 'deep', extra: deeplyNested(200, true) } };
    const event = await app.graphql(
      'mutation ($data: LeadEventData!) { create_lead_event(service: "sms", data: $data) { databaseId } }',
      { data },
      key,
    );
    expect(event.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'data.messageDetail.extra' });
    expect(await storedRows()).toEqual(before);
  });

  it(`is stored as sent at ${MAX_JSON_DEPTH} levels, on this engine`, async () => {
    const fields = { outer: deeplyNested(MAX_JSON_DEPTH - 1) };
    const response = await app.request('/api/v1/leads', { method: 'POST', key, json: { lead: samplePayload(dealershipId, { fields }) } });
    expect(response.status).toBe(201);
    const { lead } = (await response.json()) as { lead: { id: number } };
    const stored = await app.db.lead.findUniqueOrThrow({ where: { id: lead.id }, select: { fields: true } });
    expect(stored.fields).toEqual(fields);
  });

  it('refuses a lone surrogate in a key or a value, naming where', async () => {
    await expectAnswer(
      await app.request('/api/v1/leads', {
        method: 'POST',
        key,
        json: { lead: samplePayload(dealershipId, { fields: { note: 'a\udc00b' } }) },
      }),
      422,
      {
        error: 'invalid_input',
        message: 'lead.fields.note: must be valid Unicode text (it contains an unpaired surrogate)',
        field: 'lead.fields.note',
      },
    );
    await expectAnswer(
      await app.request('/api/v1/leads', {
        method: 'POST',
        key,
        json: { lead: samplePayload(dealershipId, { charge_breakdown: { '\ud800': 1 } }) },
      }),
      422,
      {
        error: 'invalid_input',
        message: 'lead.charge_breakdown: has a key that must be valid Unicode text (it contains an unpaired surrogate)',
        field: 'lead.charge_breakdown',
      },
    );
  });
});

describe('GraphQL parameters that are not JSON', () => {
  it('are a 400, not a 500, whether sent by GET or as a form', async () => {
    for (const search of [
      'query={__typename}&variables={',
      'query={__typename}&extensions={',
      `query={__typename}&variables=${encodeURIComponent('{"a":')}`,
    ]) {
      const response = await app.yoga.fetch(`http://gateway.test/graphql?${search}`, { headers: { accept: 'application/json' } });
      expect(response.status, search).toBe(400);
      const body = (await response.json()) as { errors: { message: string; extensions?: { code?: string } }[] };
      expect(body.errors[0], search).toMatchObject({
        message: 'The GraphQL parameters are not valid JSON (variables and extensions must be JSON objects).',
        extensions: { code: 'BAD_REQUEST' },
      });
    }
    const form = await app.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'query=%7B__typename%7D&variables=%7B',
    });
    expect(form.status).toBe(400);
  });
});
