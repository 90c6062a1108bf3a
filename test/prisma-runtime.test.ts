// The Prisma runtime on the engine under test, where the project depends on its behaviour beyond
// plain queries: the version it runs, the query events the suite counts statements with, and the
// unique-violation code that settles races (src/db/client.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/config/index.ts';
import { isUniqueViolation } from '../src/db/client.ts';
import { Prisma as PostgresPrisma } from '../src/generated/prisma/postgresql/client.ts';
import { Prisma as SqlitePrisma } from '../src/generated/prisma/sqlite/client.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { testEngine } from './support/database.ts';
import { makeDealership, makeKey } from './support/fixtures.ts';

let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
});

async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the database to refuse the write');
}

describe(`the Prisma runtime on ${testEngine}`, () => {
  it('is Prisma 7: the runtime, both adapters, the CLI and both generated clients at one version', () => {
    const versionOf = (name: string): string =>
      (JSON.parse(readFileSync(path.join(projectRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    const runtime = versionOf('@prisma/client');
    expect(runtime).toMatch(/^7\./);
    for (const name of ['prisma', '@prisma/adapter-better-sqlite3', '@prisma/adapter-pg']) expect(versionOf(name), name).toBe(runtime);
    expect(SqlitePrisma.prismaVersion.client).toBe(runtime);
    expect(PostgresPrisma.prismaVersion.client).toBe(runtime);
  });

  it('reports every SQL statement of a request to the query counter', async () => {
    const dealership = await makeDealership(app.db);
    const { key } = await makeKey(app.db, { dealershipIds: [dealership.id] });
    app.queries.length = 0;
    const response = await app.request('/api/v1/apikeys/apikey_details.json', { key });
    expect(response.status).toBe(200);
    // The key's secret is found by its lookup id, then the dealerships it reaches are read.
    expect(app.queries.some((sql) => /api_key_secrets/.test(sql))).toBe(true);
    expect(app.queries.some((sql) => /dealerships/.test(sql))).toBe(true);
    expect(app.queries.every((sql) => /^\s*(SELECT|INSERT|UPDATE|DELETE|BEGIN|COMMIT|WITH)\b/i.test(sql))).toBe(true);
  });

  it('recognises a unique violation (P2002) in a plain write and inside a transaction, and nothing else', async () => {
    const taken = await makeDealership(app.db);
    const plain = await failureOf(() => app.db.dealership.create({ data: { name: 'Twin', slug: taken.slug } }));
    expect(isUniqueViolation(plain)).toBe(true);
    const inTransaction = await failureOf(() =>
      app.db.$transaction(async (tx) => {
        await tx.manufacturer.create({ data: { name: 'Rolled back', slug: `rolled-back-${taken.id}` } });
        await tx.dealership.create({ data: { name: 'Twin', slug: taken.slug } });
      }),
    );
    expect(isUniqueViolation(inTransaction)).toBe(true);
    expect(await app.db.manufacturer.count({ where: { slug: `rolled-back-${taken.id}` } })).toBe(0);

    const missingParent = await failureOf(() =>
      app.db.website.create({ data: { dealership_id: 987_654, name: 'Orphan', slug: 'orphan-site', url: 'https://orphan.example' } }),
    );
    expect(isUniqueViolation(missingParent)).toBe(false);
    const missingRow = await failureOf(() => app.db.dealership.update({ where: { id: 987_654 }, data: { name: 'Nobody' } }));
    expect(isUniqueViolation(missingRow)).toBe(false);
  });
});
