#!/usr/bin/env node
// Browser tests of the chat page: Debian's Chromium (headless, /usr/bin/chromium)
// driven by playwright-core (from examples/web/node_modules; no browser download)
// against a running `adk-asgi serve`. tests/browser/test_browser.py starts the server and
// runs this script; it can also run alone:
//
//   .venv/bin/adk-asgi serve --port 8000 --token-delay 0.01 &
//   node tests/browser/run.mjs --url http://127.0.0.1:8000/ [--only approve,deny] [--transport sse]
//     [--min-speech-chunks 6]
//   node tests/browser/run.mjs --url ... --agent code   (the code-execution test agent,
//     `adk-asgi serve tests.agents.code.agent:root_agent`: its scenarios only; --agent
//     fanout: the workflow of tests/agents/fanout)
//
// Payments are checked by the server's transaction numbers, so run it against a
// freshly started server (or pass --first-txn N, the number the next payment gets).
// `--readme docs/approval.png` only takes the README's screenshot.
// `--agent artifacts` runs the scenarios of the artifacts test agent instead
// (tests/agents/artifacts, served by tests/browser/test_browser_artifacts.py).
//
// Every scenario runs over each transport (SSE = DefaultChatTransport, WebSocket =
// ai@7 WebSocketChatTransport); the voice scenarios use protocol A (AdkLiveTransport),
// with Chromium's fake microphone, camera and screen picker.
// Output: one JSON report on stdout ({ok, results: [{name, transport, ok, error,
// ms, facts}]}); screenshots in --out (default test-artifacts/browser). Exit code 0
// when the report was produced (check `ok`), 2 when the runner itself failed.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(join(ROOT, 'examples/web/package.json'));
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--autoplay-policy=no-user-gesture-required',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
];
const TOKYO_STATION = { latitude: 35.6812, longitude: 139.7671, accuracy: 12 };

function parseArgs(argv) {
  const args = {
    url: null,
    out: join(ROOT, 'test-artifacts/browser'),
    only: null,
    transport: null,
    agent: null,
    'first-txn': '1',
    // voice-talk: the fewest audio chunks the speaker must play (the scripted model
    // streams many small ones; the Gemini emulator one per 8-token text chunk)
    'min-speech-chunks': '6',
  };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    args[key] = argv[++i];
  }
  if (!args.url) throw new Error('--url http://127.0.0.1:PORT/ is required');
  return args;
}

class Failure extends Error {}
function check(condition, message) {
  if (!condition) throw new Failure(message);
}

// -- page helpers ----------------------------------------------------------------------

const assistant = page => page.locator('[data-testid=message][data-role=assistant]');
const tool = (page, name) => page.locator(`[data-testid=tool-${name}]`);

async function send(page, text) {
  // The composer ignores Enter while a turn runs (the text stays in the box), and over the
  // WebSocket the turn can still be open for a moment after its last words show: wait
  // until the page takes a message, then see that it took this one.
  await page.waitForFunction(() => ['ready', 'error'].includes(document.querySelector('.app')?.dataset.status), null, {
    timeout: 30_000,
  });
  const input = page.getByLabel('Message');
  await input.fill(text);
  await input.press('Enter');
  await page.waitForFunction(() => document.querySelector('[aria-label=Message]')?.value === '', null, {
    timeout: 15_000,
  });
}

/** Wait until the page shows `text` in an assistant message; returns that text. */
async function waitForText(page, text, timeout = 30_000) {
  await page.waitForFunction(
    wanted =>
      [...document.querySelectorAll('[data-testid=message][data-role=assistant]')].some(m =>
        m.textContent.includes(wanted),
      ),
    text,
    { timeout },
  );
}

async function waitForState(locator, state, timeout = 15_000) {
  await locator.and(locator.page().locator(`[data-state=${state}]`)).first().waitFor({ timeout });
}

async function waitIdle(page, timeout = 15_000) {
  await page.waitForFunction(() => document.querySelector('.app')?.dataset.status === 'ready', null, {
    timeout,
  });
}

async function assistantTexts(page) {
  return page.locator('[data-testid=message][data-role=assistant] [data-testid=text]').allTextContents();
}

