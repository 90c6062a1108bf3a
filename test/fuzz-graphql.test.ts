// Fuzzing the GraphQL door (with test/fuzz-rest.test.ts, over 5,000 requests): for every root field
// of the schema as introspection serves it, an operation with a generated selection and generated
// variables, spoiled like the REST bodies (wrong types, nulls, extra keys, lone surrogates, huge
// strings, deep nesting); then the protocol itself (GET and POST parameters that are not JSON, not
// objects, batches, content types). No answer may be a 5xx or an INTERNAL_SERVER_ERROR, and no body
// may carry internal detail. The seed is fixed, so a failure repeats.
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type IntrospectionQuery,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDemoApp } from './support/demo.ts';
import {
  FUZZ_SEED,
  createFuzzHarness,
  deeplyNested,
  deeplyNestedJson,
  hostileNumber,
  hostileString,
  seededRandom,
  wrongValue,
  type FuzzHarness,
  type Random,
  FUZZ_SCALE,
} from './support/fuzz.ts';

const OPERATIONS_PER_FIELD = 80 * FUZZ_SCALE;

const DOOR = 'GraphQL';
let harness: FuzzHarness;
let schema: GraphQLSchema;

beforeAll(async () => {
  const { app, key } = await createDemoApp();
  harness = createFuzzHarness(app, key);
  const response = await app.yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  schema = buildClientSchema(((await response.json()) as { data: IntrospectionQuery }).data);
}, 120_000);

/** A selection of the type's fields that need no argument, two levels deep at most. */
function selectionOf(type: GraphQLObjectType, random: Random, depth: number): string {
  const fields = Object.values(type.getFields()).filter((field) => field.args.every((arg) => !isNonNullType(arg.type)));
  const leaves = fields.filter((field) => isLeafType(getNamedType(field.type))).map((field) => field.name);
  const nested = (depth < 2 ? fields.filter((field) => isObjectType(getNamedType(field.type))) : [])
    .filter(() => random.chance(0.4))
    .slice(0, 3)
    .map((field) => `${field.name} { ${selectionOf(getNamedType(field.type) as GraphQLObjectType, random, depth + 1)} }`);
  return [...(leaves.length ? leaves : ['__typename']), ...nested].join(' ');
}

/** A variable value for a GraphQL input type: mostly plausible, often spoiled at some depth. */
function valueForInput(type: GraphQLInputType, random: Random): unknown {
  if (random.chance(0.08)) return wrongValue(random);
  if (isNonNullType(type)) return valueForInput(type.ofType, random);
  if (isListType(type)) return Array.from({ length: random.int(0, 3) }, () => valueForInput(type.ofType, random));
  if (isEnumType(type)) return random.chance(0.9) ? random.pick(type.getValues()).name : hostileString(random);
  if (isInputObjectType(type)) {
    const result: Record<string, unknown> = {};
    for (const field of Object.values(type.getFields())) {
      if (isNonNullType(field.type) || random.chance(0.5)) result[field.name] = valueForInput(field.type, random);
    }
    return result;
  }
  switch (type.name) {
    case 'Int':
      return random.chance(0.6) ? random.int(1, 12) : hostileNumber(random);
    case 'Float':
      return random.chance(0.6) ? random.int(1, 9_999) / 10 : hostileNumber(random);
    case 'Boolean':
      return random.chance(0.5);
    case 'String':
    case 'ID':
      return random.chance(0.4)
        ? random.pick(['1', 'MEL1002', 'richmond-toyota', 'jordan@example.com', '0412 345 678'])
        : hostileString(random);
    default: // JSON, JSONObject, Date, DateTime
      return random.pick<() => unknown>([
        () => ({ leadId: random.int(1, 5), messageDetail: { description: hostileString(random) } }),
        () => deeplyNested(random.pick([20, 200, 2_000]), random.chance(0.5)),
        () => '2026-11-30',
        () => wrongValue(random),
      ])();
  }
}

function documentFor(operation: 'query' | 'mutation', field: GraphQLField<unknown, unknown>, random: Random): string {
  const variables = field.args.map((arg) => `$${arg.name}: ${String(arg.type)}`);
  const args = field.args.map((arg) => `${arg.name}: $${arg.name}`);
  const named = getNamedType(field.type);
  // An interface (node, nodes) is asked for its own leaf fields.
  const interfaceLeaves = isInterfaceType(named)
    ? Object.values(named.getFields())
        .filter((leaf) => isLeafType(getNamedType(leaf.type)))
        .map((leaf) => leaf.name)
    : [];
  const selection = isObjectType(named)
    ? ` { ${selectionOf(named, random, 0)} }`
    : isInterfaceType(named)
      ? ` { __typename ${interfaceLeaves.join(' ')} }`
      : '';
  return `${operation}${variables.length ? `(${variables.join(', ')})` : ''} { ${field.name}${args.length ? `(${args.join(', ')})` : ''}${selection} }`;
}

