// Two doors, one graph: for every read path, the REST body equals the GraphQL result of the same
// root field, for the same key, with every field selected (as Sofa selects them).
import { restFieldNames } from '../src/rest/rest-schema.ts';
import {
  getNamedType,
  isEnumType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { matchPath, restRoutes } from '../src/rest/routes.ts';
import { getSchema } from '../src/schema/index.ts';
import type { TestApp } from './support/app.ts';
import { createDemoApp, DEMO_READ_PATHS } from './support/demo.ts';

/** One call per read path, on the demo data. */
const samples: Record<string, string> = {
  ...DEMO_READ_PATHS,
  // A tracking parameter the redirect passes on.
  'Query.car_redirect': `${DEMO_READ_PATHS['Query.car_redirect']}&fbclid=abc`,
};

let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
}, 120_000);

function selection(type: GraphQLObjectType, only?: readonly string[]): string {
  // What the REST door selects: the graph-only fields (src/schema/builder.ts) are not in its bodies, and a
  // field with a REST shape answers only that shape's fields of its type.
  return `{ ${Object.values(type.getFields())
    .filter((field) => field.extensions.graphOnly !== true && (!only || only.includes(field.name)))
    .map((field) => {
      const named = getNamedType(field.type);
      // The REST door answers some fields under the spec's names (databaseId as id): the same alias here.
      const restName = restFieldNames[field.name];
      const name = restName ? `${restName}: ${field.name}` : field.name;
      const shape = field.extensions.restShape as { fields: readonly string[] } | undefined;
      return isObjectType(named) ? `${name} ${selection(named, shape?.fields)}` : name;
    })
    .join(' ')} }`;
}

function coerce(type: GraphQLInputType, raw: string): unknown {
  const named = getNamedType(type);
  if (isScalarType(named) && named.name === 'Int') return Number(raw);
  if (isScalarType(named) && named.name === 'Boolean') return raw === 'true';
  if (isEnumType(named)) return raw;
  return raw;
}

function graphQLFor(field: GraphQLField<unknown, unknown>, url: URL, params: Record<string, string>) {
  const variables: Record<string, unknown> = {};
  for (const arg of field.args) {
    const raw = params[arg.name] ?? url.searchParams.get(arg.name);
    if (raw !== null && raw !== undefined) variables[arg.name] = coerce(arg.type, raw);
  }
  const used = field.args.filter((arg) => arg.name in variables);
  const declarations = used.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const passing = used.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  const named = getNamedType(field.type);
  const select = isObjectType(named) ? selection(named) : '';
  return {
    query: `query${declarations ? `(${declarations})` : ''} { ${field.name}${passing ? `(${passing})` : ''} ${select} }`,
    variables,
  };
}

describe('REST and GraphQL answer the same', () => {
  const reads = restRoutes.filter((route) => route.method === 'GET' && route.field.startsWith('Query.'));

  it('has a sample for every read path', () => {
    expect(Object.keys(samples).sort()).toEqual(reads.map((route) => route.field).sort());
  });

  it.each(reads.map((route) => [route.field, route] as const))('%s', async (coordinate) => {
    const path = samples[coordinate]!;
    const url = new URL(path, 'http://gateway.test');
    const match = matchPath(url.pathname).find((candidate) => candidate.route.field === coordinate)!;
    const field = getSchema().getQueryType()!.getFields()[coordinate.split('.')[1]!]!;
    const rest = await app.request(path, { key });
    const { query, variables } = graphQLFor(field, url, match.params);
    const graph = await app.graphql(query, variables, key);
    expect(graph.errors).toBeUndefined();
    const data = graph.data?.[field.name];
    if (match.route.successStatus === 302) {
      expect(rest.status).toBe(302);
      expect(rest.headers.get('location')).toBe((data as { location: string }).location);
    } else {
      expect(rest.status).toBe(200);
      const body = await rest.json();
      expect(body).toEqual(data);
      // The comparison must compare something: every sample answers real data.
      expect(JSON.stringify(body).length).toBeGreaterThan(20);
    }
  });
});