/** Record every length the newest assistant text goes through (to see it stream). */
async function recordStreaming(page) {
  await page.evaluate(() => {
    window.__lengths = [];
    const observer = new MutationObserver(() => {
      const texts = document.querySelectorAll('[data-testid=message][data-role=assistant] [data-testid=text]');
      const last = texts[texts.length - 1];
      const length = last ? last.textContent.length : 0;
      if (window.__lengths[window.__lengths.length - 1] !== length) window.__lengths.push(length);
    });
    observer.observe(document.querySelector('main'), { subtree: true, childList: true, characterData: true });
  });
}

// Payments: the demo server numbers its transactions txn-000001, txn-000002, … per
// process. Every approved payment must get exactly the next number: a payment that
// ran twice, or one that ran although it was denied, shows up as a gap.
const payments = { count: 0 };

async function expectPayment(card, recipient, amount) {
  const result = await card.locator('[data-testid=tool-result]').textContent();
  const match = /txn-(\d+)/.exec(result ?? '');
  check(match, `no transaction id in the ${recipient} payment's result: ${result}`);
  payments.count++;
  check(
    Number(match[1]) === payments.count,
    `payment to ${recipient} is ${match[0]}, expected txn ${payments.count}: a payment ran twice or a denied one ran`,
  );
  check(result.includes(`Sent ${amount} USD to ${recipient}`), `result: ${result}`);
  return match[0];
}

// -- scenarios ------------------------------------------------------------------------

