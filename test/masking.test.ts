// An unexpected failure (here: the database losing a table) answers a generic error on both doors,
// with nothing of the SQL, the table or the stack in the body.
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await createTestApp();
  await makeDealership(app.db, { slug: 'masked-motors' });
  key = (await makeKey(app.db, { permissions: ['index:plugin'] })).key;
  await app.db.$executeRawUnsafe('DROP TABLE dealership_plugins');
});

const internals = /dealership_plugins|SELECT|prisma|sqlite|postgres|\.ts:\d+|at [A-Za-z]/i;

describe('an unexpected failure', () => {
  it('is a 500 internal_error on the REST door', async () => {
    const response = await app.request('/api/v1/dealerships/masked-motors/plugins', { key });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: 'internal_error', message: 'Unexpected error.' });
    expect(text).not.toMatch(internals);
  });

  it('is "Unexpected error." with INTERNAL_SERVER_ERROR on GraphQL', async () => {
    const result = await app.graphql('{ dealership_plugins(dealership_slug: "masked-motors") { plugins { slug } } }', {}, key);
    expect(result.errors?.[0]?.message).toBe('Unexpected error.');
    expect(result.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
    // The error's path names the root field (dealership_plugins, like the table); the rest says nothing.
    const error = result.errors?.[0];
    expect(JSON.stringify({ message: error?.message, extensions: error?.extensions })).not.toMatch(internals);
    expect(result.errors).toHaveLength(1);
  });
});
