#!/usr/bin/env node
// drive-chat's conversations for a long-lived caller (tests/support/aisdk_client.py keeps
// one per test process): a Node start and the load of an `ai` version cost about 0.45 s of
// CPU, more than most conversations, and the suite runs hundreds of them.
//
// Input (stdin): one JSON object per line, {"id": n, "input": <drive-chat's input>}.
// Output (stdout): one JSON object per line as each conversation ends, in any order:
//   {"id": n, "report": <drive-chat's report>}, or {"id": n, "crash": "<stack>"} where
//   drive-chat.mjs would exit 2. Conversations run side by side, each with its own Chat,
//   transport and recordings (drive-chat keeps no state between them but the loaded `ai`
//   versions). An unhandled rejection ends the process with 1, as it ends a one-shot
//   drive-chat: the caller fails what was running and starts a new one.
// Nothing else goes to stdout: console.log and console.info write to stderr.
import { createInterface } from 'node:readline';

import { driveChat } from './drive-chat.mjs';

console.log = console.error;
console.info = console.error;

const write = answer => process.stdout.write(`${JSON.stringify(answer)}\n`);

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', line => {
  if (line.trim() === '') return;
  const { id, input } = JSON.parse(line);
  driveChat(input).then(
    report => write({ id, report }),
    err => write({ id, crash: String(err?.stack ?? err) }),
  );
});
// The caller closed stdin: it is done with us (what still runs is not waited for).
lines.on('close', () => process.exit(0));