const SCENARIOS = {
  async text({ page }) {
    await recordStreaming(page);
    await send(page, 'Hello there, who are you?');
    await waitForText(page, 'Try asking about the weather');
    await waitIdle(page);
    const lengths = await page.evaluate(() => window.__lengths);
    const text = (await assistantTexts(page)).join('');
    check(text.startsWith('You said: "Hello there, who are you?"'), `reply: ${text}`);
    const partial = lengths.filter(n => n > 0 && n < text.length);
    check(partial.length >= 5, `the text did not stream: lengths ${JSON.stringify(lengths)}`);
    check(
      lengths.every((n, i) => i === 0 || n >= lengths[i - 1]),
      `text lengths went backwards: ${lengths}`,
    );
    const user = await page.locator('[data-testid=message][data-role=user]').allTextContents();
    check(user.length === 1 && user[0].includes('Hello there'), `user messages: ${user}`);
    return { partialRenders: partial.length, finalLength: text.length };
  },

  async reasoning({ page }) {
    await send(page, 'think about rainbows');
    await waitForText(page, 'the answer is always 42');
    const thought = await page.locator('[data-testid=reasoning]').textContent();
    check(thought.includes('think about rainbows'), `reasoning: ${thought}`);
    return { reasoning: thought };
  },

  async weather({ page }) {
    await send(page, "What's the weather in Tokyo?");
    const card = tool(page, 'get_weather');
    await waitForState(card, 'output-available');
    const result = await card.locator('[data-testid=tool-result]').textContent();
    check(result.includes('sunny, 22°C'), `weather result: ${result}`);
    await waitForText(page, 'The weather in Tokyo is sunny, 22°C.');
    await waitIdle(page);
    check((await assistant(page).count()) === 1, 'one assistant message');
    return { result };
  },

  async approve({ page, shot }) {
    await send(page, 'Send 50 dollars to Hanako');
    const card = tool(page, 'process_payment');
    await waitForState(card, 'approval-requested');
    check((await card.getByText('Send 50 USD to Hanako?').count()) === 1, 'approval question');
    check((await page.getByLabel('Message').isDisabled()) === true, 'input blocked while asking');
    await shot('approval');
    await card.getByRole('button', { name: 'Approve' }).click();
    await waitForState(card, 'output-available');
    const txn = await expectPayment(card, 'Hanako', 50);
    await waitForText(page, 'Sent 50 USD to Hanako.');
    await waitIdle(page);
    check((await assistant(page).count()) === 1, 'the answer continued the same message');
    check((await card.getByRole('button', { name: 'Approve' }).count()) === 0, 'buttons gone');
    await shot('approved');
    return { txn };
  },

  async deny({ page, shot }) {
    await send(page, 'Send 50 dollars to Hanako');
    const card = tool(page, 'process_payment');
    await waitForState(card, 'approval-requested');
    await card.getByRole('button', { name: 'Deny' }).click();
    await waitForState(card, 'output-denied');
    await waitForText(page, 'The payment to Hanako was cancelled.');
    await waitIdle(page);
    check((await card.locator('[data-testid=tool-result]').count()) === 0, 'no receipt');
    check((await card.textContent()).includes('Denied'), 'shown as denied');
    await shot('denied');
    return {};
  },

  async 'two-payments'({ page, shot }) {
    await send(page, 'Send 30 dollars to Alice and 40 dollars to Bob');
    const cards = tool(page, 'process_payment');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=tool-process_payment][data-state=approval-requested]').length === 2,
      null,
      { timeout: 15_000 },
    );
    await shot('approval');
    const alice = cards.filter({ hasText: 'Alice' });
    const bob = cards.filter({ hasText: 'Bob' });
    await alice.getByRole('button', { name: 'Approve' }).click();
    // Nothing is sent before both are answered.
    await page.waitForTimeout(300);
    check((await alice.getAttribute('data-state')) === 'approval-responded', 'Alice approved, waiting');
    check((await bob.getAttribute('data-state')) === 'approval-requested', 'Bob still asked');
    await bob.getByRole('button', { name: 'Deny' }).click();
    await waitForState(alice, 'output-available');
    await waitForState(bob, 'output-denied');
    const txn = await expectPayment(alice, 'Alice', 30);
    await waitForText(page, 'The payment to Bob was cancelled.');
    const text = (await assistantTexts(page)).join(' ');
    check(text.includes('Sent 30 USD to Alice.'), `reply: ${text}`);
    await waitIdle(page);
    await shot('answered');
    return { txn };
  },

  async location({ page, shot }) {
    await send(page, 'Where am I?');
    const card = tool(page, 'get_location');
    await waitForState(card, 'approval-requested');
    check((await card.getByText('Share your location with the assistant?').count()) === 1, 'question');
    await shot('approval');
    await card.getByRole('button', { name: 'Approve' }).click();
    await waitForState(card, 'output-available');
    const result = await card.locator('[data-testid=tool-result]').textContent();
    check(result.includes('35.6812, 139.7671'), `location result: ${result}`);
    await waitForText(page, 'You are at latitude 35.6812, longitude 139.7671.');
    await waitIdle(page);
    return { result };
  },

  async 'location-denied'({ page }) {
    await send(page, 'Where am I?');
    const card = tool(page, 'get_location');
    await waitForState(card, 'approval-requested');
    await card.getByRole('button', { name: 'Deny' }).click();
    await waitForState(card, 'output-denied');
    await waitForText(page, 'I could not get your location');
    await waitIdle(page);
    return {};
  },

  async bgm({ page }) {
    await send(page, 'Play track 2');
    const card = tool(page, 'change_bgm');
    await waitForState(card, 'output-available');
    await waitForText(page, 'Now playing track 2.');
    const badge = page.locator('[data-testid=bgm]');
    check((await badge.getAttribute('data-track')) === '2', 'badge shows track 2');
    check((await badge.getAttribute('data-playing')) === 'true', 'music playing');
    check((await badge.getAttribute('data-audio')) === 'running', 'the AudioContext runs');
    await send(page, 'Change BGM to track 3');
    await waitForText(page, 'Now playing track 3.');
    check((await badge.getAttribute('data-track')) === '3', 'badge shows track 3');
    await waitIdle(page);
    return {};
  },
};

