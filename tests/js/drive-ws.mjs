#!/usr/bin/env node
// Headless driver for ai@7's own WebSocketChatTransport (+ AbstractChat), used by the
// adk-asgi live-mode tests (protocol B). Same approach as drive-chat.mjs: an
// in-memory ChatState, steps run one by one, every chunk frame validated with the
// version's own uiMessageChunkSchema.
//
// Run as `node drive-ws.mjs < input.json` for one conversation, or through
// drive-serve.mjs (lines with "driver": "ws"), which runs driveWs() side by side with
// other conversations in one long-lived process: everything a conversation records is its
// own; the loaded `ai` versions and the bundled AdkLiveTransport are loaded once per process.
//
// Input (stdin, one JSON object):
//   {"ai": "ai7", "url": "ws://127.0.0.1:PORT/", "chatId": "c1",
//    "autoSend": null | "approvals" | "toolCalls" | "both", "timeoutMs": 20000, "settleMs": 150,
//    "transport": "ai" (default: ai@7's WebSocketChatTransport, protocol B) | "adk" (the npm
//    package's AdkLiveTransport from clients/js/src, bundled with esbuild: protocol A; its
//    `url` is the HTTP chat endpoint, `ws` is passed as its WebSocket),
//    "steps": [{"action": "send", "text": "hi"},
//              {"action": "approve", "toolCallId"?: "...", "approved": true,
//               "reason"?: "...", "payload"?: {...}},
//              {"action": "toolOutput", "tool": "get_location", "output": {...}},
//              {"action": "completeToolCall", "tool": "open_ticket", "output": {...}},
//              {"action": "resume"},
//              {"action": "stop"}]}          chat.stop(): the transport sends `abort`
//   "api" (the HTTP base of the same app) is needed for completeToolCall: what a back-office
//   does, POST {api}/{chatId}/tool-output; the answers go to the report's `completions`.
//   A `send` with "noWait": true starts the next step while it streams (once its message
//   is in the chat and its request started); {"action": "waitFor", "textLength": N} waits
//   until the reply to the last user message has N characters of text (not the previous
//   reply: the new one exists only from its first chunk on).
// Output (stdout, one JSON object; what driveWs() returns): ok, messages, frames (every
// server frame, parsed), sent (every client frame), invalid (chunks failing the schema),
// nullPaths, chatErrors, finishes, stepResults, problems. Exit 0 when produced, 2 on
// crashes (driveWs() rejects).

import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';

import { cachedPerAlias, emit, replyToLastUser } from './drive-chat.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLIENT_DIR = join(HERE, '..', '..', 'clients', 'js');

