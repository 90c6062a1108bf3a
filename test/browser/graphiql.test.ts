// GraphiQL in a real headless browser (Debian's chromium, driven by playwright-core) with the
// network closed: every request to anything but this server is refused and recorded. The page must
// load, run a query with a key and show its data, and its docs explorer must list the types.
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http/server.ts';
import { createLifecycle } from '../../src/gateway/lifecycle.ts';
import { freePort } from '../../scripts/free-port.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { launchChromium, openPage as openBrowserPage, type Refusals } from '../support/browser.ts';
import { makeDealership, makeKey } from '../support/fixtures.ts';
import { samplePayload } from '../support/fixtures-leads.ts';

let app: TestApp;
let server: ReturnType<typeof createHttpServer>;
let origin: string;
let browser: Browser;
let key: string;
let keyId: number;
const leftTheMachine: string[] = [];
// What the pages' Content-Security-Policy blocked: the explorers must need nothing it forbids.
const blockedByPolicy: string[] = [];

beforeAll(async () => {
  // The OpenAPI document's server is PUBLIC_URL, where Swagger UI sends its requests: this server's own address.
  const port = await freePort();
  app = await createTestApp({ publicUrl: `http://127.0.0.1:${port}` });
  app.clock.set(new Date());
  await makeDealership(app.db, { name: 'Browser Test Motors', slug: 'browser-test-motors' });
  ({ key, id: keyId } = await makeKey(app.db, { permissions: ['read:car'] }));
  server = createHttpServer(app.yoga, app.config, pino({ level: 'silent' }), createLifecycle());
  origin = `http://127.0.0.1:${(await server.listen(port, '127.0.0.1')).port}`;
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.drain();
});

const refusals: Refusals = { leftTheMachine, blockedByPolicy };
const openPage = (path: string): Promise<Page> => openBrowserPage(browser, origin, path, refusals);

describe('GraphiQL with the network closed', () => {
  it('loads, runs a query with a key and shows the data', async () => {
    const page = await openPage('/graphql');
    await page.getByRole('button', { name: /Execute query/ }).waitFor({ timeout: 30_000 });

    await page.getByText('Headers', { exact: true }).click();
    const headersEditor = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await headersEditor.click();
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${key}` }));

    await page.getByRole('button', { name: /Execute query/ }).click();
    // The default query asks for the key's id and permissions: the answer shows this key's.
    const response = page.locator('.graphiql-response');
    await expect.poll(async () => response.innerText(), { timeout: 30_000 }).toContain('read:car');
    // The editor renders spaces as no-break spaces: compare with white space folded.
    const text = (await response.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('"apikey_details"');
    expect(text).toContain(`"databaseId": ${keyId},`);
    expect(text).not.toContain('errors');
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });

  it('lists the schema types in the docs explorer', async () => {
    const page = await openPage('/graphql');
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    const explorer = page.locator('.graphiql-doc-explorer');
    await expect.poll(async () => explorer.innerText(), { timeout: 30_000 }).toContain('Query');
    await explorer.getByText('Query', { exact: true }).first().click();
    await expect.poll(async () => explorer.innerText(), { timeout: 30_000 }).toContain('apikey_details');
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });
});

describe('GraphiQL with a live subscription (docs/subscriptions.md)', () => {
  it('keeps the stream open and shows a lead created meanwhile', async () => {
    const dealership = await makeDealership(app.db);
    const reader = await makeKey(app.db, { permissions: ['read:lead'], dealershipIds: [dealership.id] });
    const writer = await makeKey(app.db, { permissions: ['create:lead'], dealershipIds: [dealership.id] });
    const page = await openPage('/graphql');
    await page.getByRole('button', { name: /Execute query/ }).waitFor({ timeout: 30_000 });
    await page.getByText('Headers', { exact: true }).click();
    await page.locator('.graphiql-editor-tool .graphiql-editor').last().click();
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${reader.key}` }));
    // The query editor's text replaced by the subscription of the docs.
    await page.locator('.graphiql-query-editor .graphiql-editor').first().click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText('subscription { leadCreated { databaseId dealership_id category } }');
    const opened = app.events.openStreams();
    await page.getByRole('button', { name: /Execute query/ }).click();
    // The stream is open once the app's hub counts it.
    await expect.poll(() => app.events.openStreams(), { timeout: 30_000 }).toBeGreaterThan(opened);

    const created = await app.request('/api/v1/leads', { method: 'POST', key: writer.key, json: { lead: samplePayload(dealership.id) } });
    expect(created.status).toBe(201);
    const leadId = (await created.json()).lead.id as number;
    const response = page.locator('.graphiql-response');
    await expect
      .poll(async () => (await response.innerText()).replace(/\s+/g, ' '), { timeout: 30_000 })
      .toContain(`"databaseId": ${leadId},`);
    const text = (await response.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain(`"dealership_id": ${dealership.id}`);
    expect(text).not.toContain('errors');
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });
});

