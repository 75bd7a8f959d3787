/**
 * A real `adk-asgi serve` (the offline demo agent) for the package's tests, from the
 * repository's .venv on a free loopback port; or the one at ADK_ASGI_URL.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => ok(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitUntilUp(url, child) {
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

/**
 * The server's base URL and a function that stops it (nothing to stop for ADK_ASGI_URL).
 * @returns {Promise<{ url: string, stop: () => void }>}
 */
export async function startServer() {
  if (process.env.ADK_ASGI_URL) {
    return { url: process.env.ADK_ASGI_URL.replace(/\/$/, ''), stop: () => {} };
  }
  const exe = resolve(ROOT, '.venv/bin/adk-asgi');
  if (!existsSync(exe)) {
    throw new Error('No .venv/bin/adk-asgi: run scripts/test once (or set ADK_ASGI_URL).');
  }
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GOOGLE_')));
  const child = spawn(
    exe,
    ['serve', '--host', '127.0.0.1', '--port', String(port), '--token-delay', '0.005', '--log-level', 'warning'],
    { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilUp(url, child);
  } catch (error) {
    child.kill('SIGTERM');
    throw error;
  }
  return {
    url,
    stop: () => {
      if (child.exitCode == null) child.kill('SIGTERM');
    },
  };
}