const VOICE_SCENARIOS = {
  async 'voice-talk'({ page, shot, args }) {
    await page.getByTestId('mic').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=mic]')?.getAttribute('aria-pressed') === 'true');
    await page.waitForTimeout(1200); // Chromium's fake microphone beeps into it
    await page.getByTestId('mic').click();
    await page.getByTestId('heard').first().waitFor({ timeout: 15_000 });
    const heard = await page.getByTestId('heard').allTextContents();
    check(heard.length === 1 && heard[0] === "What's the weather in Tokyo?", `heard: ${heard}`);
    await waitForText(page, 'The weather in Tokyo is sunny, 22°C.');
    await waitIdle(page);
    // The spoken answer's transcript, once, in one message: one text part per step.
    const texts = await assistantTexts(page);
    check(
      JSON.stringify(texts) === JSON.stringify(['Let me check the weather in Tokyo.', 'The weather in Tokyo is sunny, 22°C.']),
      `transcript: ${JSON.stringify(texts)}`,
    );
    check((await assistant(page).count()) === 1, 'one assistant message');
    const chunks = Number(await page.getByTestId('speaker').getAttribute('data-chunks'));
    const least = Number(args['min-speech-chunks']);
    check(chunks >= least, `the speaker played ${chunks} chunks (at least ${least} expected)`);
    await waitForState(tool(page, 'get_weather'), 'output-available');
    await shot('answered');
    return { speechChunks: chunks };
  },

  async 'voice-approve'({ page }) {
    await send(page, 'Send 20 dollars to Taro');
    const card = tool(page, 'process_payment');
    await waitForState(card, 'approval-requested');
    await card.getByRole('button', { name: 'Approve' }).click();
    await waitForState(card, 'output-available');
    const txn = await expectPayment(card, 'Taro', 20);
    await waitForText(page, 'Sent 20 USD to Taro.');
    await waitIdle(page);
    return { txn };
  },

  // Chromium's fake camera (--use-fake-device-for-media-stream) through FrameCapture:
  // JPEG frames at 1 per second over protocol A, then the model is asked what it sees.
  async 'voice-camera'({ page, shot }) {
    const framesSent = () =>
      page.evaluate(() => Number(document.querySelector('[data-testid=frames]')?.dataset.count ?? 0));
    await page.getByTestId('camera').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=camera]')?.getAttribute('aria-pressed') === 'true');
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid=frames]')?.dataset.count ?? 0) >= 2,
      null,
      { timeout: 15_000 },
    );
    const preview = await page.getByTestId('preview').evaluate(v => ({ width: v.videoWidth, height: v.videoHeight }));
    check(preview.width > 0 && preview.height > 0, `the preview shows no video: ${JSON.stringify(preview)}`);
    await send(page, 'What do you see?');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=message][data-role=assistant]').length === 1);
    await waitIdle(page, 30_000);
    const answer = (await assistantTexts(page)).join(' ');
    await shot('camera');
    await page.getByTestId('camera').click(); // off: the capture and its tracks stop
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid=camera]')?.getAttribute('aria-pressed') === 'false' &&
        document.querySelector('[data-testid=preview]') == null,
    );
    const sent = await framesSent();
    await page.waitForTimeout(1500); // no frame may follow (1 a second while it ran)
    check((await framesSent()) === sent, `frames went on after the camera was turned off`);
    const refused = await page.getByTestId('input-error').count();
    check(refused === 0, `the server refused a frame: ${await page.getByTestId('input-error').allTextContents()}`);
    return { frames: sent, answer, preview };
  },

  // A shared screen (getDisplayMedia; the fake UI picks one), then the camera instead:
  // one source at a time, frames from each.
  async 'voice-screen'({ page }) {
    const count = () =>
      page.evaluate(() => Number(document.querySelector('[data-testid=frames]')?.dataset.count ?? 0));
    const pressed = name => page.getByTestId(name).getAttribute('aria-pressed');
    await page.getByTestId('screen').click();
    await page.waitForFunction(
      () => Number(document.querySelector('[data-testid=frames]')?.dataset.count ?? 0) >= 2,
      null,
      { timeout: 15_000 },
    );
    const screen = await page.getByTestId('preview').evaluate(v => ({ width: v.videoWidth, height: v.videoHeight }));
    check(screen.width > 0, 'the shared screen shows no video');
    check((await pressed('screen')) === 'true' && (await pressed('camera')) === 'false', 'screen button state');
    const fromScreen = await count();
    await page.getByTestId('camera').click(); // the camera replaces the screen
    await page.waitForFunction(
      n => Number(document.querySelector('[data-testid=frames]')?.dataset.count ?? 0) >= n + 2,
      fromScreen,
      { timeout: 15_000 },
    );
    check((await pressed('screen')) === 'false' && (await pressed('camera')) === 'true', 'camera button state');
    await page.getByTestId('camera').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=preview]') == null);
    check((await page.getByTestId('input-error').count()) === 0, 'the server refused a frame');
    return { screen, frames: await count() };
  },

  async 'voice-location'({ page }) {
    await send(page, 'Where am I?');
    const card = tool(page, 'get_location');
    await waitForState(card, 'approval-requested');
    await card.getByRole('button', { name: 'Approve' }).click();
    await waitForText(page, 'You are at latitude 35.6812, longitude 139.7671.');
    await waitIdle(page);
    return {};
  },
};

