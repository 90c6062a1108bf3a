// Swagger UI in a real headless browser (Debian's chromium, driven by playwright-core), opened from
// another origin than the document's server: PUBLIC_URL is http://localhost:<port>, the page is
// opened at http://127.0.0.1:<port>, as in development. Its first "Try it out" → Execute on a car's
// performance figures, with the values it pre-fills from the document and the demo data, must call
// the origin the page came from (its policy allows 'self' only), and answer 200.
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port.ts';
import { createLifecycle } from '../../src/gateway/lifecycle.ts';
import { createHttpServer } from '../../src/http/server.ts';
import { seedDemoData } from '../../prisma/seed.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { launchChromium, openPage as openBrowserPage, type Refusals } from '../support/browser.ts';
import { makeKey } from '../support/fixtures.ts';

let app: TestApp;
let key: string;
let server: ReturnType<typeof createHttpServer>;
let origin: string;
let browser: Browser;
const leftTheMachine: string[] = [];
const blockedByPolicy: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  // The demo data (the document's examples are its calls), and a key that reads cars.
  app = await createTestApp({ publicUrl: `http://localhost:${port}` });
  await seedDemoData(app.db, { now: app.clock.now(), keyring: app.config.secretsKeyring });
  ({ key } = await makeKey(app.db, { permissions: ['read:car'] }));
  server = createHttpServer(app.yoga, app.config, pino({ level: 'silent' }), createLifecycle());
  origin = `http://127.0.0.1:${(await server.listen(port, '127.0.0.1')).port}`;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.drain();
});

const refusals: Refusals = { leftTheMachine, blockedByPolicy };
const openPage = (path: string): Promise<Page> => openBrowserPage(browser, origin, path, refusals);

describe('Swagger UI opened from another origin than PUBLIC_URL', () => {
  it("tries a car's performance figures with what it pre-fills, calling the page's own origin, and gets 200", async () => {
    const page = await openPage('/docs');
    const calls: { url: string; ifNoneMatch: string | undefined }[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.endsWith('/performance.json'))
        calls.push({ url: request.url(), ifNoneMatch: request.headers()['if-none-match'] });
    });
    const operation = page.locator('[id^="operations-"][id$="-car_performance"]');
    await expect.poll(async () => operation.count(), { timeout: 30_000 }).toBe(1);
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(key);
    await page.locator('.modal-ux button', { hasText: /^Authorize$/ }).click();
    await page.locator('.modal-ux button', { hasText: /^Close$/ }).click();

    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.getByRole('button', { name: 'Execute' }).click();
    const status = operation.locator('.live-responses-table tbody .response-col_status').first();
    await expect.poll(async () => (await status.count()) > 0 && (await status.innerText()), { timeout: 30_000 }).toContain('200');
    expect(calls).toHaveLength(1);
    const called = new URL(calls[0]?.url ?? '');
    expect(called.origin).toBe(origin);
    expect(called.pathname).toBe('/api/v1/cars/1/performance.json');
    expect(called.searchParams.has('lookup_by')).toBe(false);
    expect(calls[0]?.ifNoneMatch).toBeUndefined();
    expect(leftTheMachine).toEqual([]);
    expect(blockedByPolicy).toEqual([]);
    await page.close();
  });
});
