/**
 * Starts a real `adk-asgi serve` (the offline demo agent) for the transport tests,
 * from the repository's .venv, on a free loopback port; or uses ADK_ASGI_URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    serverUrl: string;
    aiPackage: string;
  }
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => ok(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitUntilUp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode != null) throw new Error(`adk-asgi serve exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${url}/api/chat/x/stream`);
      if (response.status === 204) return;
    } catch {
      // not listening yet
    }
    await new Promise(r => setTimeout(r, 200));
  }
  throw new Error('adk-asgi serve did not start within 60 s');
}

let child: ChildProcess | undefined;
let shared: Promise<string> | undefined;

export default async function setup(project: TestProject) {
  if (process.env.ADK_ASGI_URL) {
    project.provide('serverUrl', process.env.ADK_ASGI_URL.replace(/\/$/, ''));
    return;
  }
  shared ??= (async () => {
    const exe = resolve(ROOT, '.venv/bin/adk-asgi');
    if (!existsSync(exe)) {
      throw new Error('No .venv/bin/adk-asgi: run scripts/test once (or set ADK_ASGI_URL).');
    }
    const port = await freePort();
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith('GOOGLE_')),
    );
    child = spawn(
      exe,
      ['serve', '--host', '127.0.0.1', '--port', String(port), '--token-delay', '0.005',
        '--log-level', 'warning'],
      { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitUntilUp(url, child);
    return url;
  })();
  project.provide('serverUrl', await shared);
  return async () => {
    if (child != null && child.exitCode == null) {
      child.kill('SIGTERM');
      child = undefined;
    }
  };
}