// The npm package's AdkLiveTransport, built from its sources: bundled next to this file
// (so its `ai` import, aliased to the chosen version, resolves from tests/js/node_modules),
// imported, then removed. Once per alias and process (loadAdkTransportOnce): conversations
// that want it meanwhile wait for the same import, so none imports a file being removed.
let bundles = 0;
async function loadAdkTransport(alias) {
  const requireFromClient = createRequire(join(CLIENT_DIR, 'package.json'));
  const esbuild = requireFromClient('esbuild');
  // A new name per build: a retried import of a name that failed would fail from Node's cache.
  const out = join(HERE, `.adk-live-transport-${process.pid}-${bundles++}.mjs`);
  await esbuild.build({
    entryPoints: [join(CLIENT_DIR, 'src', 'live-transport.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile: out,
    alias: { ai: alias },
    external: [alias],
    logLevel: 'silent',
  });
  try {
    return (await import(pathToFileURL(out).href)).AdkLiveTransport;
  } finally {
    rmSync(out, { force: true });
  }
}
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const errorText = err =>
  err == null ? null : err instanceof Error ? err.message || String(err) : String(err);

const loadAdkTransportOnce = cachedPerAlias(loadAdkTransport);

async function readStdin() {
  const parts = [];
  for await (const part of process.stdin) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

function collectNullPaths(value, path, out) {
  if (value === null) out.push(path);
  else if (Array.isArray(value)) value.forEach((v, i) => collectNullPaths(v, `${path}[${i}]`, out));
  else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) collectNullPaths(v, `${path}.${k}`, out);
  }
  return out;
}

async function loadVersion(alias) {
  const pkgJsonPath = join(HERE, 'node_modules', alias, 'package.json');
  const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
  if (pkg.name !== 'ai') throw new Error(`${alias} is not an alias of the "ai" package`);
  const ai = await import(alias);
  for (const name of ['AbstractChat', 'WebSocketChatTransport', 'uiMessageChunkSchema']) {
    if (ai[name] == null) throw new Error(`ai@${pkg.version} does not export ${name}`);
  }
  const requireFromAi = createRequire(pkgJsonPath);
  const providerUtils = await import(
    pathToFileURL(requireFromAi.resolve('@ai-sdk/provider-utils')).href
  );
  const validate = async value => {
    const result = await providerUtils.safeValidateTypes({ value, schema: ai.uiMessageChunkSchema });
    return result.success ? { ok: true } : { ok: false, error: errorText(result.error) };
  };
  if ((await validate({ type: '__probe__' })).ok || !(await validate({ type: 'start-step' })).ok) {
    throw new Error('uiMessageChunkSchema validation is not functional');
  }
  return { ai, version: pkg.version, validate };
}

const loadVersionOnce = cachedPerAlias(loadVersion);

class MemoryChatState {
  status = 'ready';
  error = undefined;
  messages = [];
  pushMessage = m => {
    this.messages = this.messages.concat(structuredClone(m));
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
  };
  snapshot = t => (t === undefined ? t : structuredClone(t));
}

const isToolPart = p =>
  typeof p?.type === 'string' && (p.type.startsWith('tool-') || p.type === 'dynamic-tool');
const lastAssistant = messages => [...messages].reverse().find(m => m.role === 'assistant');

/** Run one conversation (the input object described above) and report it. */
export async function driveWs(input) {
  if (input == null || typeof input !== 'object') throw new Error('the input must be a JSON object');
  const { ai, version, validate } = await loadVersionOnce(input.ai ?? 'ai7');
  const timeoutMs = Number(input.timeoutMs ?? 20_000);
  const settleMs = Number(input.settleMs ?? 150);
  const deadline = Date.now() + timeoutMs;

  const frames = [];
  const sent = [];
  const completions = [];
  const invalid = [];
  const nullPaths = [];
  const pendingValidations = [];
  let lastActivity = Date.now();

  class RecordingWebSocket extends WebSocket {
    constructor(url, protocols) {
      super(url, protocols);
      this.addEventListener('message', event => {
        lastActivity = Date.now();
        const raw = String(event.data);
        // Protocol A sends each chunk as an SSE event (`data: {...}\n\n`, `data: [DONE]`).
        const sse = raw.startsWith('data: ') ? raw.slice(6).trim() : null;
        const frame = sse == null ? JSON.parse(raw)
          : sse === '[DONE]' ? { type: 'done' } : { type: 'chunk', chunk: JSON.parse(sse) };
        frames.push(frame);
        if (frame.type === 'chunk') {
          // A null inside a tool's input or output, a data part or metadata is the app's
          // data (e.g. {"result": null}); anywhere else it breaks the wire rules.
          const path = `frames[${frames.length - 1}].chunk`;
          nullPaths.push(...collectNullPaths(frame.chunk, path, []).filter(
            p => !/^frames\[\d+\]\.chunk\.(input|output|data|messageMetadata)\./.test(p)));
          pendingValidations.push(
            validate(frame.chunk).then(v => {
              if (!v.ok) invalid.push({ chunk: frame.chunk, error: v.error });
            }),
          );
        }
      });
    }
    send(data) {
      lastActivity = Date.now();
      sent.push(JSON.parse(String(data)));
      super.send(data);
    }
  }

  const predicates = [];
  if (input.autoSend === 'approvals' || input.autoSend === 'both') {
    predicates.push(ai.lastAssistantMessageIsCompleteWithApprovalResponses);
  }
  if (input.autoSend === 'toolCalls' || input.autoSend === 'both') {
    predicates.push(ai.lastAssistantMessageIsCompleteWithToolCalls);
  }
  const sendAutomaticallyWhen = predicates.length
    ? options => predicates.some(p => p(options))
    : undefined;

  const transport = input.transport === 'adk'
    ? new (await loadAdkTransportOnce(input.ai ?? 'ai7'))({ url: input.url, webSocket: RecordingWebSocket })
    : new ai.WebSocketChatTransport({ url: input.url, webSocket: RecordingWebSocket });
  const state = new MemoryChatState();
  const chatErrors = [];
  const finishes = [];
  class HeadlessChat extends ai.AbstractChat {}
  const chat = new HeadlessChat({
    id: input.chatId,
    state,
    transport,
    sendAutomaticallyWhen,
    onError: err => chatErrors.push(errorText(err)),
    onFinish: ({ isAbort, isDisconnect, isError, finishReason }) =>
      finishes.push({ isAbort, isDisconnect, isError, finishReason: finishReason ?? null }),
  });

  async function until(condition, where) {
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`${where}: harness timeout`);
      await sleep(10);
    }
  }

  const waitUntilIdle = () =>
    until(() => (chat.status === 'ready' || chat.status === 'error') && Date.now() - lastActivity >= settleMs,
      'idle');

  function runStep(step) {
    switch (step.action) {
      case 'send':
        return chat.sendMessage({ text: String(step.text ?? '') },
          step.body != null ? { body: step.body } : undefined);
      case 'approve': {
        const message = lastAssistant(chat.messages);
        const part = message?.parts.find(
          p => isToolPart(p) && p.state === 'approval-requested' &&
            (step.toolCallId == null || p.toolCallId === step.toolCallId),
        );
        if (part == null) throw new Error('approve: no part in approval-requested');
        if (step.payload !== undefined) {
          // The page lets the user edit what they approve: callProviderMetadata.adk.payload.
          chat.messages = chat.messages.map(m => ({
            ...m,
            parts: m.parts.map(p =>
              isToolPart(p) && p.toolCallId === part.toolCallId
                ? { ...p, callProviderMetadata: { ...p.callProviderMetadata,
                    adk: { ...p.callProviderMetadata?.adk, payload: step.payload } } }
                : p),
          }));
        }
        const response = { id: part.approval.id, approved: step.approved ?? true };
        if (step.reason != null) response.reason = step.reason;
        return chat.addToolApprovalResponse(response);
      }
      case 'completeToolCall': {
        const message = lastAssistant(chat.messages);
        const part = message?.parts.find(
          p => isToolPart(p) && p.type === `tool-${step.tool}` && p.state === 'output-available' &&
            p.preliminary === true,
        );
        if (part == null) throw new Error(`completeToolCall: no pending tool-${step.tool} part`);
        const body = step.errorText != null
          ? { toolCallId: part.toolCallId, errorText: step.errorText }
          : { toolCallId: part.toolCallId, output: step.output ?? {} };
        return fetch(`${input.api}/${encodeURIComponent(input.chatId)}/tool-output`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
        }).then(async response => {
          completions.push({ status: response.status, body: JSON.parse(await response.text()) });
        });
      }
      case 'toolOutput': {
        const message = lastAssistant(chat.messages);
        const part = message?.parts.find(
          p => isToolPart(p) && p.type === `tool-${step.tool}` &&
            (p.state === 'input-available' || p.state === 'approval-responded'),
        );
        if (part == null) throw new Error(`toolOutput: no tool-${step.tool} part awaiting output`);
        return chat.addToolOutput({ tool: step.tool, toolCallId: part.toolCallId, output: step.output ?? null });
      }
      case 'sendEmpty':
        return chat.sendMessage();
      case 'resume':
        return chat.resumeStream();
      case 'stop':
        return chat.stop();
      case 'waitFor':
        return until(() => {
          const message = replyToLastUser(chat.messages);
          const text = (message?.parts ?? []).filter(p => p.type === 'text').map(p => p.text).join('');
          return text.length >= (step.textLength ?? 1);
        }, 'waitFor');
      default:
        throw new Error(`unknown step ${JSON.stringify(step.action)}`);
    }
  }

  const stepResults = [];
  const problems = [];
  try {
    for (const [i, step] of (input.steps ?? []).entries()) {
      const result = { action: step.action, status: null, error: null, stepError: null };
      stepResults.push(result);
      try {
        if (step.action === 'send' && step.noWait) {
          let settled = false;
          runStep(step)
            .catch(err => problems.push(`step ${i} (send): ${errorText(err)}`))
            .finally(() => { settled = true; });
          // On once the message is in the chat and its request started (the chat leaves
          // `ready`), so that the next step acts on this send.
          await until(() => settled || chat.status === 'submitted' || chat.status === 'streaming',
            `step ${i} (send)`);
        } else {
          await runStep(step);
          if (step.action !== 'waitFor') {
            await sleep(20);
            await waitUntilIdle();
          }
        }
      } catch (err) {
        result.stepError = errorText(err);
        problems.push(`step ${i} (${step.action}): ${result.stepError}`);
      }
      result.status = chat.status;
      result.error = errorText(chat.error);
      if (chat.status === 'error') problems.push(`step ${i}: chat error: ${result.error}`);
      if (result.stepError != null) break;
    }
    await Promise.all(pendingValidations);
  } finally {
    // The conversation's socket ends with it (in drive-serve's process too).
    transport.close();
  }
  if (invalid.length) problems.push(`${invalid.length} chunk(s) failed uiMessageChunkSchema`);
  if (nullPaths.length) problems.push(`null values at ${nullPaths.join(', ')}`);
  return {
    ok: problems.length === 0 && chatErrors.length === 0,
    version,
    status: chat.status,
    messages: JSON.parse(JSON.stringify(chat.messages)),
    frames,
    sent,
    completions,
    invalid,
    nullPaths,
    chatErrors,
    finishes,
    stepResults,
    problems,
  };
}

async function main() {
  return driveWs(JSON.parse(await readStdin()));
}

if (process.argv[1] != null && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    output => emit(output, 0),
    err => {
      process.stderr.write(`drive-ws: ${err?.stack ?? err}\n`);
      process.exit(2);
    },
  );
}
