/** Vitest's global setup: one real `adk-asgi serve` for every project (see server.mjs). */
import type { TestProject } from 'vitest/node';

import { startServer } from './server.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    serverUrl: string;
    aiPackage: string;
  }
}

let shared: ReturnType<typeof startServer> | undefined;

export default async function setup(project: TestProject) {
  shared ??= startServer();
  const server = await shared;
  project.provide('serverUrl', server.url);
  return () => server.stop();
}