// The user's chats (SSE, the page's {id, message} requests): the sidebar, a reload that
// opens the chat from the server's history, an approval answered after a reload, switching
// chats and deleting one.

async function chatTitles(page) {
  return page.locator('[data-testid=chat] .chat-open').allTextContents();
}

const HISTORY_SCENARIOS = {
  async history({ page, shot, expect }) {
    await send(page, 'think about persistence');
    await waitForText(page, 'the answer is always 42');
    await waitIdle(page);
    const first = await page.locator('.app').getAttribute('data-chat');
    check(new URL(page.url()).searchParams.get('chat') === first, `address: ${page.url()}`);
    await page.waitForFunction(id => document.querySelector(`[data-chat="${id}"].chat-item`), first);
    const request = page.waitForRequest(r => r.method() === 'POST');
    await send(page, 'Send 15 dollars to Kenji');
    const body = JSON.parse((await request).postData());
    check(body.message?.role === 'user' && body.messages === undefined,
      `the page sends {id, message}: ${JSON.stringify(Object.keys(body))}`);
    const card = tool(page, 'process_payment');
    await waitForState(card, 'approval-requested');
    await waitIdle(page);

    // Reload: the chat comes back from the server, the approval still waiting.
    await page.reload();
    await page.getByLabel('Message').waitFor();
    await waitForState(tool(page, 'process_payment'), 'approval-requested');
    const reasoning = await page.locator('[data-testid=reasoning]').textContent();
    check(reasoning.includes('think about persistence'), `reasoning after reload: ${reasoning}`);
    const users = await page.locator('[data-testid=message][data-role=user]').allTextContents();
    check(users.length === 2 && users[1].includes('Kenji'), `user messages: ${users}`);
    await shot('reloaded');
    const reloaded = tool(page, 'process_payment');
    await reloaded.getByRole('button', { name: 'Approve' }).click();
    await waitForState(reloaded, 'output-available');
    const txn = await expectPayment(reloaded, 'Kenji', 15);
    await waitForText(page, 'Sent 15 USD to Kenji.');
    await waitIdle(page);

    // A new chat, then back to the first from the sidebar.
    await page.locator('.new-chat').click();
    await page.waitForFunction(id => document.querySelector('.app').dataset.chat !== id, first);
    check((await assistant(page).count()) === 0, 'the new chat is empty');
    await send(page, 'Hello from the second chat');
    await waitForText(page, 'Hello from the second chat');
    await waitIdle(page);
    // The sidebar lists it once the turn ended (newest first).
    await page.waitForFunction(
      () => document.querySelector('[data-testid=chat] .chat-open')?.textContent === 'Hello from the second chat',
    );
    const titles = await chatTitles(page);
    check(titles[0] === 'Hello from the second chat', `newest first: ${titles}`);
    check(titles.includes('think about persistence'), `titles: ${titles}`);
    await page.locator(`.chat-item[data-chat="${first}"] .chat-open`).click();
    await page.waitForFunction(id => document.querySelector('.app').dataset.chat === id, first);
    await waitForText(page, 'Sent 15 USD to Kenji.');
    await waitForState(tool(page, 'process_payment'), 'output-available');
    await shot('switched');

    // Export it from the chat menu: an ADK eval set, one case, the payment call and its
    // approval as ADK recorded them.
    await page.locator(`.chat-item[data-chat="${first}"]`).hover();
    const download = page.waitForEvent('download');
    await page.locator(`.chat-item[data-chat="${first}"] [data-testid=export-eval]`).click();
    const evalSet = JSON.parse(readFileSync(await (await download).path(), 'utf8'));
    const calls = evalSet.eval_cases[0].conversation.flatMap(i =>
      (i.intermediate_data?.invocation_events ?? []).flatMap(e =>
        (e.content?.parts ?? []).filter(p => p.function_call).map(p => p.function_call.name)));
    check(evalSet.eval_cases.length === 1 && calls.includes('process_payment')
      && calls.includes('adk_request_confirmation'), `exported calls: ${calls}`);

    // Delete the open chat: gone from the list, a new chat opens; a reload does not bring it back.
    await page.locator(`.chat-item[data-chat="${first}"]`).hover();
    await page.locator(`.chat-item[data-chat="${first}"] .chat-delete`).click();
    await page.waitForFunction(id => !document.querySelector(`[data-chat="${id}"].chat-item`), first);
    const listed = await (await page.request.get(new URL('api/chat?limit=100', page.url()).toString())).json();
    check(!listed.chats.some(c => c.id === first), 'the server no longer lists it');
    check((await assistant(page).count()) === 0, 'a new chat opened');
    expect(/status of 404/); // GET {api}/{chatId} of the deleted chat
    const gone = new URL(page.url());
    gone.searchParams.set('chat', first);
    await page.goto(gone.toString());
    await page.getByLabel('Message').waitFor();
    await page.waitForTimeout(300);
    check((await assistant(page).count()) === 0, 'the deleted chat stays deleted');
    return { txn, titles };
  },
};