describe('the GraphQL door under fuzzing', () => {
  it(
    'answers every generated operation without an internal error, with nothing internal in the body',
    async () => {
      const random = seededRandom(FUZZ_SEED + 1);
      const roots = [
        ...Object.values(schema.getQueryType()?.getFields() ?? {}).map((field) => ({ operation: 'query' as const, field })),
        ...Object.values(schema.getMutationType()?.getFields() ?? {}).map((field) => ({ operation: 'mutation' as const, field })),
      ];
      expect(roots.length).toBeGreaterThanOrEqual(29);
      for (const { operation, field } of roots) {
        for (let round = 0; round < OPERATIONS_PER_FIELD; round += 1) {
          const variables = Object.fromEntries(
            field.args.filter(() => random.chance(0.95)).map((arg) => [arg.name, valueForInput(arg.type, random)]),
          );
          if (random.chance(0.05)) variables[`extra${random.int(0, 3)}`] = wrongValue(random);
          await harness.send('GRAPHQL', `/graphql#${field.name}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...harness.authorization(random) },
            body: JSON.stringify({ query: documentFor(operation, field, random), variables }),
          });
        }
      }
      console.info(harness.tally(`${DOOR} fuzz, seed ${FUZZ_SEED}`));
      expect(harness.summary()).toEqual([]);
      expect(harness.sent).toBe(roots.length * OPERATIONS_PER_FIELD);
    },
    300_000 * FUZZ_SCALE,
  );

  it(
    'answers malformed GraphQL requests (the protocol level) with a 4xx, never a 5xx',
    async () => {
      const random = seededRandom(FUZZ_SEED + 2);
      const before = harness.sent;
      const notObjects = ['{', '[', '"', 'null', '[]', '{"a":', '%E0%A4%A', '{"id":"\\ud800"}', deeplyNestedJson(3_000)];
      const getSearches = [
        ...notObjects.map((value) => `query={__typename}&variables=${encodeURIComponent(value)}`),
        ...notObjects.map((value) => `query={__typename}&extensions=${encodeURIComponent(value)}`),
        'query={__typename}&variables=%E0%A4%A',
        'query=%E0%A4%A',
        'query={__typename}&operationName[]=x',
        'query[]={__typename}',
        'variables={}',
        '',
        `query=${encodeURIComponent('query($id: String!) { car(id: $id) { id: databaseId } }')}&variables=${encodeURIComponent('{"id":"\\ud800"}')}`,
      ];
      const postBodies = [
        '{',
        '[]',
        'null',
        '12',
        '{"query":12}',
        '{"query":"{__typename}","variables":"x"}',
        '{"query":"{__typename}","variables":[1]}',
        '{"query":"{__typename}","extensions":"x"}',
        '{"query":"{__typename}","operationName":{}}',
        '[{"query":"{__typename}"},{"query":"{__typename}"}]',
        '{"query":"query($id: String!) { car(id: $id) { id } }","variables":{"id":"\\ud800"}}',
        '{"query":"query($id: Int!) { lead(id: $id) { id } }","variables":{"id":2147483648}}',
        '{"query":"{ lead(id: 2147483648) { id } }"}',
        '{"query":"{ car(id: \\"\\\\ud800\\") { id } }"}',
        JSON.stringify({ query: `{ car(id: "${'x'.repeat(200_000)}") { id } }` }),
        `{"query":"{__typename}","variables":{"v":${deeplyNestedJson(5_000)}}}`,
      ];
      const contentTypes = [
        'application/json',
        'application/graphql+json',
        'application/graphql',
        'multipart/form-data; boundary=x',
        'text/plain',
        'application/x-www-form-urlencoded',
      ];
      for (let round = 0; round < 4; round += 1) {
        for (const search of getSearches) {
          await harness.send('GET', `/graphql?${search}`, {
            method: 'GET',
            headers: { accept: 'application/json', ...harness.authorization(random) },
          });
        }
        for (const body of postBodies) {
          for (const contentType of contentTypes) {
            await harness.send('POST', `/graphql (${contentType}) ${body.slice(0, 60)}`, {
              method: 'POST',
              headers: { 'content-type': contentType, ...harness.authorization(random) },
              body:
                contentType === 'application/x-www-form-urlencoded'
                  ? `query=${encodeURIComponent('{__typename}')}&variables=${encodeURIComponent(body)}`
                  : body,
            });
          }
        }
      }
      console.info(harness.tally(`${DOOR} fuzz with the protocol cases, seed ${FUZZ_SEED}`));
      expect(harness.summary()).toEqual([]);
      expect(harness.sent - before).toBe(4 * (getSearches.length + postBodies.length * contentTypes.length));
    },
    120_000 * FUZZ_SCALE,
  );
});
