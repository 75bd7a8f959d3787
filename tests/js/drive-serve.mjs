#!/usr/bin/env node
// drive-chat's and drive-ws's conversations for a long-lived caller
// (tests/support/aisdk_client.py keeps one per test process): a Node start and the load of
// an `ai` version cost about 0.45 s of CPU, more than most conversations, and the suite
// runs hundreds of them.
//
// Input (stdin): one JSON object per line, {"id": n, "driver"?: "chat" | "ws", "input":
//   <that driver's input>}; "driver" defaults to "chat" (drive-chat.mjs), "ws" is
//   drive-ws.mjs (loaded on its first conversation).
// Output (stdout): one JSON object per line as each conversation ends, in any order:
//   {"id": n, "report": <the driver's report>}, or {"id": n, "crash": "<stack>"} where
//   the one-shot driver would exit 2. Conversations run side by side, each with its own
//   Chat, transport and recordings (the drivers keep no state between them but the loaded
//   `ai` versions and drive-ws's bundle of AdkLiveTransport). An unhandled rejection ends
//   the process with 1, as it ends a one-shot driver: the caller fails what was running
//   and starts a new one.
// Nothing else goes to stdout: console.log and console.info write to stderr.
import { createInterface } from 'node:readline';

import { driveChat } from './drive-chat.mjs';

console.log = console.error;
console.info = console.error;

let wsModule;
const DRIVERS = {
  chat: driveChat,
  ws: async input => (await (wsModule ??= import('./drive-ws.mjs'))).driveWs(input),
};

const write = answer => process.stdout.write(`${JSON.stringify(answer)}\n`);

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', line => {
  if (line.trim() === '') return;
  const { id, driver = 'chat', input } = JSON.parse(line);
  const drive = Object.hasOwn(DRIVERS, driver) ? DRIVERS[driver] : null;
  Promise.resolve()
    .then(() => {
      if (drive == null) throw new Error(`unknown driver ${JSON.stringify(driver)}`);
      return drive(input);
    })
    .then(
      report => write({ id, report }),
      err => write({ id, crash: String(err?.stack ?? err) }),
    );
});
// The caller closed stdin: it is done with us (what still runs is not waited for).
lines.on('close', () => process.exit(0));
