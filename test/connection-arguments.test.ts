// Every connection of the graph, every one of its arguments, with bad values: each answer's errors
// carry `extensions.code`, a message that names the argument, and no raw control character (issue
// 25, item 2). The connections and their arguments are read from the schema, so a connection added
// later is walked too; a connection the walk cannot reach with the seeded records fails the test.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { getSchema } from '../src/schema/index.ts';
import { permissionCatalogue, type Permission } from '../src/auth/permissions.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCarLead, makeModel, makeOffer } from './support/fixtures-catalogue.ts';
import { makeStoredLead } from './support/fixtures-leads.ts';
import {
  makeCar,
  makeContact,
  makeDealership,
  makeKey,
  makeLocation,
  makeManufacturer,
  makeUser,
  makeWebsite,
} from './support/fixtures.ts';
import { franchise } from './support/fixtures-dealership.ts';

const schema = getSchema();

interface ConnectionField {
  /** `Type.field`, for the test names. */
  coordinate: string;
  field: GraphQLField<unknown, unknown>;
  /** The query that reaches the field, with `%ARGS%` and `%SELECTION%` where the field's own go. */
  template: string;
}

const isConnection = (type: GraphQLObjectType): boolean => 'edges' in type.getFields() && 'pageInfo' in type.getFields();

/**
 * Every connection field of the schema, each with the shortest query from Query that reaches it:
 * fields with required arguments are not walked, connections are walked through `edges { node }`
 * with `first: 1`.
 */
function connectionFields(): ConnectionField[] {
  const found = new Map<string, ConnectionField>();
  const queue: { type: GraphQLObjectType; wrap: (inner: string) => string }[] = [
    { type: schema.getQueryType()!, wrap: (inner) => `query Walk($a: ${'%VARS%'}) { ${inner} }` },
  ];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const { type, wrap } = queue.shift()!;
    if (seen.has(type.name)) continue;
    seen.add(type.name);
    for (const field of Object.values(type.getFields())) {
      const named = getNamedType(field.type);
      if (!isObjectType(named)) continue;
      if (isConnection(named)) {
        const coordinate = `${type.name}.${field.name}`;
        if (!found.has(coordinate)) found.set(coordinate, { coordinate, field, template: wrap(`${field.name}(%ARGS%) { %SELECTION% }`) });
        const node = getNamedType(named.getFields().edges!.type);
        const nodeType = isObjectType(node) ? getNamedType(node.getFields().node!.type) : null;
        if (nodeType && isObjectType(nodeType)) {
          queue.push({ type: nodeType, wrap: (inner) => wrap(`${field.name}(first: 1) { edges { node { __typename ${inner} } } }`) });
        }
        continue;
      }
      if (field.args.some((arg) => arg.type.toString().endsWith('!') && arg.defaultValue === undefined)) continue;
      queue.push({ type: named, wrap: (inner) => wrap(`${field.name} { __typename ${inner} }`) });
    }
  }
  return [...found.values()];
}

interface BadCase {
  label: string;
  /** The argument the error must name. */
  argument: string;
  args: Record<string, { type: string; value: unknown }>;
}

const CONTROL = 'x\u0000\u0007\u001b[31m\u007f\ny';

/** Bad values for one argument, by its type. */
function badValues(arg: GraphQLArgument): { label: string; value: unknown }[] {
  const type = getNullableType(arg.type) as GraphQLInputType;
  if (isListType(type)) return [{ label: 'a list holding an object', value: [{ bad: CONTROL }] }];
  if (isEnumType(type))
    return [
      { label: 'an unknown value with control characters', value: CONTROL },
      { label: 'a number', value: 5 },
    ];
  if (isInputObjectType(type))
    return [
      { label: 'an unknown field', value: { [CONTROL]: 1 } },
      { label: 'a string', value: CONTROL },
    ];
  if (isScalarType(type) && (type.name === 'Int' || type.name === 'Float')) {
    // A filter's negative or unknown id is a filter that matches nothing (an empty page), not an error.
    if (arg.name !== 'first' && arg.name !== 'last') {
      return [
        { label: 'over 32 bits', value: 2 ** 40 },
        { label: 'a string with control characters', value: CONTROL },
      ];
    }
    return [
      { label: 'negative', value: -1 },
      { label: 'huge', value: 1_000_000 },
      { label: 'over 32 bits', value: 2 ** 40 },
      { label: 'a string with control characters', value: CONTROL },
    ];
  }
  if (arg.name === 'after' || arg.name === 'before') {
    return [
      { label: 'not a cursor', value: 'not-a-cursor' },
      { label: 'a cursor of another shape', value: Buffer.from('GPC:J:"x"').toString('base64') },
      { label: 'control characters and NUL', value: CONTROL },
      { label: 'a base64 cursor holding control characters', value: Buffer.from(`GPC:N:${CONTROL}`).toString('base64') },
      { label: 'a number', value: 12 },
    ];
  }
  return [
    { label: 'control characters and NUL', value: CONTROL },
    { label: 'an object', value: { a: 1 } },
  ];
}

