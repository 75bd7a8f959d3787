/**
 * Run by the packaging test in the empty project (packed tarball + one `ai` version),
 * against a real `adk-asgi serve` at process.argv[2]: every export is there, and a
 * chat works over SSE (a browser tool) and over the live WebSocket (AdkLiveTransport),
 * plus an approval with ai >= 6. Prints one JSON line; exits non-zero on failure.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import * as ai from 'ai';
import * as pkg from 'adk-asgi';
import WebSocket from 'ws';

const EXPORTS = {
  AdkLiveTransport: 'function',
  CREDENTIAL_TOOL: 'string',
  FrameCapture: 'function',
  INPUT_TOOL: 'string',
  Microphone: 'function',
  PcmPlayer: 'function',
  SIGN_IN_MESSAGE: 'string',
  adkToolCallMetadata: 'function',
  answerApproval: 'function',
  answerCredential: 'function',
  answerInput: 'function',
  checkInput: 'function',
  compactInput: 'function',
  decodePcm16: 'function',
  initialValue: 'function',
  inputForm: 'function',
  isCredentialRequest: 'function',
  isInputRequest: 'function',
  lastAssistantMessageIsCompleteWithAnswers: 'function',
  liveUrl: 'function',
  refusedAnswer: 'function',
  reopenToolCall: 'function',
  runBrowserTool: 'function',
  signIn: 'function',
  toolNameOf: 'function',
};
assert.deepEqual(
  Object.fromEntries(Object.entries(pkg).map(([name, value]) => [name, typeof value]).sort()),
  EXPORTS,
);

const server = process.argv[2];
const aiVersion = JSON.parse(readFileSync('node_modules/ai/package.json', 'utf8')).version;
const approvals = Number(aiVersion.split('.')[0]) >= 6;
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

class State {
  status = 'ready';
  error = undefined;
  messages = [];
  pushMessage = m => { this.messages = [...this.messages, structuredClone(m)]; };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => { this.messages = this.messages.map((x, j) => (j === i ? structuredClone(m) : x)); };
  snapshot = v => (v === undefined ? v : structuredClone(v));
}
class Chat extends ai.AbstractChat {}

function makeChat(transport) {
  const errors = [];
  const chat = new Chat({
    id: `pack-${aiVersion}-${Math.random().toString(36).slice(2)}`,
    state: new State(),
    transport,
    sendAutomaticallyWhen: pkg.lastAssistantMessageIsCompleteWithAnswers,
    onError: error => errors.push(error.message),
    // only the tools that need no approval (onToolCall comes before an approval request)
    onToolCall: ({ toolCall }) => {
      if (toolCall.toolName in runAtOnce) void pkg.runBrowserTool(chat, toolCall, runAtOnce);
    },
  });
  return { chat, errors };
}

async function settle(chat) {
  const deadline = Date.now() + 20_000;
  let quietSince = Date.now();
  for (;;) {
    await sleep(25);
    if (chat.status !== 'ready' && chat.status !== 'error') quietSince = Date.now();
    else if (Date.now() - quietSince > 300) return;
    if (Date.now() > deadline) throw new Error(`timed out (${chat.status})`);
  }
}

const text = chat =>
  chat.messages.filter(m => m.role === 'assistant').flatMap(m => m.parts).filter(p => p.type === 'text').map(p => p.text).join('');

const runAtOnce = { change_bgm: input => ({ success: true, track: input.track }) };
let located = 0;
const runWhenApproved = { get_location: () => (located++, { latitude: 1.5, longitude: 2.5 }) };
const results = {};

// SSE with the stock transport: a browser tool, run by runBrowserTool
{
  const { chat, errors } = makeChat(new ai.DefaultChatTransport({ api: `${server}/api/chat` }));
  await chat.sendMessage({ text: 'Play track 2' });
  await settle(chat);
  assert.deepEqual(errors, []);
  assert.match(text(chat), /Now playing track 2\./);
  results.sse = 'ok';
}

// the live WebSocket, protocol A
{
  const transport = new pkg.AdkLiveTransport({ url: `${server}/api/chat`, webSocket: WebSocket });
  const { chat, errors } = makeChat(transport);
  await chat.sendMessage({ text: "What's the weather in Tokyo?" });
  await settle(chat);
  assert.deepEqual(errors, []);
  assert.match(text(chat), /The weather in Tokyo is sunny, 22°C\./);
  if (approvals) {
    await chat.sendMessage({ text: 'Where am I?' });
    await settle(chat);
    const part = chat.lastMessage.parts.find(p => p.type === 'tool-get_location');
    assert.equal(part?.state, 'approval-requested');
    assert.equal(await pkg.answerApproval(chat, part, true, { tools: runWhenApproved }), true);
    await settle(chat);
    assert.deepEqual(errors, []);
    assert.match(text(chat), /You are at latitude 1\.5, longitude 2\.5\./);
    assert.equal(located, 1); // after the approval, once
  }
  transport.close();
  results.live = approvals ? 'ok with approval' : 'ok';
}

console.log(JSON.stringify({ ai: aiVersion, ...results }));
