#!/usr/bin/env node
// Headless driver for the Vercel AI SDK's own chat machinery (AbstractChat +
// DefaultChatTransport), used by the adk-asgi conformance tests.
//
// Input: one JSON object on stdin (see README.md in this directory).
// Output: one JSON object on stdout describing everything that happened.
// Exit code 0 whenever that JSON was produced; 2 on harness crashes.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const KNOWN_ALIASES = ['ai5', 'ai6strict', 'ai6', 'ai7'];
const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_SETTLE_MS = 100;
const MAX_ERROR_TEXT = 4000;

class HarnessTimeout extends Error {
  constructor(ms, where) {
    super(`harness timeout after ${ms} ms (${where})`);
    this.name = 'HarnessTimeout';
  }
}

// ---------------------------------------------------------------------------
// small utilities

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function readStdin() {
  const parts = [];
  for await (const part of process.stdin) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

function errorText(err) {
  if (err == null) return null;
  const text = err instanceof Error ? err.message || String(err) : String(err);
  return text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text;
}

function headersToObject(headers) {
  if (headers == null) return {};
  const out = {};
  new Headers(headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function tryParseJson(text) {
  if (typeof text !== 'string') return text ?? null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** JSON-ish paths of every key/element whose value is null. */
function collectNullPaths(value, path, out) {
  if (value === null) {
    out.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => collectNullPaths(item, `${path}[${i}]`, out));
  } else if (typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const segment = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
      collectNullPaths(item, `${path}${segment}`, out);
    }
  }
  return out;
}

function toJsonSafe(value) {
  // Drops undefined (like JSON.stringify would on the wire) and breaks any
  // accidental sharing with live chat state.
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

// ---------------------------------------------------------------------------
// SSE parsing (our own, independent of the library), following the WHATWG
// event-stream rules the library's eventsource-parser implements.

function parseSse(text) {
  const lines = text.split(/\r\n|\r|\n/);
  // The last element is whatever follows the final line terminator: an
  // incomplete line the library's parser never completes.
  const incomplete = lines.pop();
  const events = [];
  let data = [];
  let eventName;
  let pendingRaw = []; // raw lines since the last blank line
  for (const line of lines) {
    if (line === '') {
      if (data.length > 0) events.push({ data: data.join('\n'), event: eventName });
      data = [];
      eventName = undefined;
      pendingRaw = [];
      continue;
    }
    pendingRaw.push(line);
    if (line.startsWith(':')) continue; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventName = value;
    // id / retry / unknown fields are ignored, as the client does.
  }
  // Text after the last blank line is silently dropped by the client (its
  // parser has no flush): report it raw so servers can be caught doing that.
  if (incomplete) pendingRaw.push(incomplete);
  const dropsSomething = data.length > 0 || Boolean(incomplete);
  return { events, unterminated: dropsSomething ? pendingRaw.join('\n') : null };
}

// ---------------------------------------------------------------------------
// loading one aliased version of `ai` plus its own provider-utils

async function loadVersion(alias) {
  if (typeof alias !== 'string' || !/^[\w.-]+$/.test(alias)) {
    throw new Error(`"ai" must be a package alias such as ${KNOWN_ALIASES.join(', ')}`);
  }
  const pkgJsonPath = join(HERE, 'node_modules', alias, 'package.json');
  let pkg;
  try {
    pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8'));
  } catch (err) {
    throw new Error(
      `cannot read ${pkgJsonPath} (${errorText(err)}); run "npm ci" in tests/js first`,
    );
  }
  if (pkg.name !== 'ai') throw new Error(`${alias} is not an alias of the "ai" package`);

  const ai = await import(alias);
  // The provider-utils this `ai` version itself depends on (nested under the
  // alias when versions differ), not whichever one is hoisted to the top.
  const requireFromAi = createRequire(pkgJsonPath);
  const providerUtilsEntry = requireFromAi.resolve('@ai-sdk/provider-utils');
  const providerUtils = await import(pathToFileURL(providerUtilsEntry).href);
  const providerUtilsVersion = packageVersionOf(providerUtilsEntry, '@ai-sdk/provider-utils');

  for (const name of ['AbstractChat', 'DefaultChatTransport', 'uiMessageChunkSchema']) {
    if (ai[name] == null) throw new Error(`ai@${pkg.version} does not export ${name}`);
  }
  if (typeof providerUtils.safeParseJSON !== 'function') {
    throw new Error(`@ai-sdk/provider-utils used by ai@${pkg.version} lacks safeParseJSON`);
  }

  // safeParseJSON = the library's secure JSON parse + validation against the
  // schema through safeValidateTypes: exactly what parseJsonEventStream does.
  const schema = ai.uiMessageChunkSchema;
  const validate = async text => {
    const result = await providerUtils.safeParseJSON({ text, schema });
    return result.success ? { ok: true } : { ok: false, error: errorText(result.error) };
  };

  // Make sure validation really runs (a schema-less validator would accept
  // everything silently).
  const probeBad = await validate('{"type":"__adk_asgi_harness_probe__"}');
  const probeGood = await validate('{"type":"start-step"}');
  if (probeBad.ok || !probeGood.ok) {
    throw new Error(
      `uiMessageChunkSchema validation of ai@${pkg.version} is not functional ` +
        `(probe bad ok=${probeBad.ok}, probe good ok=${probeGood.ok}: ${probeGood.error})`,
    );
  }

  return { ai, version: pkg.version, providerUtilsVersion, validate };
}

function packageVersionOf(entryFile, name) {
  for (let dir = dirname(entryFile); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name === name) return pkg.version;
    } catch {
      // keep walking up
    }
  }
  return null;
}

// ---------------------------------------------------------------------------
// activity tracking (used to decide when the chat is idle)

// One per conversation, so several conversations can run in one process.
function createActivity() {
  return {
    last: Date.now(),
    inflight: 0,
    touch() {
      this.last = Date.now();
    },
  };
}

// In-memory ChatState: the same contract the framework bindings implement,
// minus any reactivity. replaceMessage snapshots because the library mutates
// the streaming message in place.
class MemoryChatState {
  #status = 'ready';
  #error = undefined;
  #messages = [];
  #activity;

  constructor(activity, messages = []) {
    this.#activity = activity;
    this.#messages = [...messages];
  }

  get status() {
    return this.#status;
  }
  set status(value) {
    this.#status = value;
    this.#activity.touch();
  }
  get error() {
    return this.#error;
  }
  set error(value) {
    this.#error = value;
    this.#activity.touch();
  }
  get messages() {
    return this.#messages;
  }
  set messages(value) {
    this.#messages = [...value];
    this.#activity.touch();
  }
  pushMessage = message => {
    this.#messages = this.#messages.concat(this.snapshot(message));
    this.#activity.touch();
  };
  popMessage = () => {
    this.#messages = this.#messages.slice(0, -1);
    this.#activity.touch();
  };
  replaceMessage = (index, message) => {
    this.#messages = [
      ...this.#messages.slice(0, index),
      this.snapshot(message),
      ...this.#messages.slice(index + 1),
    ];
    this.#activity.touch();
  };
  snapshot = thing => {
    if (thing === undefined) return thing;
    try {
      return structuredClone(thing);
    } catch {
      return JSON.parse(JSON.stringify(thing));
    }
  };
}

