#!/usr/bin/env node
// The chat page answering ADK's pauses in Debian's Chromium (headless), driven by
// playwright-core against two running `adk-asgi serve`: the trips workflow (a form built
// from a pydantic schema, then a workflow tool confirmation) and the accounts assistant
// (an API key in a password field, "Connect your account" through an OAuth2 popup at the
// provider). A reload during each pause must bring it back. tests/browser/test_browser_pauses.py
// starts the servers and the provider and runs this:
//
//   node tests/browser/pauses.mjs --trips http://127.0.0.1:A/ --accounts http://127.0.0.1:B/
//     --key <the user's weather API key> [--only api-key,oauth]
//
// Every response body the page's API calls received is kept (the report's `bodies`), so
// the test can look for secrets in them. Output: one JSON report on stdout.

import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(ROOT, 'examples/web/package.json'));
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function parseArgs(argv) {
  const args = { out: join(ROOT, 'test-artifacts/browser'), only: null };
  for (let i = 0; i < argv.length; i++) args[argv[i].replace(/^--/, '')] = argv[++i];
  for (const key of ['trips', 'accounts', 'key']) if (!args[key]) throw new Error(`--${key} is required`);
  return args;
}

class Failure extends Error {}
function check(condition, message) {
  if (!condition) throw new Failure(message);
}

const card = (page, name) => page.locator(`[data-testid=tool-${name}]`);

async function send(page, text) {
  const input = page.getByLabel('Message');
  await input.fill(text);
  await input.press('Enter');
}

async function waitForState(locator, state, timeout = 20_000) {
  await locator.and(locator.page().locator(`[data-state=${state}]`)).first().waitFor({ timeout });
}

async function waitIdle(page, timeout = 20_000) {
  await page.waitForFunction(() => document.querySelector('.app')?.dataset.status === 'ready', null, { timeout });
}

async function waitForText(page, text, timeout = 20_000) {
  await page.waitForFunction(
    wanted => [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].some(m => m.textContent.includes(wanted)),
    text,
    { timeout },
  );
}

/** A page reload: the page comes back to the chat in its URL and resumes it. */
async function reload(page) {
  const chat = new URL(page.url()).searchParams.get('chat');
  check(chat, `the page's URL names no chat: ${page.url()}`);
  await page.reload();
  await page.getByLabel('Message').waitFor();
  check(new URL(page.url()).searchParams.get('chat') === chat, 'the reload kept the chat');
}

async function fillBudget(page) {
  const form = card(page, 'adk_request_input');
  await form.locator('[data-field="$.amount"] input').fill('600');
  await form.locator('[data-field="$.currency"] select').selectOption('"USD"');
  await form.locator('[data-field="$.flexible"] input').check();
  await form.getByRole('button', { name: 'Add traveller' }).click();
  await form.locator('[data-field="$.travellers[0].name"] input').fill('Ana');
  await form.locator('[data-field="$.travellers[0].age"] input').fill('34');
  return form;
}

