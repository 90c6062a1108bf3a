// Every connection of the graph, every one of its arguments, with bad values: each answer's errors
// carry `extensions.code`, a message that names the argument, and no raw control character (issue
// 25, item 2). The connections and their arguments are read from the schema, so a connection added
// later is walked too; a connection the walk cannot reach with the seeded records fails the test.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { createTestApp, type TestApp } from './support/app.ts';
import { connectionFields, seedEveryConnection, type ConnectionField } from './support/connections.ts';

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
  ({ key } = await seedEveryConnection(app.db));
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
