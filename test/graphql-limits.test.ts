// The limits on what one GraphQL document may ask for (src/schema/graphql-limits.ts): each limit refuses
// one past its maximum and accepts the maximum, with a clear error and extensions.code; page sizes
// passed as variables cost what the same literal costs; unbounded lists have an assumed size, so
// aliases of them cannot multiply an answer; the REST door's fixed documents are not refused.
import { getIntrospectionQuery, parse } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPermissions } from '../src/auth/permissions.ts';
import {
  ASSUMED_LIST_SIZE,
  INTROSPECTION_COST,
  operationCost,
  operationShape,
  queryLimits,
  useQueryLimits,
} from '../src/schema/graphql-limits.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let key: string;
let dealershipId: number;

beforeAll(async () => {
  app = await createTestApp();
  ({ key } = await makeKey(app.db, { permissions: allPermissions }));
  dealershipId = (await makeDealership(app.db, { name: 'Limits Motors', slug: 'limits-motors' })).id;
});

type GraphqlAnswer = Awaited<ReturnType<TestApp['graphql']>>;

function expectRefused(answer: GraphqlAnswer, error: string, found?: number): void {
  expect(answer.data).toBeUndefined();
  expect(answer.errors).toHaveLength(1);
  const [refusal] = answer.errors ?? [];
  expect(refusal?.extensions).toMatchObject({ code: 'BAD_REQUEST', error });
  if (found !== undefined) expect(refusal?.extensions?.found).toBe(found);
}

function expectAccepted(answer: GraphqlAnswer, label?: string): void {
  expect(answer.errors, label).toBeUndefined();
  expect(answer.data, label).toBeTruthy();
}

const shapeOf = (document: string, variables: Record<string, unknown> = {}) => {
  const shape = operationShape(getSchema(), parse(document), undefined, variables);
  if (!shape) throw new Error('no operation');
  return shape;
};

// A car page whose every car brings two plain lists and a page of 5 leads: 63 per car, so 100 cars
// cost 6,302 and 50 cost 3,152.
const carPage = (size: string) =>
  `cars(${size}) { edges { node { databaseId make model photos { url position } leads(first: 5) { edges { node { databaseId name } } } price_changes { dapprice created_at } } } }`;

describe('page sizes passed as variables', () => {
  it('cost exactly what the same literal costs, through first, last and a variable default', () => {
    const literal = shapeOf(`{ ${carPage('first: 100')} }`).cost;
    expect(literal).toBeGreaterThan(queryLimits.maxCost);
    expect(shapeOf(`query ($n: Int) { ${carPage('first: $n')} }`, { n: 100 }).cost).toBe(literal);
    expect(shapeOf(`query ($n: Int) { ${carPage('last: $n')} }`, { n: 100 }).cost).toBe(literal);
    expect(shapeOf(`query ($n: Int = 100) { ${carPage('first: $n')} }`).cost).toBe(literal);
    // Pothos answers at most 100 per page: a larger request is costed as the 100 it gets.
    expect(shapeOf(`query ($n: Int) { ${carPage('first: $n')} }`, { n: 100_000 }).cost).toBe(literal);
    // Without first/last a connection answers its default page of 20.
    expect(shapeOf(`{ ${carPage('')} }`.replace('cars()', 'cars')).cost).toBe(shapeOf(`{ ${carPage('first: 20')} }`).cost);
  });

  it('are refused on /graphql at the same size as the literal, and accepted below it', async () => {
    const literal = await app.graphql(`{ ${carPage('first: 100')} }`, {}, key);
    expectRefused(literal, 'query_too_costly', shapeOf(`{ ${carPage('first: 100')} }`).cost);
    const variable = await app.graphql(`query ($n: Int) { ${carPage('first: $n')} }`, { n: 100 }, key);
    expectRefused(variable, 'query_too_costly', literal.errors?.[0]?.extensions?.found as number);
    expect(variable.errors?.[0]?.message).toMatch(/estimated cost is \d+; at most 5000/);
    const defaulted = await app.graphql(`query ($n: Int = 100) { ${carPage('last: $n')} }`, {}, key);
    expectRefused(defaulted, 'query_too_costly');

    expectAccepted(await app.graphql(`query ($n: Int) { ${carPage('first: $n')} }`, { n: 50 }, key));
    expectAccepted(await app.graphql(`{ ${carPage('first: 50')} }`, {}, key));
  });

  it('count a list paged by its own argument (contacts per_page) by that argument', async () => {
    const contacts = (perPage: string) =>
      `contacts(dealership_id: ${dealershipId}${perPage}) { databaseId first_name vehicles { make raw_model year } }`;
    const atMost = shapeOf(`query ($p: Int) { ${contacts(', per_page: $p')} }`, { p: 200 }).cost;
    expect(atMost).toBe(shapeOf(`{ ${contacts(', per_page: 200')} }`).cost);
    expect(atMost).toBe(1 + 200 * (2 + 1 + ASSUMED_LIST_SIZE * 3));
    expect(shapeOf(`{ ${contacts('')} }`).cost).toBe(1 + 50 * (2 + 1 + ASSUMED_LIST_SIZE * 3));
    expectRefused(await app.graphql(`query ($p: Int) { ${contacts(', per_page: $p')} }`, { p: 200 }, key), 'query_too_costly', atMost);
    expectAccepted(await app.graphql(`query ($p: Int) { ${contacts(', per_page: $p')} }`, { p: 10 }, key));
  });
});