// The artifacts test agent (tests/agents/artifacts): `--agent artifacts`.
const ARTIFACT_SCENARIOS = {
  async 'artifact-image'({ page, shot }) {
    await send(page, 'chart sales');
    await waitForText(page, 'draw_chart returned');
    await waitIdle(page);
    const figure = page.locator('[data-testid=message][data-role=assistant] [data-testid=file]');
    check((await figure.count()) === 1, `file parts shown: ${await figure.count()}`);
    check((await figure.getAttribute('data-media-type')) === 'image/png', 'media type');
    const image = figure.locator('img');
    // The browser loaded the artifact through the file part's URL and decoded it.
    await page.waitForFunction(
      () => {
        const img = document.querySelector('[data-testid=file] img');
        return img !== null && img.complete && img.naturalWidth > 0;
      },
      null,
      { timeout: 15_000 },
    );
    const [width, height] = await image.evaluate(img => [img.naturalWidth, img.naturalHeight]);
    check(width === 96 && height === 48, `the image is ${width}x${height}, expected the 96x48 chart`);
    check((await figure.locator('figcaption').textContent()) === 'chart.png', 'caption');
    const src = await image.getAttribute('src');
    check(/\/api\/chat\/[^/]+\/artifacts\/chart\.png\?version=0$/.test(new URL(src).pathname + new URL(src).search), `src: ${src}`);
    // The same URL with a range request, from the page (its cookies, its origin).
    const ranged = await page.evaluate(async url => {
      const response = await fetch(url, { headers: { Range: 'bytes=1-3' } });
      return {
        status: response.status,
        range: response.headers.get('content-range'),
        type: response.headers.get('content-type'),
        body: new TextDecoder().decode(await response.arrayBuffer()),
      };
    }, src);
    check(ranged.status === 206 && ranged.body === 'PNG' && ranged.type === 'image/png', `range: ${JSON.stringify(ranged)}`);
    check(/^bytes 1-3\/\d+$/.test(ranged.range ?? ''), `content-range: ${ranged.range}`);
    await shot('chart');
    return { src, width, height, contentRange: ranged.range };
  },
};

