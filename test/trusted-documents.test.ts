// Trusted documents on /graphql: a key locked to its applications runs only their published
// documents, by id; other keys keep arbitrary documents and APQ; a persisted document is limited,
// rate-limited and cached as its text is; its use is counted; the REST door is not affected.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../src/auth/api-keys.ts';
import { lockToDocumentApps } from '../src/auth/key-admin.ts';
import { createKeyVerifier } from '../src/auth/key-cache.ts';
import { documentHash, documentUsage, publishRelease, readManifest } from '../src/domain/trusted-documents.ts';
import { createApp, type Yoga } from '../src/gateway/yoga.ts';
import { inMemoryReadCache } from '../src/gateway/response-cache.ts';
import { createDocumentUseLog } from '../src/gateway/trusted-documents.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, instanceDeps, type TestApp } from './support/app.ts';
import { makeDealership } from './support/fixtures.ts';

const DEALERSHIPS = 'query Dealerships { dealerships(first: 10) { edges { node { id: databaseId } } } }';
const KEY_DETAILS = 'query KeyDetails { apikey_details { databaseId } }';
const COSTLY =
  'query Costly { cars(first: 100) { edges { node { databaseId make model photos { url position } leads(first: 5) { edges { node { databaseId name } } } price_changes { dapprice created_at } } } } }';
const OTHER_APP = 'query OtherApp { apikey_details { dealerships { databaseId } } }';

let app: TestApp;
let locked: string;
let open: string;
let dealershipId: number;

interface Answer {
  status: number;
  body: { data?: Record<string, unknown>; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

async function post(yoga: Yoga, key: string, body: Record<string, unknown>): Promise<Answer> {
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const byId = (text: string) => ({ documentId: documentHash(text) });
const byApq = (text: string, withText = false) => ({
  ...(withText ? { query: text } : {}),
  extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(text) } },
});
const codeOf = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code;

const manifest = (...texts: string[]) => texts.map((body) => ({ hash: documentHash(body), body }));

beforeAll(async () => {
  app = await createTestApp({}, { readCache: inMemoryReadCache() });
  app.clock.set(new Date());
  dealershipId = (await makeDealership(app.db)).id;
  const permissions = ['index:dealership', 'read:car'] as const;
  locked = (await issueKey(app.db, { name: 'web app', permissions, dealershipIds: [dealershipId], documentApps: ['web'] })).key;
  open = (await issueKey(app.db, { name: 'integrator', permissions, dealershipIds: [dealershipId] })).key;
  await publishRelease(app.db, getSchema(), { app: 'web', version: '1.0.0', documents: manifest(DEALERSHIPS, KEY_DETAILS, COSTLY) });
  await publishRelease(app.db, getSchema(), { app: 'partner-portal', version: '2.0.0', documents: manifest(OTHER_APP) });
});

describe('a key locked to its applications', () => {
  it('runs a published document of its application by documentId and by extensions.persistedQuery', async () => {
    const expected = { data: { dealerships: { edges: [{ node: { id: dealershipId } }] } } };
    expect((await post(app.yoga, locked, byId(DEALERSHIPS))).body).toEqual(expected);
    expect((await post(app.yoga, locked, byApq(KEY_DETAILS))).body.data).toEqual({ apikey_details: { databaseId: expect.any(Number) } });
  });

  it('runs one over GET by extensions.persistedQuery, as Apollo sends a persisted read', async () => {
    const extensions = JSON.stringify(byApq(KEY_DETAILS).extensions);
    const response = await app.yoga.fetch(`http://gateway.test/graphql?extensions=${encodeURIComponent(extensions)}`, {
      headers: { authorization: `Bearer ${locked}`, accept: 'application/graphql-response+json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { apikey_details: { databaseId: expect.any(Number) } } });
  });

  it('is refused, with a coded error, a document text, an id another application published, and an unknown id', async () => {
    for (const body of [
      { query: DEALERSHIPS },
      byApq(DEALERSHIPS, true),
      byId(OTHER_APP),
      byId('query Unknown { apikey_details { databaseId } }'),
    ]) {
      const answer = await post(app.yoga, locked, body);
      expect(answer.body.data, JSON.stringify(body)).toBeUndefined();
      expect(answer.status, JSON.stringify(body)).toBe(200);
      expect(answer.body.errors?.[0]).toMatchObject({
        message: expect.stringContaining('runs only the published documents of its client applications'),
        extensions: { code: 'DOCUMENT_NOT_TRUSTED', error: 'document_not_trusted' },
      });
    }
  });

  it('has its refusal quote the request id, as every error does', async () => {
    // app.request checks the error's request_id against the Request-Id header, then takes it out.
    const response = await app.request('/graphql', { method: 'POST', key: locked, json: { query: DEALERSHIPS } });
    expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'DOCUMENT_NOT_TRUSTED' } }] });
  });

