// The explorers' browser tests' harness: Debian's chromium driven by playwright-core, with the
// network closed. A page may reach only the server under test; every other request is refused and
// recorded, and so is whatever the page's Content-Security-Policy blocked.
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // Name resolution for every host but this server fails: the network is closed.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
}

/** What pages tried that the closed network or their policy refused. */
export interface Refusals {
  leftTheMachine: string[];
  blockedByPolicy: string[];
}

/** Opens `path` of `origin` in a new page that may reach only `origin`, recording what it was refused. */
export async function openPage(browser: Browser, origin: string, path: string, refusals: Refusals): Promise<Page> {
  const page = await browser.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) refusals.blockedByPolicy.push(`${path}: ${message.text()}`);
  });
  await page.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin === origin || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    refusals.leftTheMachine.push(url.href);
    return route.abort();
  });
  await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  return page;
}