describe("the explorers show the key's view once a key is entered (docs/api-view.md)", () => {
  it("GraphiQL introspects again with the key, and its docs list only the key's root fields", async () => {
    const page = await openPage('/graphql');
    const introspections: (string | null)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && /IntrospectionQuery/.test(request.postData() ?? ''))
        introspections.push(request.headers().authorization ?? null);
    });
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    const explorer = page.locator('.graphiql-doc-explorer');
    /** The root fields the docs explorer lists, once it shows Query (it starts again at the root when the schema changes). */
    const rootFieldNames = async (): Promise<string[]> => {
      const query = explorer.getByText('Query', { exact: true }).first();
      if ((await query.count()) > 0) await query.click().catch(() => undefined);
      return explorer.locator('.graphiql-doc-explorer-field-name').allInnerTexts();
    };
    // Without a key: the whole public schema, leads included.
    await expect.poll(rootFieldNames, { timeout: 30_000 }).toContain('leads');

    await page.getByText('Headers', { exact: true }).click();
    const headersEditor = page.locator('.graphiql-editor-tool .graphiql-editor').last();
    await headersEditor.click();
    await page.keyboard.insertText(JSON.stringify({ Authorization: `Bearer ${key}` }));
    // Leaving the headers editor asks for the schema again, with the key.
    await page.locator('.graphiql-query-editor').click();
    await expect.poll(() => introspections.includes(`Bearer ${key}`), { timeout: 30_000 }).toBe(true);
    // The key (read:car) may call cars but not leads: its view has the one and not the other.
    await expect
      .poll(
        async () => {
          const names = await rootFieldNames();
          return names.includes('cars') && !names.includes('leads');
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });

  it("Swagger UI fetches the document again with the key once it is authorised, and lists only the key's operations", async () => {
    const page = await openPage('/docs');
    const documentFetches: (string | null)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/openapi.json') documentFetches.push(request.headers().authorization ?? null);
    });

    const createLead = page.locator('[id^="operations-"][id$="-create_lead"]');
    await expect.poll(async () => createLead.count(), { timeout: 30_000 }).toBe(1);
    await authorizeInSwaggerUi(page, key);
    await expect.poll(() => documentFetches.includes(`Bearer ${key}`), { timeout: 30_000 }).toBe(true);

    // A read:car key may not create leads: the operation is not in its view; its own reads are.
    await expect.poll(async () => createLead.count(), { timeout: 30_000 }).toBe(0);
    expect(await page.locator('[id^="operations-"][id$="-car_performance"]').count()).toBe(1);
    // Reloaded, the page fetches the key's view with the key it kept.
    documentFetches.length = 0;
    await page.reload({ waitUntil: 'load' });
    await expect.poll(() => documentFetches[0], { timeout: 30_000 }).toBe(`Bearer ${key}`);
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });
});

describe('Swagger UI with the network closed', () => {
  it('loads the OpenAPI document and tries an operation with a key', async () => {
    const page = await openPage('/docs');
    await expect
      .poll(async () => page.locator('.information-container').innerText(), { timeout: 30_000 })
      .toContain('Dealership Platform Public API');
    await authorizeInSwaggerUi(page, key);

    // Swagger UI names the block after the operation's tag and id; the tag's spelling is the document's business.
    const operation = page.locator('[id^="operations-"][id$="-apikey_details"]');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    await expect
      .poll(async () => operation.locator('.responses-wrapper .live-responses-table').innerText(), { timeout: 30_000 })
      .toContain('Browser Test Motors');
    expect(await operation.locator('.live-responses-table tbody .response-col_status').first().innerText()).toContain('200');
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });
});

/** Enters `apiKey` in Swagger UI's Authorize dialog and closes it. */
async function authorizeInSwaggerUi(page: Page, apiKey: string): Promise<void> {
  await page
    .getByRole('button', { name: /Authorize/ })
    .first()
    .click();
  await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(apiKey);
  await page.locator('.modal-ux button', { hasText: /^Authorize$/ }).click();
  await page.locator('.modal-ux button', { hasText: /^Close$/ }).click();
}