// Grounding on the Gemini emulator (tests/gemini/test_gemini_grounding.py, `--agent
// grounding`): the answer's sources as links and documents, and Google's search suggestions
// as rendered, as wide as the answer, their link opening a new tab; the file the answer
// comes with, named by ADK's display_name; the same after a reload.
const GROUNDING_SCENARIOS = {
  async grounding({ page, shot }) {
    await send(page, 'the capital of Portugal?');
    await waitForText(page, 'Lisbon is the capital of Portugal.');
    await waitIdle(page);
    const seen = async () => {
      const answer = page.locator('[data-testid=message][data-role=assistant]').last();
      const sources = answer.locator('[data-testid=source]');
      await sources.first().waitFor({ timeout: 15_000 });
      const listed = await sources.allTextContents();
      const links = await answer.locator('[data-testid=source] a').evaluateAll(a => a.map(l => [l.href, l.target]));
      const frame = answer.locator('iframe[data-testid=search-suggestions]');
      const chip = page.frameLocator('[data-testid=message][data-role=assistant] iframe[data-testid=search-suggestions]').locator('a.chip');
      await chip.waitFor({ timeout: 15_000 });
      const [href, target] = await chip.evaluate(a => [a.href, a.target || document.querySelector('base')?.target]);
      const chipText = await chip.textContent();
      const sandbox = await frame.getAttribute('sandbox');
      const widths = await answer.evaluate(m => {
        const text = m.querySelector('[data-testid=text]').getBoundingClientRect().width;
        const frame = m.querySelector('iframe[data-testid=search-suggestions]').getBoundingClientRect().width;
        return { text, frame };
      });
      const file = await answer.locator('[data-testid=file]').textContent();
      return { listed, links, href, target, chipText, sandbox, widths, file };
    };
    const live = await seen();
    check(live.listed.length === 6, `sources listed: ${JSON.stringify(live.listed)}`);
    check(live.listed.includes('Tram guide (trams.pdf)'), `the RAG document: ${JSON.stringify(live.listed)}`);
    check(live.links[0][0] === 'https://pt.test/lisbon' && live.links[0][1] === '_blank', `links: ${JSON.stringify(live.links)}`);
    check(live.chipText === 'capital of portugal', `chip: ${live.chipText}`);
    check(live.href === 'https://www.google.com/search?q=capital+of+portugal' && live.target === '_blank', `chip link: ${live.href} ${live.target}`);
    check(live.sandbox === 'allow-popups allow-popups-to-escape-sandbox', `sandbox: ${live.sandbox}`);
    check(live.file === 'Tram 28 timetable.pdf', `the file's name: ${live.file}`);
    check(live.widths.frame >= live.widths.text, `suggestions narrower than the answer: ${JSON.stringify(live.widths)}`);
    await shot('grounded');
    await page.reload();
    await page.getByLabel('Message').waitFor();
    const reloaded = await seen();
    check(JSON.stringify({ ...reloaded, widths: 0 }) === JSON.stringify({ ...live, widths: 0 }), `after a reload: ${JSON.stringify(reloaded)}`);
    return live;
  },
};

// The README's picture: `--readme docs/approval.png` runs only this.
// The code-execution test agent (tests/agents/code): the page shows the code the model ran
// and what it printed, or the error of a failed run.
const CODE_SCENARIOS = {
  async code({ page, shot }) {
    await send(page, 'compute 2 + 2');
    const card = tool(page, 'code_execution');
    await waitForState(card, 'output-available');
    await waitForText(page, 'The answer is 4.');
    const code = await card.locator('[data-testid=code]').textContent();
    const printed = await card.locator('[data-testid=code-output]').textContent();
    check(code.trim() === 'print(2 + 2)', `code: ${code}`);
    check(printed.trim() === '4', `output: ${printed}`);
    const texts = await assistantTexts(page);
    check(texts.join('|') === 'Let me compute that. |The answer is 4.', `texts: ${texts}`);
    await send(page, 'divide 1 by 0');
    const failed = tool(page, 'code_execution').nth(1);
    await waitForState(failed, 'output-error');
    await waitForText(page, 'Dividing by zero fails.');
    const error = await failed.locator('[data-testid=code-output]').textContent();
    check(error.includes('ZeroDivisionError'), `error: ${error}`);
    await waitIdle(page);
    await shot('code');
    return { code, printed, error };
  },
};

// The fan-out workflow (tests/agents/fanout): each parallel node's text names its agent, the
// JoinNode's output is shown as a node output.
const FANOUT_SCENARIOS = {
  async fanout({ page, shot }) {
    await send(page, 'Train or plane?');
    await waitForText(page, 'Take the train.');
    await waitIdle(page);
    const authors = await page.locator('[data-testid=text][data-author]').evaluateAll(
      parts => parts.map(p => p.dataset.author));
    check(authors.join(',') === 'pros,cons', `authors: ${authors}`);
    const joined = page.locator('[data-testid=node-output][data-node=join]');
    check((await joined.count()) === 1, 'the JoinNode output is shown');
    const shown = await joined.locator('pre').textContent();
    check(shown.includes('"pros"') && shown.includes('Trains are quiet'), `join: ${shown}`);
    await shot('fanout');
    return { authors, joined: shown };
  },
};