// ---------------------------------------------------------------------------
// recording fetch

function makeRecordingFetch({ requests, pendingRecordings, validate, activity }) {
  return async function recordingFetch(url, init = {}) {
    const record = {
      method: (init.method ?? 'GET').toUpperCase(),
      url: String(url),
      requestHeaders: headersToObject(init.headers),
      body: init.body == null ? null : tryParseJson(init.body),
      status: null,
      headers: {},
      chunks: [],
      rawEvents: [],
      invalid: [],
      nullPaths: [],
      sawDone: false,
      dataAfterDone: false,
      unterminated: null,
      bodyText: null,
      streamError: null,
      fetchError: null,
    };
    requests.push(record);
    activity.inflight++;
    activity.touch();

    let response;
    try {
      response = await fetch(url, init);
    } catch (err) {
      record.fetchError = errorText(err);
      activity.inflight--;
      activity.touch();
      throw err;
    }

    record.status = response.status;
    record.headers = headersToObject(response.headers);

    if (response.body == null) {
      activity.inflight--;
      activity.touch();
      return response;
    }

    const [forLibrary, forRecorder] = response.body.tee();
    const recording = recordBody(forRecorder, record, validate, activity).finally(() => {
      activity.inflight--;
      activity.touch();
    });
    pendingRecordings.push(recording);

    return new Response(forLibrary, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

async function recordBody(stream, record, validate, activity) {
  const decoder = new TextDecoder();
  let text = '';
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      activity.touch();
    }
  } catch (err) {
    record.streamError = errorText(err);
  }
  text += decoder.decode();

  if (record.status < 200 || record.status > 299) {
    record.bodyText = text;
  }

  const { events, unterminated } = parseSse(text);
  record.unterminated = unterminated;
  for (const event of events) {
    record.rawEvents.push(event.data);
    if (event.data === '[DONE]') {
      record.sawDone = true;
      continue;
    }
    if (record.sawDone) record.dataAfterDone = true;
    const index = record.chunks.length;
    const chunk = tryParseJson(event.data);
    record.chunks.push(chunk);
    collectNullPaths(chunk, `chunks[${index}]`, record.nullPaths);
    const verdict = await validate(event.data);
    if (!verdict.ok) record.invalid.push({ index, chunk, error: verdict.error });
  }
}

// ---------------------------------------------------------------------------
// tool-part helpers (own implementation; version-independent)

const isToolPart = part =>
  typeof part?.type === 'string' && (part.type.startsWith('tool-') || part.type === 'dynamic-tool');
const toolNameOf = part => (part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5));

