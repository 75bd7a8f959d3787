#!/usr/bin/env node
// The chat page through a proxy (tests/processes/test_nginx.py): for each URL given, Debian's
// Chromium (headless, playwright-core from examples/web/node_modules) loads the page, reads
// its title, sends "hello from URL" and waits for the answer; it records where the page sent
// its chat request. One JSON report on stdout: {pages: [{url, title, answer, posted}]}.
//
//   node tests/processes/page_through_proxy.mjs http://127.0.0.1:8080/ http://127.0.0.1:8080/chat-app/

import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(ROOT, 'examples/web/package.json'));
const { chromium } = require('playwright-core');

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
const pages = [];
try {
  for (const url of process.argv.slice(2)) {
    const page = await browser.newPage();
    const posted = [];
    page.on('request', request => {
      if (request.method() === 'POST') posted.push(new URL(request.url()).pathname);
    });
    await page.goto(url);
    await page.locator('h1').first().waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => document.querySelector('.app')?.dataset.status === 'ready', null, {
      timeout: 30_000,
    });
    const title = (await page.locator('h1').first().textContent()) ?? '';
    const input = page.getByLabel('Message');
    await input.fill(`hello from ${new URL(url).pathname}`);
    await input.press('Enter');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].some(m =>
          m.textContent.includes('You said'),
        ),
      null,
      { timeout: 60_000 },
    );
    // The answer streams: read it once the turn has ended, not at its first words.
    await page.waitForFunction(() => document.querySelector('.app')?.dataset.status === 'ready', null, {
      timeout: 60_000,
    });
    const answer = await page
      .locator('[data-testid=message][data-role=assistant]')
      .last()
      .textContent();
    pages.push({ url, title, answer, posted });
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify({ pages }));
