// The documents CLI as an operator runs it (a child process with DATABASE_URL): publish reads the
// manifests of Relay, graphql-codegen and Apollo, refuses a whole release when any document does not
// validate; list and usage print the registry. The keys CLI locks a key to applications. The example
// of docs/trusted-documents.md is run as written, and contract:check refuses a schema that breaks an
// active published document, and contract:release refuses to cut a release that would.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { MapperKind, mapSchema } from '@graphql-tools/utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_DAYS, brokenDocuments } from '../scripts/contract/documents.ts';
import { activeDocuments, documentHash, recordDocumentUses } from '../src/domain/trusted-documents.ts';
import { getSchema } from '../src/schema/index.ts';
import { createTestApp, type TestApp } from './support/app.ts';
import { bareEnvironment, projectDir, runScript } from './support/processes.ts';

const run = promisify(execFile);

let app: TestApp;
let databaseUrl: string;
const dir = mkdtempSync(path.join(os.tmpdir(), 'documents-cli-'));

interface Finished {
  stdout: string;
  stderr: string;
  code: number;
}

async function cli(script: 'documents' | 'keys', ...args: string[]): Promise<Finished> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', `scripts/${script}.ts`, ...args], {
      cwd: projectDir,
      env: bareEnvironment({ DATABASE_URL: databaseUrl }),
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as Finished;
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

function manifestFile(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const text = (name: string, selection = 'apikey_details { databaseId }') => `query ${name} { ${selection} }`;
const keyed = (...texts: string[]) => Object.fromEntries(texts.map((body) => [documentHash(body), body]));

beforeAll(async () => {
  app = await createTestApp();
  databaseUrl = app.config.databaseUrl;
  app.clock.set(new Date());
});

describe('npm run documents', { timeout: 120_000 }, () => {
  it('publishes the manifests of Relay/graphql-codegen and of Apollo, and lists them', async () => {
    const relay = manifestFile('relay.json', keyed(text('RelayOne'), text('RelayTwo', 'apikey_details { dealerships { databaseId } }')));
    expect(await cli('documents', 'publish', '--app', 'web', '--version', '1.3.0', relay)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^published web 1\.3\.0: 2 document\(s\) at /),
    });
    const body = text('ApolloOne');
    const apollo = manifestFile('apollo.json', {
      format: 'apollo-persisted-query-manifest',
      version: 1,
      operations: [{ id: documentHash(body), name: 'ApolloOne', type: 'query', body }],
    });
    expect((await cli('documents', 'publish', '--app', 'ios', '--version', '3.0.0', apollo)).code).toBe(0);

    const listed = JSON.parse((await cli('documents', 'list', '--json')).stdout) as { app: string; version: string; documents: number }[];
    expect(listed).toEqual([
      expect.objectContaining({ app: 'ios', version: '3.0.0', documents: 1 }),
      expect.objectContaining({ app: 'web', version: '1.3.0', documents: 2 }),
    ]);
    const documents = await cli('documents', 'list', '--app', 'web', '--version', '1.3.0');
    expect(documents.stdout).toContain('RelayOne');
    expect(documents.stdout).toContain(documentHash(text('RelayTwo', 'apikey_details { dealerships { databaseId } }')));
    const usage = JSON.parse((await cli('documents', 'usage', '--app', 'ios', '--json')).stdout) as unknown[];
    expect(usage).toEqual([expect.objectContaining({ app: 'ios', version: '3.0.0', operation_name: 'ApolloOne', use_count: 0 })]);
  });

  it('refuses the whole publish, naming each document and its errors, when any does not validate', async () => {
    const good = text('Good');
    const unknownField = text('Unknown', 'apikey_details { no_such_field }');
    const badHash = text('BadHash');
    const file = manifestFile('bad.json', { ...keyed(good, unknownField), ['0'.repeat(64)]: badHash, [documentHash('x')]: '{ broken' });
    const refused = await cli('documents', 'publish', '--app', 'web', '--version', '1.5.0', file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('3 document(s) do not validate, nothing was published');
    expect(refused.stderr).toContain(`${documentHash(unknownField)}: Cannot query field "no_such_field" on type "ApiKeyDetails".`);
    expect(refused.stderr).toContain(`${'0'.repeat(64)}: the id is not the SHA-256 of the document text`);
    expect(refused.stderr).toContain(`${documentHash('x')}: Syntax Error`);
    expect(refused.stderr).not.toContain(documentHash(good));
    expect(await app.db.documentRelease.count({ where: { version: '1.5.0' } })).toBe(0);
  });

  it('refuses a version published already, a bad app name and a missing file, with their exit codes', async () => {
    const file = manifestFile('again.json', keyed(text('Again')));
    expect(await cli('documents', 'publish', '--app', 'web', '--version', '1.3.0', file)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('web 1.3.0 is published already'),
    });
    expect(await cli('documents', 'publish', '--app', 'no spaces', '--version', '1', file)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('app: must be 1 to 64 letters'),
    });
    expect((await cli('documents', 'publish', '--app', 'web', '--version', '9', path.join(dir, 'missing.json'))).code).toBe(2);
    expect((await cli('documents', 'frobnicate')).code).toBe(2);
  });
});