function lastAssistantMessage(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'assistant') return messages[i];
  }
  return undefined;
}

// The reply to the last user message, undefined until its first chunk arrives: until then
// the last assistant message is the previous reply, which a waitFor must not measure.
export function replyToLastUser(messages) {
  const lastUser = messages.findLastIndex(m => m.role === 'user');
  return messages.slice(lastUser + 1).find(m => m.role === 'assistant');
}

function findApprovalPart(messages, toolCallId) {
  const message = lastAssistantMessage(messages);
  if (message == null) throw new Error('approve: there is no assistant message');
  const part = message.parts.find(
    p =>
      isToolPart(p) &&
      p.state === 'approval-requested' &&
      (toolCallId == null || p.toolCallId === toolCallId),
  );
  if (part == null) {
    const states = message.parts.filter(isToolPart).map(p => `${p.toolCallId}:${p.state}`);
    throw new Error(
      `approve: no tool part in state approval-requested` +
        (toolCallId == null ? '' : ` with toolCallId ${toolCallId}`) +
        ` in the last assistant message (tool parts: ${states.join(', ') || 'none'})`,
    );
  }
  return part;
}

function findToolCallId(messages, tool) {
  const message = lastAssistantMessage(messages);
  if (message == null) throw new Error('toolOutput: there is no assistant message');
  // A call awaiting its output: a browser tool's, or a long-running server call that only
  // has its interim (preliminary) output.
  const part = message.parts.find(
    p =>
      isToolPart(p) &&
      toolNameOf(p) === tool &&
      (p.state === 'input-available' ||
        p.state === 'approval-responded' ||
        (p.state === 'output-available' && p.preliminary === true)),
  );
  if (part == null) {
    throw new Error(`toolOutput: no tool-${tool} part awaiting output in the last assistant message`);
  }
  return part.toolCallId;
}

// ---------------------------------------------------------------------------
// main

/** `load(alias)` once per alias and process; a rejected load is forgotten, so that the
 * next conversation tries again (drive-ws loads its `ai` versions and bundles this way). */
export function cachedPerAlias(load) {
  const cache = new Map();
  return alias => {
    if (!cache.has(alias)) {
      const loading = load(alias);
      cache.set(alias, loading);
      loading.catch(() => cache.delete(alias));
    }
    return cache.get(alias);
  };
}

/** One version of `ai`, loaded once per process. */
export const loadOnce = cachedPerAlias(alias => loadVersion(alias));

