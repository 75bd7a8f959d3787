#!/usr/bin/env node
// Many conversations in one Node process, each followed by a reload from the server's
// history: drive-chat's conversation (the real AbstractChat + DefaultChatTransport), then
// GET {api}/{chatId}, validated with that version's own validateUIMessages, then (with
// `afterReload` steps) a new Chat started from the loaded messages goes on, as a page does
// with useChat({id, messages}) after a reload.
//
// Input (stdin): {"runs": [{ai, api, chatId, steps, autoSend?, headers?, afterReload?,
//                           timeoutMs?}], "concurrency"?: n}
// Output (stdout): {"results": [{chatId, ai, report, history, validation, reloaded?,
//                                 reloadedHistory?}]}

import { driveChat, emit, loadOnce } from './drive-chat.mjs';

async function readStdin() {
  const parts = [];
  for await (const part of process.stdin) parts.push(part);
  return Buffer.concat(parts).toString('utf8');
}

async function loadHistory(run) {
  const response = await fetch(`${run.api}/${encodeURIComponent(run.chatId)}`, {
    headers: run.headers ?? {},
  });
  const text = await response.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {
    // reported as text
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body };
}

async function validate(ai, messages) {
  const { ai: lib } = await loadOnce(ai);
  try {
    await lib.validateUIMessages({ messages });
    return { ok: true };
  } catch (err) {
    return { ok: false, error: String(err?.message ?? err).slice(0, 4000) };
  }
}

async function one(run) {
  const report = await driveChat(run);
  const history = await loadHistory(run);
  const messages = history.body?.messages;
  const validation = Array.isArray(messages)
    ? await validate(run.ai, messages)
    : { ok: false, error: 'no messages' };
  const result = { chatId: run.chatId, ai: run.ai, report, history, validation };
  if (run.afterReload != null && Array.isArray(messages)) {
    result.reloaded = await driveChat({ ...run, messages, steps: run.afterReload });
    result.reloadedHistory = await loadHistory(run);
  }
  return result;
}

async function main() {
  const input = JSON.parse(await readStdin());
  const runs = input.runs ?? [];
  const concurrency = Math.max(1, Number(input.concurrency ?? 4));
  const results = new Array(runs.length);
  let next = 0;
  async function worker() {
    while (next < runs.length) {
      const index = next++;
      try {
        results[index] = await one(runs[index]);
      } catch (err) {
        results[index] = { chatId: runs[index].chatId, ai: runs[index].ai,
                           crash: String(err?.stack ?? err) };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, worker));
  return { results };
}

main().then(
  output => emit(output, 0),
  err => {
    process.stderr.write(`drive-history: ${err?.stack ?? err}\n`);
    process.exit(2);
  },
);
