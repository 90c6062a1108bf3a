// README.md and docs/ are a user's guide, so they are tested like code: their tables are generated
// (test/docs-generated.test.ts), and the GraphQL and curl examples run against the demo data. The README stays a newcomer's five minutes.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from './support/app.ts';
import { createDemoApp } from './support/demo.ts';
import { runScript } from './support/processes.ts';

const read = (file: string): string => readFileSync(path.resolve(import.meta.dirname, '..', file), 'utf8');
const readme = read('README.md');
const restDoc = read('docs/rest.md');
let app: TestApp;
let key: string;

beforeAll(async () => {
  ({ app, key } = await createDemoApp());
}, 120_000);

describe('README.md and docs/', () => {
  it("keeps the README a newcomer's five minutes: at most 250 lines, every page it links there", () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const links = [...readme.matchAll(/\]\(((?:docs\/|contract\/|ARCHITECTURE)[^)#]*)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThanOrEqual(10);
    for (const link of links) expect(() => read(link.endsWith('/') ? `${link}README.md` : link), link).not.toThrow();
  });

  it('has GraphQL examples that run without errors on the demo data', async () => {
    const blocks = [...(readme + read('docs/graphql.md')).matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    const operations = blocks
      .join('\n')
      .split(/\n(?=(?:query|mutation) )/)
      .map((text) => text.replace(/^#.*$/gm, '').trim())
      .filter(Boolean);
    expect(operations.length).toBeGreaterThanOrEqual(8);
    for (const operation of operations) {
      const result = await app.graphql(operation, {}, key);
      expect(result.errors, operation.slice(0, 80)).toBeUndefined();
      expect(result.data, operation.slice(0, 80)).toBeTruthy();
    }
  });

  // The block is run as written, in order, as a newcomer would after `npm start`: a command that
  // names a key by a number only the author's database had would fail here.
  it("runs the keys commands of 'A key' as written on the demo data, the revoked key then refused", async () => {
    const block = readme.slice(readme.indexOf('## A key')).split('```sh')[1]!.split('```')[0]!;
    const commands = block
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(commands.map((command) => command.split(/\s+/).slice(0, 6).join(' '))).toEqual([
      'npm run --silent keys -- create',
      'npm run --silent keys -- list',
      'npm run --silent keys -- revoke',
    ]);
    const settings = { DATABASE_URL: app.config.databaseUrl };
    let created: { id: number; secret: string } | undefined;
    for (const command of commands) {
      const args = command.replace(/^npm run --silent keys -- /, '').split(/\s+/);
      const result = await runScript(
        'scripts/keys.ts',
        args.map((arg) => (arg === '<id>' ? String(created?.id) : arg)),
        settings,
      );
      expect(result.code, `${command}\n${result.stderr}`).toBe(0);
      if (args[0] === 'create') {
        const secret = result.stdout.trim();
        const listed = await runScript('scripts/keys.ts', ['list', '--json'], settings);
        const name = args[args.indexOf('--name') + 1];
        const ids = (JSON.parse(listed.stdout) as { id: number; name: string }[]).filter((row) => row.name === name).map((row) => row.id);
        created = { id: Math.max(...ids), secret };
        expect((await app.request('/api/v1/apikeys/apikey_details.json', { key: secret })).status).toBe(200);
      }
    }
    // The CLI stamps the revocation with the real clock; the app's cached key is seen again after its TTL.
    app.clock.set(new Date(Date.now() + app.config.apiKeyCacheTtlMs + 1000));
    expect((await app.request('/api/v1/apikeys/apikey_details.json', { key: created!.secret })).status).toBe(401);
  }, 120_000);

  it('has curl examples that succeed on the demo data', async () => {
    const curlBlock = (document: string, after: string): string =>
      document.slice(document.indexOf(after)).split('```sh')[1]!.split('```')[0]!;
    const commands = [curlBlock(restDoc, 'Examples against the demo data'), curlBlock(readme, '## Both doors')].flatMap((block) =>
      block
        .replace(/\\\n\s*/g, ' ')
        .split(/\ncurl /)
        .slice(1)
        .map((line) => line.replace(/\n/g, ' ')),
    );
    expect(commands.length).toBeGreaterThanOrEqual(10);
    for (const command of commands) {
      const url = /"\$B(\/[^"]*)"/.exec(command)?.[1];
      expect(url, command).toBeDefined();
      const method = /-X (\w+)/.exec(command)?.[1] ?? (command.includes(' -d ') ? 'POST' : 'GET');
      const body = /-d '([\s\S]*)'/.exec(command)?.[1];
      const response = await app.request(url!, {
        method,
        key: command.includes('"$H"') ? key : undefined,
        ...(body ? { json: JSON.parse(body) } : {}),
      });
      expect([200, 201, 202, 302], `${method} ${url}: ${await response.clone().text()}`).toContain(response.status);
    }
  });
});