describe('a document sent again', () => {
  // Its parse and validation are kept per text, its cost per document with its variables
  // (keptOperationShape): each sending is still judged by its own variables, in any order.
  it('is judged by the variables it is sent with each time, whatever was judged before', async () => {
    const document = `query ($n: Int) { ${carPage('first: $n')} }`;
    for (const round of [1, 2]) {
      expectAccepted(await app.graphql(document, { n: 50 }, key), `round ${round}, 50`);
      expectRefused(await app.graphql(document, { n: 100 }, key), 'query_too_costly');
      const oversized = await app.graphql(document, { n: 101 }, key);
      expect(oversized.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', error: 'invalid_input', field: 'first' });
      expectAccepted(await app.graphql(document, { n: 10 }, key), `round ${round}, 10`);
    }
  });

  it('is judged again when sent with more variations than one document keeps', async () => {
    const document = `query ($n: Int) { ${carPage('first: $n')} }`;
    // More variations than one document keeps: the ones past the bound are walked each time.
    for (let n = 1; n <= 40; n += 1) expect(shapeOf(document, { n }).cost).toBe(shapeOf(`{ ${carPage(`first: ${n}`)} }`).cost);
    for (let n = 1; n <= 40; n += 1) expectAccepted(await app.graphql(document, { n }, key), `n = ${n}`);
    expectRefused(await app.graphql(document, { n: 100 }, key), 'query_too_costly');
  });

  it('over the token limit is refused every time it is sent', async () => {
    const tooLong = `{ apikey_details { ${'databaseId '.repeat(queryLimits.maxTokens)}} }`;
    for (let sent = 1; sent <= 3; sent += 1) expectRefused(await app.graphql(tooLong, {}, key), 'query_too_long');
  });
});

describe('lists without a page size', () => {
  // Manufacturers and a model's variants are plain lists; the models between them a connection's
  // default page of 20.
  const range = 'manufacturers { name models { edges { node { name slug variants { name } } } } }';

  it('are assumed to hold ASSUMED_LIST_SIZE items, so nesting them multiplies the cost', () => {
    expect(shapeOf(`{ ${range} }`).cost).toBe(1 + ASSUMED_LIST_SIZE * (1 + 1 + 1 + 20 * (1 + 2 + 1 + ASSUMED_LIST_SIZE)));
  });

  it('cannot be multiplied by aliases: 15 aliases of one are refused, one alone is answered', async () => {
    const aliased = `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: ${range}`).join(' ')} }`;
    expectRefused(await app.graphql(aliased, {}, key), 'query_too_costly', 15 * shapeOf(`{ ${range} }`).cost);
    expectAccepted(await app.graphql(`{ ${range} }`, {}, key));
  });
});

describe('document limits', () => {
  it('tokens: the maximum is accepted, one more is refused before parsing', async () => {
    // `{ a: apikey_details {`, `} b: apikey_details {` and `} }` are 12 tokens; each repeated `id`
    // one more. They are split over two selection sets: GraphQL's own validation gives up on ~1,000
    // equal fields in one.
    const withTokens = (count: number) => {
      const repeated = count - 12;
      const second = Math.floor(repeated / 2);
      return `{ a: apikey_details { ${'databaseId '.repeat(repeated - second)}} b: apikey_details { ${'databaseId '.repeat(second)}} }`;
    };
    expectAccepted(await app.graphql(withTokens(queryLimits.maxTokens), {}, key));
    const refused = await app.graphql(withTokens(queryLimits.maxTokens + 1), {}, key);
    expectRefused(refused, 'query_too_long');
    expect(refused.errors?.[0]?.message).toMatch(/more than 1000 tokens/);
  });

  it('characters: the maximum is accepted, one more is refused (comments count here, not as tokens)', async () => {
    const query = '{ apikey_details { databaseId } }\n#';
    const withCharacters = (count: number) => query + 'x'.repeat(count - query.length);
    expectAccepted(await app.graphql(withCharacters(queryLimits.maxCharacters), {}, key));
    const refused = await app.graphql(withCharacters(queryLimits.maxCharacters + 1), {}, key);
    expectRefused(refused, 'query_too_long', queryLimits.maxCharacters + 1);
    expect(refused.errors?.[0]?.message).toMatch(/20001 characters; at most 20000/);
  });

  it('depth: 8 nested fields are accepted, 9 refused, also when the nesting hides in fragments', async () => {
    const depth8 = `{ dealership(id: ${dealershipId}) { cars { edges { node { leads { edges { node { databaseId } } } } } } } }`;
    const depth9 = `{ dealership(id: ${dealershipId}) { cars { edges { node { leads { edges { node { car { databaseId } } } } } } } } }`;
    expectAccepted(await app.graphql(depth8, {}, key));
    expectRefused(await app.graphql(depth9, {}, key), 'query_too_deep', 9);
    const inFragments = `{ dealership(id: ${dealershipId}) { cars { edges { node { ...CarLeads } } } } }
      fragment CarLeads on Car { leads { edges { ...LeadEdge } } }
      fragment LeadEdge on CarLeadsConnectionEdge { node { car { databaseId } } }`;
    expectRefused(await app.graphql(inFragments, {}, key), 'query_too_deep', 9);
  });

  it('aliases: counted each time a fragment holding them is spread', async () => {
    const eight = Array.from({ length: 8 }, (_, i) => `k${i}: databaseId`).join(' ');
    const spreadTwice = `{ a: apikey_details { ...Eight } b: apikey_details { ...Eight } } fragment Eight on ApiKeyDetails { ${eight} }`;
    expectRefused(await app.graphql(spreadTwice, {}, key), 'too_many_aliases', 18);
    const fifteen = `{ a: apikey_details { ...Seven } b: apikey_details { databaseId } } fragment Seven on ApiKeyDetails { ${Array.from({ length: 13 }, (_, i) => `k${i}: databaseId`).join(' ')} }`;
    expectAccepted(await app.graphql(fifteen, {}, key));
  });

  it('directives: the maximum is accepted, one more is refused', async () => {
    // GraphQL itself refuses a directive repeated on one field, and aliases would stop many fields
    // first: the directives sit on fragment spreads.
    const spread = (count: number) =>
      `{ apikey_details { ${Array.from({ length: count }, () => '...Id @include(if: true)').join(' ')} } } fragment Id on ApiKeyDetails { databaseId }`;
    expectAccepted(await app.graphql(spread(queryLimits.maxDirectives), {}, key));
    expectRefused(await app.graphql(spread(queryLimits.maxDirectives + 1), {}, key), 'too_many_directives', queryLimits.maxDirectives + 1);
  });

  it('fragments spread inside fragments are walked once each: a doubling chain is refused, not computed forever', async () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i === levels - 1 ? `fragment F${i} on ApiKeyDetails { databaseId }` : `fragment F${i} on ApiKeyDetails { ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    const shape = shapeOf(`{ apikey_details { ...F0 } } ${fragments}`);
    expect(shape.cost).toBe(1 + 2 ** (levels - 1));
    expectRefused(await app.graphql(`{ apikey_details { ...F0 } } ${fragments}`, {}, key), 'query_too_costly', 1 + 2 ** (levels - 1));
  });
});