  it('still calls the REST paths, which run their own fixed documents', async () => {
    const response = await app.request('/api/v1/apikeys/apikey_details.json', { key: locked });
    expect(response.status).toBe(200);
  });

  it('is refused a persisted document over the cost limit exactly as its text is refused to another key', async () => {
    const asText = await post(app.yoga, open, { query: COSTLY });
    const persisted = await post(app.yoga, locked, byId(COSTLY));
    expect(asText.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', error: 'query_too_costly' });
    expect(persisted.body.errors?.[0]?.extensions?.error).toBe('query_too_costly');
    expect(persisted.body.errors?.[0]?.message).toBe(asText.body.errors?.[0]?.message);
  });

  it('has a repeated persisted read answered from the response cache, with no statement', async () => {
    const first = await post(app.yoga, locked, byId(KEY_DETAILS));
    app.queries.length = 0;
    const again = await post(app.yoga, locked, byId(KEY_DETAILS));
    expect(again.body).toEqual(first.body);
    expect(app.queries).toEqual([]);
  });

  it("has its documents' use counted per release, at most one write a minute per instance", async () => {
    await post(app.yoga, locked, byId(DEALERSHIPS));
    app.clock.advance(61_000);
    await post(app.yoga, locked, byId(DEALERSHIPS));
    await expect
      .poll(async () => (await documentUsage(app.db, 'web')).find((row) => row.hash === documentHash(DEALERSHIPS))?.use_count)
      .toBeGreaterThanOrEqual(2);
    const usage = await documentUsage(app.db);
    expect(usage.find((row) => row.app === 'partner-portal')).toMatchObject({ use_count: 0, last_used_at: null });
  });
});

describe('usage per version', () => {
  it("is counted on the version the client names (Apollo's client version header), else on the newest holding the document", async () => {
    const text = 'query Versioned { apikey_details { databaseId } }';
    await publishRelease(app.db, getSchema(), { app: 'kiosk', version: '2.0.0', documents: manifest(text) });
    await publishRelease(app.db, getSchema(), { app: 'kiosk', version: '2.1.0', documents: manifest(text) });
    const key = (await issueKey(app.db, { name: 'kiosk', permissions: [], documentApps: ['kiosk'] })).key;
    const send = (yoga: Yoga, headers: Record<string, string>) =>
      yoga.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(byId(text)),
      });
    // Each instance writes its first use at once.
    const instance = () => createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }));
    expect((await send(instance(), { 'apollographql-client-version': '2.0.0' })).status).toBe(200);
    expect((await send(instance(), {})).status).toBe(200);
    const usesOf = async () => Object.fromEntries((await documentUsage(app.db, 'kiosk')).map((row) => [row.version, row.use_count]));
    await expect.poll(usesOf).toEqual({ '2.0.0': 1, '2.1.0': 1 });
  });
});