function badCases(field: GraphQLField<unknown, unknown>): BadCase[] {
  const cases: BadCase[] = [];
  for (const arg of field.args) {
    for (const bad of badValues(arg)) {
      cases.push({
        label: `${arg.name}: ${bad.label}`,
        argument: arg.name,
        args: { [arg.name]: { type: arg.type.toString(), value: bad.value } },
      });
    }
  }
  const names = field.args.map((arg) => arg.name);
  const cursor = Buffer.from('GPC:N:1').toString('base64');
  if (names.includes('before') && names.includes('first')) {
    cases.push({
      label: 'before with first',
      argument: 'before',
      args: { before: { type: 'String', value: cursor }, first: { type: 'Int', value: 1 } },
    });
  }
  if (names.includes('after') && names.includes('last')) {
    cases.push({
      label: 'after with last',
      argument: 'last',
      args: { after: { type: 'String', value: cursor }, last: { type: 'Int', value: 1 } },
    });
  }
  return cases;
}

/** The query for one case: each bad argument passed as a variable of the argument's own type. */
function queryOf(connection: ConnectionField, bad: BadCase): { query: string; variables: Record<string, unknown> } {
  const entries = Object.entries(bad.args);
  const vars = entries.map(([name, { type }]) => `$${name}: ${type}`).join(', ');
  const args = entries.map(([name]) => `${name}: $${name}`).join(', ');
  const query = connection.template
    .replace('($a: %VARS%)', `(${vars})`)
    .replace('%ARGS%', args)
    .replace('%SELECTION%', 'pageInfo { hasNextPage } edges { cursor }');
  return { query, variables: Object.fromEntries(entries.map(([name, { value }]) => [name, value])) };
}

// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const connections = connectionFields();
let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  // One record behind every connection, so each parent on the walk resolves.
  const home = await makeDealership(app.db, { name: 'Arguments Motors' });
  await makeLocation(app.db, home.id);
  await makeWebsite(app.db, home.id);
  await makeContact(app.db, home.id);
  await makeUser(app.db, [home.id]);
  const car = await makeCar(app.db, home.id);
  await makeCarLead(app.db, home.id, car.id);
  const lead = await makeStoredLead(app.db, home.id);
  await app.db.leadEvent.create({ data: { lead_id: lead.id, service: 'sms' } });
  const manufacturer = await makeManufacturer(app.db);
  await franchise(app.db, home.id, manufacturer.id);
  const model = await makeModel(app.db, manufacturer.id);
  await makeOffer(app.db, { manufacturer_id: manufacturer.id, model_id: model.id, expires_at: new Date('2099-01-01T00:00:00.000Z') }, [
    home.id,
  ]);
  const permissions = Object.keys(permissionCatalogue) as Permission[];
  key = (await makeKey(app.db, { permissions, dealershipIds: [home.id] })).key;
});

describe('connection arguments', () => {
  it('finds every connection of the schema (a new one is walked too)', () => {
    const coordinates = connections.map((connection) => connection.coordinate);
    // The ones known today; the walk itself reads them from the schema.
    for (const known of [
      'Query.dealerships',
      'Query.cars',
      'Query.leads',
      'Dealership.cars',
      'Dealership.locations',
      'Lead.events',
      'Manufacturer.models',
    ]) {
      expect(coordinates).toContain(known);
    }
  });

  it('reaches every connection with good arguments (the walk is sound)', async () => {
    for (const connection of connections) {
      const query = connection.template
        .replace('($a: %VARS%)', '')
        .replace('(%ARGS%)', '(first: 1)')
        .replace('%SELECTION%', 'edges { cursor }');
      const answer = await app.graphql(query, {}, key);
      expect(answer.errors, connection.coordinate).toBeUndefined();
      expect(JSON.stringify(answer.data), connection.coordinate).toContain('"cursor"');
    }
  });

  for (const connection of connections) {
    it(`${connection.coordinate}: every argument, bad values`, async () => {
      for (const bad of badCases(connection.field)) {
        const label = `${connection.coordinate} ${bad.label}`;
        const { query, variables } = queryOf(connection, bad);
        const response = await app.request('/graphql', { method: 'POST', key, json: { query, variables } });
        const text = await response.text();
        expect(text, label).not.toMatch(RAW_CONTROL);
        const body = JSON.parse(text) as { errors?: { message: string; extensions?: Record<string, unknown> }[] };
        expect(body.errors?.length ?? 0, `${label}: ${text}`).toBeGreaterThan(0);
        for (const error of body.errors ?? []) {
          expect(error.extensions?.code, `${label}: ${text}`).toEqual(expect.any(String));
          expect(error.message, label).not.toMatch(RAW_CONTROL);
          expect(error.message, `${label}: ${text}`).toContain(bad.argument);
        }
      }
    });
  }
});