describe('introspection', () => {
  it("GraphiQL's introspection query fits the limits; three whole-schema fields in one document do not", async () => {
    expect(shapeOf(getIntrospectionQuery()).cost).toBe(INTROSPECTION_COST);
    const answer = await app.graphql(getIntrospectionQuery(), {}, key);
    expect(answer.errors).toBeUndefined();
    expectRefused(
      await app.graphql(
        '{ a: __schema { queryType { name } } b: __schema { queryType { name } } c: __schema { queryType { name } } }',
        {},
        key,
      ),
      'query_too_costly',
      3 * INTROSPECTION_COST,
    );
  });

  it("cannot nest types inside fields inside types (GraphQL's own introspection depth rule)", async () => {
    const nested = await app.graphql('{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }', {}, key);
    expect(nested.data).toBeUndefined();
    expect(nested.errors?.[0]?.message).toMatch(/Maximum introspection depth exceeded/);
  });
});

describe('the REST door', () => {
  it('runs its fixed documents whatever they would cost on /graphql (its page sizes have their own bounds)', async () => {
    const listed = await app.request(`/dealerships/${dealershipId}/contacts?per_page=200`, { key });
    expect(listed.status).toBe(200);
    // The same page through /graphql is over the limit: the REST answer was not costed as a GraphQL client's document.
    expect(
      shapeOf(`{ contacts(dealership_id: 1, per_page: 200) { databaseId first_name postcode vehicles { make raw_model year rego } } }`)
        .cost,
    ).toBeGreaterThan(queryLimits.maxCost);
  });
});

describe('operationCost', () => {
  it('is what a later plugin (a per-key budget) reads for the operation that ran, variables included', async () => {
    const seen: (number | undefined)[] = [];
    const budget: Plugin = {
      onExecute({ args }) {
        return { onExecuteDone: () => void seen.push(operationCost(args.contextValue as object)) };
      },
    };
    const yoga = createYoga({ schema: getSchema(), plugins: [useQueryLimits(), budget], logging: false });
    const query = `query ($n: Int) { ${carPage('first: $n')} }`;
    for (const n of [1, 50]) {
      await yoga.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: { n } }),
      });
    }
    expect(seen).toEqual([2 + 63, 2 + 63 * 50]);
  });
});