describe('npm run keys lock / unlock', { timeout: 120_000 }, () => {
  it('locks a key to applications and unlocks it, shown by show', async () => {
    const created = JSON.parse((await cli('keys', 'create', '--name', 'spa', '--permission', 'read:car', '--json')).stdout) as {
      id: number;
    };
    const locked = await cli('keys', 'lock', String(created.id), '--app', 'web', '--app', 'ios');
    expect(locked.code).toBe(0);
    expect(locked.stdout).toContain('documents: the trusted documents of ios, web');
    expect(await app.db.apiKeyDocumentApp.findMany({ where: { api_key_id: created.id }, orderBy: { app: 'asc' } })).toEqual([
      { api_key_id: created.id, app: 'ios' },
      { api_key_id: created.id, app: 'web' },
    ]);
    expect((await cli('keys', 'unlock', String(created.id))).stdout).toContain('documents: any');
    expect((await cli('keys', 'lock', String(created.id))).code).toBe(2);
  });
});

/** The first block of `language` after `heading` in docs/trusted-documents.md, and the one after it. */
function blocksAfter(heading: string, language: string): string[] {
  const page = readFileSync(path.join(projectDir, 'docs', 'trusted-documents.md'), 'utf8');
  const from = page.indexOf(heading);
  expect(from).toBeGreaterThan(-1);
  return [...page.slice(from).matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

describe('the example of docs/trusted-documents.md', { timeout: 120_000 }, () => {
  it('runs as written: the manifest publishes, the locked key runs the document by id and is refused its text', async () => {
    const [manifest, request] = blocksAfter('## An example, end to end', 'json');
    const [commands] = blocksAfter('## An example, end to end', 'sh');
    const example = mkdtempSync(path.join(os.tmpdir(), 'documents-example-'));
    writeFileSync(path.join(example, 'manifest.json'), manifest!);
    // `npm run --silent X -- args` is the project's script X: run it with the same arguments, from the example's folder.
    const shim = `npm() { script=$3; shift 4; node --import "${import.meta.resolve('tsx')}" "${projectDir}/scripts/$script.ts" "$@"; }\n`;
    const { stdout } = await run('sh', ['-ec', `${shim}${commands}\nprintf '%s' "$KEY"`], {
      cwd: example,
      env: bareEnvironment({ DATABASE_URL: databaseUrl }),
    });
    const key = stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^dlr_/);
    const post = (body: string) =>
      app.yoga.fetch('http://gateway.test/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
    const answer = (await (await post(request!)).json()) as { data?: { dealerships: unknown }; errors?: unknown };
    expect(answer.errors).toBeUndefined();
    expect(answer.data?.dealerships).toEqual({ edges: expect.any(Array) });
    const text = Object.values(JSON.parse(manifest!) as Record<string, string>)[0]!;
    const refused = (await (await post(JSON.stringify({ query: text }))).json()) as { errors: { extensions: { code: string } }[] };
    expect(refused.errors[0]!.extensions.code).toBe('DOCUMENT_NOT_TRUSTED');
  });
});

describe('contract:check and the registry', { timeout: 120_000 }, () => {
  it("names the application, version and document an active document's broken field belongs to", async () => {
    const relayTwo = documentHash(text('RelayTwo', 'apikey_details { dealerships { databaseId } }'));
    // As a removal would leave it: ApiKeyDetails without `dealerships`.
    const without = mapSchema(getSchema(), {
      [MapperKind.OBJECT_FIELD]: (field, name, typeName) => (typeName === 'ApiKeyDetails' && name === 'dealerships' ? null : field),
    });
    // web 1.3.0 is no longer web's latest version (the example published 1.4.0) and is unused: not active.
    const before = await activeDocuments(app.db, app.clock.now(), ACTIVE_DAYS);
    expect(before.some((document) => document.hash === relayTwo)).toBe(false);
    expect(brokenDocuments(without, before)).toEqual([]);
    const release = await app.db.documentRelease.findUniqueOrThrow({ where: { app_version: { app: 'web', version: '1.3.0' } } });
    await recordDocumentUses(app.db, [{ releaseId: release.id, hash: relayTwo, count: 1, lastUsedAt: app.clock.now() }]);
    const documents = await activeDocuments(app.db, app.clock.now(), ACTIVE_DAYS);
    expect(brokenDocuments(getSchema(), documents)).toEqual([]);
    const broken = brokenDocuments(without, documents);
    expect(broken).toEqual([
      expect.stringMatching(new RegExp(`^web 1\\.3\\.0, document RelayTwo \\(${relayTwo}\\): Cannot query field "dealerships"`)),
    ]);
  });

  it('reads the registry when DATABASE_URL is set, and says it skipped it otherwise', async () => {
    const withRegistry = await runScript('scripts/contract.ts', ['check'], { DATABASE_URL: databaseUrl });
    expect(withRegistry.stdout).toMatch(/Published documents: \d+ active document\(s\) checked against today's schema\./);
    expect(withRegistry.code).toBe(0);
    const without = await runScript('scripts/contract.ts', ['check'], {});
    expect(without.stdout).toContain('Published documents: skipped (no DATABASE_URL');
    expect(without.code).toBe(0);
  });

  it('refuses a release, writing nothing, while the schema breaks a document in use, and names it', async () => {
    // As a document published while a field existed that today's schema no longer has.
    const body = 'query Gone { apikey_details { gone_since_then } }';
    const hash = documentHash(body);
    await app.db.trustedDocument.create({ data: { hash, body, operation_name: 'Gone' } });
    const release = await app.db.documentRelease.create({
      data: { app: 'legacy', version: '1.0.0', documents: { create: { hash, use_count: 1, last_used_at: app.clock.now() } } },
    });
    const contract = mkdtempSync(path.join(os.tmpdir(), 'contract-'));
    cpSync(path.join(projectDir, 'contract'), contract, { recursive: true });
    try {
      const refused = await runScript('scripts/contract.ts', ['release', '--dir', contract, '9.9.9', 'notes'], {
        DATABASE_URL: databaseUrl,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`legacy 1.0.0, document Gone (${hash})`);
      expect(readFileSync(path.join(contract, 'VERSION'), 'utf8')).toBe(readFileSync(path.join(projectDir, 'contract', 'VERSION'), 'utf8'));
      expect((await runScript('scripts/contract.ts', ['check'], { DATABASE_URL: databaseUrl })).code).toBe(1);
    } finally {
      await app.db.documentRelease.delete({ where: { id: release.id } });
      await app.db.trustedDocument.delete({ where: { hash } });
    }
  });
});
