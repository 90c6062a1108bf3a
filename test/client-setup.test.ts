// Front-end clients as their teams set them up (issue 25, item 5; README "Front-end clients"):
// relay-compiler with its default config, Apollo Client's normalised cache over the service, and
// graphql-codegen with this graph's scalar map. Each uses the repository's schema.graphql.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeCar, makeDealership, makeKey } from './support/fixtures.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string): string => path.join(root, 'node_modules', '.bin', name);
const schemaFile = path.join(root, 'schema.graphql');

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'client-setup-'));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('relay-compiler, default config', () => {
  it('compiles fragments read through node(id:) and a @connection against schema.graphql', async () => {
    const project = path.join(scratch, 'relay');
    await mkdir(path.join(project, 'src'), { recursive: true });
    // Only the required settings: no nodeInterfaceIdField, no custom getDataID.
    await writeFile(path.join(project, 'relay.config.json'), JSON.stringify({ src: './src', schema: schemaFile, language: 'typescript' }));
    await writeFile(
      path.join(project, 'src', 'Dealership.ts'),
      `import { graphql } from 'relay-runtime';
export const fragment = graphql\`
  fragment Dealership_dealership on Dealership {
    id
    name
  }
\`;
export const byNode = graphql\`
  query DealershipByNodeQuery($id: ID!) {
    node(id: $id) {
      id
      # Relay asks for @alias on a spread whose type (Dealership) is narrower than the field's (Node).
      ...Dealership_dealership @alias
    }
  }
\`;
export const list = graphql\`
  query DealershipListQuery($first: Int, $after: String) {
    dealerships(first: $first, after: $after) @connection(key: "DealershipList_dealerships") {
      edges {
        node {
          id
          ...Dealership_dealership
        }
      }
    }
  }
\`;
`,
    );
    await run(bin('relay-compiler'), [], { cwd: project });
    const artifacts = await readdir(path.join(project, 'src', '__generated__'));
    expect(artifacts.sort()).toEqual([
      'DealershipByNodeQuery.graphql.ts',
      'DealershipListQuery.graphql.ts',
      'Dealership_dealership.graphql.ts',
    ]);
  });
});

describe('Apollo Client over the service', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await createTestApp();
    const dealership = await makeDealership(app.db, { name: 'Apollo Motors' });
    await makeCar(app.db, dealership.id);
    key = (await makeKey(app.db, { permissions: ['index:dealership', 'read:car'], dealershipIds: [dealership.id] })).key;
  });

  it('keeps the dealership reached by three paths as one cache entry (type policies for the connections)', async () => {
    const client = new ApolloClient({
      link: new HttpLink({
        uri: 'http://localhost/graphql',
        headers: { authorization: `Bearer ${key}` },
        // The service itself, without a port: Yoga's fetch.
        fetch: async (input, init) => app.yoga.fetch(new Request(input, init)),
      }),
      // As in the README: connections merge their pages by cursor, keyed by the filters.
      cache: new InMemoryCache({
        typePolicies: {
          Query: {
            fields: {
              dealerships: relayStylePagination(),
              cars: relayStylePagination(['dealership_id', 'make', 'status']),
              leads: relayStylePagination(['car_id', 'category', 'contact_id', 'dealership_id', 'lead_state']),
            },
          },
          Dealership: {
            fields: {
              cars: relayStylePagination(),
              contacts: relayStylePagination(),
              locations: relayStylePagination(),
              users: relayStylePagination(),
              websites: relayStylePagination(),
            },
          },
        },
      }),
    });
    const listed = await client.query<{ dealerships: { edges: { node: { id: string; name: string } }[] } }>({
      query: gql`
        query {
          dealerships(first: 1) {
            edges {
              node {
                id
                name
              }
            }
          }
        }
      `,
    });
    const id = listed.data!.dealerships.edges[0]!.node.id;
    await client.query({
      query: gql`
        query ($id: ID!) {
          node(id: $id) {
            id
            ... on Dealership {
              name
            }
          }
        }
      `,
      variables: { id },
    });
    await client.query({
      query: gql`
        query {
          cars(first: 1) {
            edges {
              node {
                id
                dealership {
                  id
                  name
                }
              }
            }
          }
        }
      `,
    });
    const entries = Object.keys(client.cache.extract() as Record<string, unknown>).filter((entry) =>
      /dealership/i.test(entry.split(':')[0]!),
    );
    expect(entries).toEqual([`Dealership:${id}`]);
  });
});

describe('graphql-codegen with the scalar map', () => {
  it('generates types for a document with every custom scalar mapped, and they type-check', async () => {
    const project = path.join(scratch, 'codegen');
    await mkdir(project, { recursive: true });
    await writeFile(
      path.join(project, 'documents.graphql'),
      `query CodegenDealerships($first: Int) {
  dealerships(first: $first) {
    totalCount
    edges { cursor node { name } }
    pageInfo { hasNextPage endCursor }
  }
}
`,
    );
    // The README's map: every custom scalar of schema.graphql, so nothing falls back to `any`.
    await writeFile(
      path.join(project, 'codegen.json'),
      JSON.stringify({
        schema: schemaFile,
        documents: path.join(project, 'documents.graphql'),
        generates: {
          [path.join(project, 'types.ts')]: {
            plugins: ['typescript', 'typescript-operations'],
            config: {
              strictScalars: true,
              scalars: {
                Date: 'string',
                DateTime: 'string',
                JSON: 'unknown',
                JSONObject: 'Record<string, unknown>',
              },
            },
          },
        },
      }),
    );
    await run(bin('graphql-codegen'), ['--config', path.join(project, 'codegen.json')], { cwd: root });
    await writeFile(
      path.join(project, 'use.ts'),
      `import type { CodegenDealershipsQuery, CodegenDealershipsQueryVariables } from './types.ts';
const variables: CodegenDealershipsQueryVariables = { first: 10 };
export function names(answer: CodegenDealershipsQuery): string[] {
  return answer.dealerships.edges.map((edge) => edge.node.name);
}
export const used = variables;
`,
    );
    // Strict, as a client project would build it; a scalar left unmapped fails strictScalars above.
    await run(
      bin('tsc'),
      [
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--allowImportingTsExtensions',
        '--module',
        'nodenext',
        '--target',
        'es2022',
        path.join(project, 'use.ts'),
      ],
      { cwd: root },
    );
  });
});