async function readmeShot({ page }, file) {
  await send(page, "What's the weather in Tokyo?");
  await waitForText(page, 'The weather in Tokyo is sunny, 22°C.');
  await waitIdle(page);
  await send(page, 'Send 30 dollars to Alice and 40 dollars to Bob');
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid=tool-process_payment][data-state=approval-requested]').length === 2,
  );
  await page.mouse.move(0, 0);
  await page.screenshot({ path: file });
}

const LAST = {
  // A last approved payment: proves the run's final payments ran once too.
  async 'payments-ran-once'({ page }) {
    return SCENARIOS.approve({ page, shot: async () => {} });
  },
};

// -- runner ---------------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv.slice(2));
  payments.count = Number(args['first-txn']) - 1;
  mkdirSync(args.out, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const version = browser.version();
  if (args.readme) {
    const context = await browser.newContext({ viewport: { width: 900, height: 940 }, deviceScaleFactor: 1.5 });
    const page = await context.newPage();
    await page.goto(args.url);
    await readmeShot({ page }, resolve(args.readme));
    await browser.close();
    process.stdout.write(JSON.stringify({ ok: true, screenshot: args.readme }));
    return;
  }
  const results = [];
  const plan = [];
  const agents = {
    artifacts: ARTIFACT_SCENARIOS,
    code: CODE_SCENARIOS,
    fanout: FANOUT_SCENARIOS,
    grounding: GROUNDING_SCENARIOS,
  };
  if (args.agent && !(args.agent in agents)) throw new Error(`no scenarios for --agent ${args.agent}`);
  const set = args.agent ? agents[args.agent] : SCENARIOS;
  for (const transport of ['sse', 'websocket']) {
    for (const name of Object.keys(set)) plan.push({ name, transport, fn: set[name] });
  }
  if (!args.agent) {
    for (const name of Object.keys(VOICE_SCENARIOS)) plan.push({ name, transport: 'voice', fn: VOICE_SCENARIOS[name] });
    for (const name of Object.keys(HISTORY_SCENARIOS)) plan.push({ name, transport: 'sse', fn: HISTORY_SCENARIOS[name] });
    plan.push({ name: 'payments-ran-once', transport: 'sse', fn: LAST['payments-ran-once'] });
  }

  for (const { name, transport, fn } of plan) {
    if (args.only && !args.only.split(',').includes(name)) continue;
    if (args.transport && args.transport !== transport) continue;
    const started = Date.now();
    const context = await browser.newContext({
      viewport: { width: 980, height: 760 },
      deviceScaleFactor: 1,
      permissions: ['geolocation', 'microphone', 'camera'],
      geolocation: TOKYO_STATION,
    });
    const page = await context.newPage();
    const consoleErrors = [];
    page.on('console', m => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', e => consoleErrors.push(String(e)));
    const shots = [];
    const shot = async label => {
      const file = join(args.out, `${name}-${transport}-${label}.png`);
      await page.screenshot({ path: file });
      shots.push(file);
    };
    const result = { name, transport, ok: false, error: null, ms: 0, facts: {}, screenshots: shots };
    // What a scenario expects the console to report (e.g. the 404 of a deleted chat).
    const expected = [];
    const expect = pattern => expected.push(pattern);
    try {
      const url = new URL(args.url);
      url.searchParams.set('mode', transport);
      await page.goto(url.toString());
      await page.getByLabel('Message').waitFor();
      result.facts = (await fn({ page, shot, args, expect })) ?? {};
      const errors = await page.locator('[role=alert]').allTextContents();
      check(errors.length === 0, `the page shows an error: ${errors}`);
      const unexpected = consoleErrors.filter(m => !expected.some(p => p.test(m)));
      check(unexpected.length === 0, `console errors: ${unexpected.join(' | ')}`);
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
    process.stderr.write(`${result.ok ? 'ok  ' : 'FAIL'} ${transport.padEnd(9)} ${name} (${result.ms} ms)${result.ok ? '' : `: ${result.error}`}\n`);
    await context.close();
  }
  await browser.close();
  const report = { ok: results.length > 0 && results.every(r => r.ok), chromium: version, results };
  writeFileSync(join(args.out, 'report.json'), JSON.stringify(report, null, 2));
  process.stdout.write(JSON.stringify(report));
}

main().catch(error => {
  process.stderr.write(`browser runner failed: ${error?.stack ?? error}\n`);
  process.exit(2);
});