describe('usage at shutdown', () => {
  it('writes the uses still pending when the service flushes its log, as it does once drained', async () => {
    const text = 'query AtShutdown { apikey_details { databaseId } }';
    await publishRelease(app.db, getSchema(), { app: 'shutdown', version: '1.0.0', documents: manifest(text) });
    const key = (await issueKey(app.db, { name: 'shutdown', permissions: [], documentApps: ['shutdown'] })).key;
    const documentUses = createDocumentUseLog({ db: app.db, logger: pino({ level: 'silent' }) });
    const yoga = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { documentUses }));
    for (let round = 0; round < 3; round += 1) expect((await post(yoga, key, byId(text))).status).toBe(200);
    const count = async () => (await documentUsage(app.db, 'shutdown'))[0]?.use_count;
    // The first use is written at once; the next two wait for the minute, or the flush.
    await expect.poll(count).toBe(1);
    await documentUses.flush();
    expect(await count()).toBe(3);
  });
});

describe('a key not locked', () => {
  it('keeps arbitrary documents, and runs any published document by its id', async () => {
    expect((await post(app.yoga, open, { query: KEY_DETAILS })).body.data).toBeDefined();
    expect((await post(app.yoga, open, byId(OTHER_APP))).body.data).toBeDefined();
  });

  it('uses APQ: the hash alone is not found, then hash and text run and are kept, then the hash alone runs', async () => {
    const text = 'query Apq { apikey_details { databaseId dealerships { databaseId } } }';
    const missing = await post(app.yoga, open, byApq(text));
    expect(missing.body.errors?.[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
    });
    // Sent without a key, the text is refused and takes no place in the cache.
    const anonymous = await app.yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(byApq(text, true)),
    });
    expect((await anonymous.json()).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(codeOf(await post(app.yoga, open, byApq(text)))).toBe('PERSISTED_QUERY_NOT_FOUND');
    const registered = await post(app.yoga, open, byApq(text, true));
    expect(registered.body.errors).toBeUndefined();
    app.queries.length = 0;
    const again = await post(app.yoga, open, { ...byApq(text), variables: { uncached: true } });
    expect(again.body).toEqual(registered.body);
    // Found in the instance's APQ documents: only the resolver's statement, no registry lookup.
    expect(app.queries.filter((sql) => sql.includes('document_release'))).toEqual([]);
    // A hash that is not the text's is refused, and keeps nothing.
    const wrong = { query: KEY_DETAILS, extensions: { persistedQuery: { version: 1, sha256Hash: documentHash(text) } } };
    expect(codeOf(await post(app.yoga, open, wrong))).toBe('BAD_USER_INPUT');
    // An APQ document is never a trusted one: the locked key is still refused it.
    expect(codeOf(await post(app.yoga, locked, byApq(text)))).toBe('DOCUMENT_NOT_TRUSTED');
  });
});

describe('several instances', () => {
  it('run a document published after they started at once: a miss is never remembered', async () => {
    const other = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }));
    const text = 'query Fresh { apikey_details { databaseId } dealerships(first: 1) { edges { node { id: databaseId } } } }';
    expect(codeOf(await post(other, locked, byId(text)))).toBe('DOCUMENT_NOT_TRUSTED');
    await publishRelease(app.db, getSchema(), { app: 'web', version: '1.1.0', documents: manifest(text) });
    expect((await post(other, locked, byId(text))).body.errors).toBeUndefined();
  });

  it('see a key locked later at its key change: its arbitrary documents are refused, even one answered from the cache before', async () => {
    const { id, key } = await issueKey(app.db, { name: 'later', permissions: ['index:dealership'], dealershipIds: [dealershipId] });
    const keys = createKeyVerifier({ db: app.db, now: app.clock.now, ttlMs: 60_000 });
    const yoga = createApp(instanceDeps({ config: app.config, db: app.db, now: app.clock.now }, { keys, readCache: inMemoryReadCache() }));
    const first = await post(yoga, key, { query: DEALERSHIPS });
    expect(first.body.errors).toBeUndefined();
    expect((await post(yoga, key, { query: DEALERSHIPS })).body).toEqual(first.body);
    await lockToDocumentApps(app.db, id, ['web']);
    // What the keys CLI's announcement does on every instance.
    keys.forget(id);
    expect(codeOf(await post(yoga, key, { query: DEALERSHIPS }))).toBe('DOCUMENT_NOT_TRUSTED');
    expect((await post(yoga, key, byId(DEALERSHIPS))).body).toEqual(first.body);
  });

  it('count a persisted operation against the rate limits as its text', async () => {
    const limited = createApp(
      instanceDeps({ config: { ...app.config, rateLimits: { ...app.config.rateLimits, keyRequests: 2 } }, db: app.db, now: app.clock.now }),
    );
    expect((await post(limited, locked, byId(KEY_DETAILS))).status).toBe(200);
    expect((await post(limited, locked, byId(KEY_DETAILS))).status).toBe(200);
    const refused = await post(limited, locked, byId(KEY_DETAILS));
    expect(refused.status).toBe(429);
    expect(codeOf(refused)).toBe('RATE_LIMITED');
  });
});