/** Run one conversation (the input object described in README.md) and report it. */
export async function driveChat(input) {
  if (input == null || typeof input !== 'object') throw new Error('stdin must be a JSON object');
  if (typeof input.api !== 'string') throw new Error('"api" (string URL) is required');
  const steps = input.steps ?? [];
  if (!Array.isArray(steps)) throw new Error('"steps" must be an array');

  const { ai, version, providerUtilsVersion, validate } = await loadOnce(input.ai);
  const activity = createActivity();
  const timeoutMs = Number(input.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const settleMs = Number(input.settleMs ?? DEFAULT_SETTLE_MS);
  const deadline = Date.now() + timeoutMs;

  let sendAutomaticallyWhen;
  const problems = [];
  if (input.autoSend === 'approvals') {
    sendAutomaticallyWhen = ai.lastAssistantMessageIsCompleteWithApprovalResponses;
  } else if (input.autoSend === 'toolCalls') {
    sendAutomaticallyWhen = ai.lastAssistantMessageIsCompleteWithToolCalls;
  } else if (input.autoSend != null) {
    throw new Error(`unknown autoSend ${JSON.stringify(input.autoSend)}`);
  }
  const autoSendUnsupported = input.autoSend != null && typeof sendAutomaticallyWhen !== 'function';
  if (autoSendUnsupported) {
    problems.push(`autoSend "${input.autoSend}" is not supported by ai@${version}`);
    sendAutomaticallyWhen = undefined;
  }

  const requests = [];
  const completions = [];
  const pendingRecordings = [];
  const chatErrors = [];
  const finishes = [];

  // `messages`: what the page starts from (e.g. a history loaded from the server).
  const state = new MemoryChatState(activity, input.messages ?? []);
  const transport = new ai.DefaultChatTransport({
    api: input.api,
    headers: input.headers ?? undefined,
    body: input.body ?? undefined,
    fetch: makeRecordingFetch({ requests, pendingRecordings, validate, activity }),
  });

  class HeadlessChat extends ai.AbstractChat {}
  const makeChat = (id, chatState) =>
    new HeadlessChat({
      ...(id != null ? { id } : {}),
      state: chatState,
      transport,
      sendAutomaticallyWhen,
      onError: err => {
        chatErrors.push(errorText(err));
      },
      onFinish: ({ isAbort, isDisconnect, isError, finishReason }) => {
        finishes.push({
          isAbort,
          isDisconnect,
          isError,
          finishReason: finishReason ?? null,
        });
      },
    });
  let chat = makeChat(input.chatId, state);

  const remaining = () => deadline - Date.now();

  async function withDeadline(promise, where) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new HarnessTimeout(timeoutMs, where)), Math.max(0, remaining()));
    });
    try {
      return await Promise.race([promise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function waitUntilIdle(where) {
    for (;;) {
      if (remaining() <= 0) throw new HarnessTimeout(timeoutMs, where);
      const status = chat.status;
      if (
        (status === 'ready' || status === 'error') &&
        activity.inflight === 0 &&
        Date.now() - activity.last >= settleMs
      ) {
        return;
      }
      await sleep(10);
    }
  }

  const requestOptions = step => {
    const options = {};
    if (step.headers != null) options.headers = step.headers;
    if (step.body != null) options.body = step.body;
    if (step.metadata !== undefined) options.metadata = step.metadata;
    return options;
  };

  function runStep(step) {
    switch (step.action) {
      case 'send': {
        const message = { text: String(step.text ?? '') };
        if (step.files != null) message.files = step.files;
        if (step.messageMetadata !== undefined) message.metadata = step.messageMetadata;
        if (step.messageId != null) message.messageId = step.messageId;
        const sent = chat.sendMessage(message, requestOptions(step));
        if (!step.noWait) return sent;
        // noWait: the next step runs while this response streams (e.g. waitFor + reload),
        // once the message is in the chat and its request started (the chat left `ready`).
        let settled = false;
        sent.finally(() => (settled = true)); // a rejection stays unhandled, as before
        return (async () => {
          while (!settled && chat.status !== 'submitted' && chat.status !== 'streaming') {
            if (remaining() <= 0) throw new HarnessTimeout(timeoutMs, 'send');
            await sleep(5);
          }
        })();
      }
      case 'waitFor': {
        // Until the reply to the last user message has at least `textLength` characters.
        const want = Number(step.textLength ?? 1);
        return (async () => {
          for (;;) {
            const message = replyToLastUser(chat.messages);
            const text = (message?.parts ?? [])
              .filter(p => p.type === 'text')
              .map(p => p.text)
              .join('');
            if (text.length >= want) return;
            if (remaining() <= 0) throw new HarnessTimeout(timeoutMs, 'waitFor');
            await sleep(5);
          }
        })();
      }
      case 'stop':
        return chat.stop();
      case 'deleteStream':
        // What a page does to stop a turn that survives disconnects (resume_grace):
        // DELETE {api}/{chatId}/stream.
        return fetch(`${input.api}/${encodeURIComponent(chat.id)}/stream`, { method: 'DELETE' })
          .then(response => response.text());
      case 'resume':
        return chat.resumeStream(requestOptions(step));
      case 'reload': {
        // A page reload: the in-flight response is dropped (its fetch aborted), a new
        // Chat with the same id starts from the messages the page had persisted (all
        // but a trailing, unfinished assistant message) and resumes the stream.
        const kept = chat.messages.slice();
        if (kept.length > 0 && kept[kept.length - 1].role === 'assistant') kept.pop();
        const old = chat;
        old.stop().catch(() => {});
        const fresh = new MemoryChatState(activity, kept);
        chat = makeChat(old.id, fresh);
        return chat.resumeStream(requestOptions(step));
      }
      case 'sendEmpty':
        return chat.sendMessage(undefined, requestOptions(step));
      case 'completeToolCall': {
        // The back-office: POST {api}/{chatId}/tool-output for the first call of `tool`
        // that awaits its output (a long-running server call), recorded like a request.
        const toolCallId = step.toolCallId ?? findToolCallId(chat.messages, step.tool);
        const body =
          step.errorText != null
            ? { toolCallId, errorText: step.errorText }
            : { toolCallId, output: step.output ?? {} };
        return fetch(`${input.api}/${encodeURIComponent(chat.id)}/tool-output`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(input.headers ?? {}) },
          body: JSON.stringify(body),
        }).then(async response => {
          completions.push({ status: response.status, body: tryParseJson(await response.text()) });
        });
      }
      case 'signIn': {
        // What the page's sign-in popup does for an OAuth2 credential request: open the
        // part's authUri (the provider's consent page), answer its form (`decision`), and
        // follow the redirect to adk-asgi's callback; the callback's answer goes to
        // `completions` ({status, body, url}).
        const message = lastAssistantMessage(chat.messages);
        const part = message?.parts.find(
          p => isToolPart(p) && toolNameOf(p) === 'adk_request_credential' &&
            p.state === 'input-available' && typeof p.input?.authUri === 'string',
        );
        if (part == null) throw new Error('signIn: no adk_request_credential part with an authUri');
        return (async () => {
          const consent = await fetch(part.input.authUri);
          const page = await consent.text();
          const action = /<form[^>]*action="([^"]*)"/.exec(page)?.[1];
          if (consent.status !== 200 || action == null) {
            throw new Error(`signIn: no consent form at the authUri (${consent.status}): ${page.slice(0, 300)}`);
          }
          const fields = new URLSearchParams();
          for (const [, name, value] of page.matchAll(/<input type=hidden name="([^"]*)" value="([^"]*)">/g)) {
            fields.append(name.replaceAll('&amp;', '&'), value.replaceAll('&amp;', '&'));
          }
          fields.append('decision', step.decision ?? 'allow');
          const answer = await fetch(new URL(action.replaceAll('&amp;', '&'), part.input.authUri), {
            method: 'POST',
            body: fields,
            redirect: 'manual',
          });
          const location = answer.headers.get('location');
          if (location == null) throw new Error(`signIn: the provider did not redirect (${answer.status})`);
          const callback = await fetch(location);
          completions.push({ status: callback.status, body: await callback.text(), url: location });
        })();
      }
      case 'regenerate':
        return chat.regenerate({
          ...(step.messageId != null ? { messageId: step.messageId } : {}),
          ...requestOptions(step),
        });
      case 'approve': {
        if (typeof chat.addToolApprovalResponse !== 'function') {
          throw new Error(`approve: ai@${version} has no addToolApprovalResponse`);
        }
        const part = findApprovalPart(chat.messages, step.toolCallId);
        if (step.payload !== undefined) {
          // What a page does to let the user edit what they approve: the part's
          // callProviderMetadata.adk.payload, set through the chat's messages.
          chat.messages = chat.messages.map(message => ({
            ...message,
            parts: message.parts.map(p =>
              isToolPart(p) && p.toolCallId === part.toolCallId
                ? {
                    ...p,
                    callProviderMetadata: {
                      ...p.callProviderMetadata,
                      adk: { ...p.callProviderMetadata?.adk, payload: step.payload },
                    },
                  }
                : p,
            ),
          }));
        }
        const response = { id: part.approval.id, approved: step.approved ?? true };
        if (step.reason != null) response.reason = step.reason;
        if (step.headers != null || step.body != null) response.options = requestOptions(step);
        return chat.addToolApprovalResponse(response);
      }
      case 'toolOutput': {
        if (typeof step.tool !== 'string') throw new Error('toolOutput: "tool" is required');
        const addOutput = chat.addToolOutput ?? chat.addToolResult;
        if (typeof addOutput !== 'function') {
          throw new Error(`toolOutput: ai@${version} has neither addToolOutput nor addToolResult`);
        }
        const toolCallId = step.toolCallId ?? findToolCallId(chat.messages, step.tool);
        const payload =
          step.errorText != null
            ? { state: 'output-error', tool: step.tool, toolCallId, errorText: step.errorText }
            : { tool: step.tool, toolCallId, output: step.output ?? null };
        if (step.headers != null || step.body != null) payload.options = requestOptions(step);
        return addOutput.call(chat, payload);
      }
      default:
        throw new Error(`unknown step action ${JSON.stringify(step.action)}`);
    }
  }

  const stepResults = [];
  let timedOut = false;
  let harnessError = null;

  for (const [i, step] of steps.entries()) {
    const where = `step ${i} (${step?.action})`;
    const requestsBefore = requests.length;
    const result = { action: step?.action ?? null, status: null, error: null, stepError: null };
    stepResults.push(result);
    try {
      await withDeadline(Promise.resolve().then(() => runStep(step ?? {})), where);
      // A noWait send and a waitFor act while a response streams: no idle wait.
      if (!step?.noWait && step?.action !== 'waitFor') await waitUntilIdle(where);
    } catch (err) {
      if (err instanceof HarnessTimeout) {
        timedOut = true;
        harnessError = err.message;
      } else {
        result.stepError = errorText(err);
      }
    }
    result.status = chat.status;
    result.error = errorText(chat.error) ?? result.stepError;
    result.requests = Array.from(
      { length: requests.length - requestsBefore },
      (_, k) => requestsBefore + k,
    );
    if (result.stepError != null) problems.push(`${where}: ${result.stepError}`);
    if (chat.status === 'error') problems.push(`${where}: chat error: ${errorText(chat.error)}`);
    if (timedOut || result.stepError != null) break; // later steps depend on this one
  }

  if (timedOut) {
    problems.push(harnessError);
    // Abort whatever is in flight so that recordings terminate.
    await Promise.race([chat.stop().catch(() => {}), sleep(500)]);
  }
  // Recordings normally finished before idle; give stragglers a short grace.
  await Promise.race([Promise.allSettled(pendingRecordings), sleep(timedOut ? 500 : 2000)]);

  const invalidCount = requests.reduce((n, r) => n + r.invalid.length, 0);
  if (invalidCount > 0) problems.push(`${invalidCount} chunk(s) failed uiMessageChunkSchema`);

  const ok =
    invalidCount === 0 &&
    !timedOut &&
    !autoSendUnsupported &&
    stepResults.every(r => r.stepError == null && r.status !== 'error') &&
    chatErrors.length === 0;

  return {
    ok,
    ai: input.ai,
    version,
    providerUtilsVersion,
    chatId: chat.id,
    status: chat.status,
    error: errorText(chat.error) ?? (timedOut ? harnessError : null),
    timedOut,
    messages: toJsonSafe(chat.messages),
    requests,
    completions,
    stepResults,
    chatErrors,
    finishes,
    problems,
  };
}

async function main() {
  const rawInput = await readStdin();
  let input;
  try {
    input = JSON.parse(rawInput);
  } catch (err) {
    throw new Error(`stdin is not valid JSON: ${errorText(err)}`);
  }
  return driveChat(input);
}

export function emit(output, code) {
  process.stdout.write(`${JSON.stringify(output)}\n`, () => process.exit(code));
}

if (process.argv[1] != null && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    output => emit(output, 0),
    err => {
      process.stderr.write(`drive-chat: ${err?.stack ?? err}\n`);
      process.exit(2);
    },
  );
}