const SCENARIOS = {
  async 'workflow-approve'({ page, shot }) {
    await send(page, 'Plan our Lisbon trip');
    const form = card(page, 'adk_request_input');
    await waitForState(form, 'input-available');
    check((await form.textContent()).includes('How much may we spend on the Lisbon trip?'), 'the question');
    // The page checks before it sends: an amount under the schema's minimum.
    await form.locator('[data-field="$.amount"] input').fill('10');
    await form.getByRole('button', { name: 'Send answer' }).click();
    await form.getByText('must be at least 50').waitFor();
    await shot('form');
    await reload(page);
    await waitForState(card(page, 'adk_request_input'), 'input-available');
    await fillBudget(page);
    await card(page, 'adk_request_input').getByRole('button', { name: 'Send answer' }).click();
    const booking = card(page, 'book_hotel');
    await waitForState(booking, 'approval-requested');
    await waitForState(card(page, 'adk_request_input'), 'output-available');
    await shot('approval');
    await reload(page);
    await waitForState(card(page, 'book_hotel'), 'approval-requested');
    await card(page, 'book_hotel').getByRole('button', { name: 'Approve' }).click();
    await waitForState(card(page, 'book_hotel'), 'output-available');
    const result = await card(page, 'book_hotel').locator('[data-testid=tool-result]').textContent();
    check(result.includes('"hotel":"Hotel Alfama"') && result.includes('"currency":"USD"'), `booking: ${result}`);
    await waitIdle(page);
    return { result };
  },

  async 'workflow-deny'({ page }) {
    await send(page, 'Plan our Lisbon trip');
    await waitForState(card(page, 'adk_request_input'), 'input-available');
    await fillBudget(page);
    await card(page, 'adk_request_input').getByRole('button', { name: 'Send answer' }).click();
    await waitForState(card(page, 'book_hotel'), 'approval-requested');
    await card(page, 'book_hotel').getByRole('button', { name: 'Deny' }).click();
    await waitForState(card(page, 'book_hotel'), 'output-denied');
    await waitIdle(page);
    return {};
  },

  async 'api-key'({ page, shot, args }) {
    await send(page, "What's the weather in Lisbon?");
    const asked = card(page, 'adk_request_credential');
    await waitForState(asked, 'input-available');
    check((await asked.textContent()).includes('X-Weather-Key'), 'what is asked');
    await reload(page);
    await waitForState(card(page, 'adk_request_credential'), 'input-available');
    const field = card(page, 'adk_request_credential').getByLabel('API key');
    check((await field.getAttribute('type')) === 'password', 'a password field');
    await field.fill(args.key);
    await shot('key');
    await card(page, 'adk_request_credential').getByRole('button', { name: 'Use it' }).click();
    await waitForState(card(page, 'adk_request_credential'), 'output-available');
    await waitForState(card(page, 'get_weather'), 'output-available');
    await waitForText(page, 'sunny, 24');
    await waitIdle(page);
    const html = await page.content();
    check(!html.includes(args.key), 'the key is not on the page any more');
    return {};
  },

  async oauth({ page, shot }) {
    await send(page, 'Show my repos');
    const asked = card(page, 'adk_request_credential');
    await waitForState(asked, 'input-available');
    await reload(page);
    await waitForState(card(page, 'adk_request_credential'), 'input-available');
    await shot('connect');
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      card(page, 'adk_request_credential').getByRole('button', { name: 'Connect your account' }).click(),
    ]);
    await popup.getByRole('button', { name: 'Allow' }).click(); // the provider's consent page
    await popup.waitForEvent('close', { timeout: 20_000 }); // the callback page closed it
    await waitForState(card(page, 'adk_request_credential'), 'output-available');
    await waitForState(card(page, 'list_repos'), 'output-available');
    await waitForText(page, 'lisbon-trip');
    await waitIdle(page);
    await shot('connected');
    return {};
  },
};

const PLAN = [
  ['workflow-approve', 'trips'],
  ['workflow-deny', 'trips'],
  ['api-key', 'accounts'],
  ['oauth', 'accounts'],
];

async function main() {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(args.out, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const results = [];
  const bodies = [];
  for (const [name, server] of PLAN) {
    if (args.only && !args.only.split(',').includes(name)) continue;
    const started = Date.now();
    const context = await browser.newContext({ viewport: { width: 980, height: 860 } });
    const page = await context.newPage();
    const consoleErrors = [];
    page.on('console', m => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && consoleErrors.push(m.text()));
    page.on('pageerror', e => consoleErrors.push(String(e)));
    // Every byte the page's API calls received (streams too).
    context.on('response', async response => {
      if (!response.url().includes('/api/chat')) return;
      try {
        bodies.push(`${response.status()} ${response.url()}\n${await response.text()}`);
      } catch {
        // a stream the page aborted (a reload): what it got is in the replay
      }
    });
    const shot = async label => page.screenshot({ path: join(args.out, `pause-${name}-${label}.png`) });
    const result = { name, ok: false, error: null, ms: 0, facts: {} };
    try {
      await page.goto(args[server]);
      await page.getByLabel('Message').waitFor();
      result.facts = (await SCENARIOS[name]({ page, shot, args })) ?? {};
      const alerts = await page.locator('.error[role=alert]').allTextContents();
      check(alerts.length === 0, `the page shows an error: ${alerts}`);
      check(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`);
      result.ok = true;
    } catch (error) {
      result.error = error instanceof Failure ? error.message : String(error?.stack ?? error);
      try {
        await shot('failure');
      } catch {
        // the page is gone
      }
    }
    result.ms = Date.now() - started;
    results.push(result);
    process.stderr.write(`${result.ok ? 'ok  ' : 'FAIL'} ${name} (${result.ms} ms)${result.ok ? '' : `: ${result.error}`}\n`);
    await context.close();
  }
  await browser.close();
  const report = { ok: results.length > 0 && results.every(r => r.ok), results, bodies };
  writeFileSync(join(args.out, 'pauses-report.json'), JSON.stringify(report, null, 2));
  process.stdout.write(JSON.stringify(report));
}

main().catch(error => {
  process.stderr.write(`browser runner failed: ${error?.stack ?? error}\n`);
  process.exit(2);
});