describe('publishing', () => {
  it('keeps one of two concurrent publishes of a version and refuses the other as a conflict', async () => {
    const documents = manifest('query Race { apikey_details { databaseId } }');
    const results = await Promise.allSettled(
      [0, 1].map(() => publishRelease(app.db, getSchema(), { app: 'race', version: '1.0.0', documents })),
    );
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(refused?.reason).toMatchObject({ extensions: { code: 'CONFLICT' } });
    expect(await app.db.documentRelease.count({ where: { app: 'race' } })).toBe(1);
  });
});

describe("Relay's persisted queries", () => {
  it('publish as relay-compiler writes them (persistConfig, SHA256) and run for a key locked to their application', async () => {
    const project = await mkdtemp(path.join(tmpdir(), 'relay-persisted-'));
    await mkdir(path.join(project, 'src'));
    const schema = path.resolve(import.meta.dirname, '..', 'schema.graphql');
    const config = { src: './src', schema, language: 'typescript', persistConfig: { file: './persisted.json', algorithm: 'SHA256' } };
    await writeFile(path.join(project, 'relay.config.json'), JSON.stringify(config));
    await writeFile(path.join(project, 'persisted.json'), '{}');
    await writeFile(
      path.join(project, 'src', 'Key.ts'),
      "import { graphql } from 'relay-runtime';\nexport const key = graphql`\n  query KeyQuery {\n    apikey_details {\n      databaseId\n    }\n  }\n`;\n",
    );
    await promisify(execFile)(path.resolve(import.meta.dirname, '..', 'node_modules', '.bin', 'relay-compiler'), [], { cwd: project });
    const documents = readManifest(await readFile(path.join(project, 'persisted.json'), 'utf8'));
    expect(documents).toHaveLength(1);
    await publishRelease(app.db, getSchema(), { app: 'relay-app', version: '1.0.0', documents });
    const key = (await issueKey(app.db, { name: 'relay', permissions: [], documentApps: ['relay-app'] })).key;
    const answer = await post(app.yoga, key, { documentId: documents[0]!.hash });
    expect(answer.body).toEqual({ data: { apikey_details: { databaseId: expect.any(Number) } } });
  });
});

describe("Apollo Client's PersistedQueryLink", () => {
  it('registers its document by APQ for a key that is not locked, then sends the hash alone', async () => {
    const sent: Record<string, unknown>[] = [];
    const client = new ApolloClient({
      link: new PersistedQueryLink({ sha256: documentHash }).concat(
        new HttpLink({
          uri: 'http://localhost/graphql',
          headers: { authorization: `Bearer ${open}` },
          fetch: async (input, init) => {
            sent.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
            return app.yoga.fetch(new Request(input, init));
          },
        }),
      ),
      cache: new InMemoryCache(),
    });
    const query = gql`
      query ApolloApq {
        apikey_details {
          databaseId
        }
      }
    `;
    const first = await client.query({ query, fetchPolicy: 'network-only' });
    expect(first.data).toEqual({ apikey_details: { __typename: 'ApiKeyDetails', databaseId: expect.any(Number) } });
    const second = await client.query({ query, fetchPolicy: 'network-only' });
    expect(second.data).toEqual(first.data);
    // Hash alone (not found), hash and text, then the hash alone again.
    expect(sent.map((body) => typeof body.query === 'string')).toEqual([false, true, false]);
  });
});
