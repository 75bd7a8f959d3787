import { configDefaults, defineConfig } from 'vitest/config';

// The package's tests drive a real `adk-asgi serve` (test/global-setup.ts starts
// one from the repository's .venv unless ADK_ASGI_URL points at a running server),
// once per AI SDK major version: `ai` is aliased to the pinned ai@5 and ai@6 too.
const versions = { ai7: 'ai', ai6: 'ai6', ai5: 'ai5' } as const;

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    projects: Object.entries(versions).map(([name, pkg]) => ({
      resolve: { alias: [{ find: /^ai$/, replacement: pkg }] },
      test: {
        name,
        include: ['test/**/*.test.ts'],
        // what does not touch `ai` runs once, in the ai@7 project
        exclude: [...configDefaults.exclude, ...(name === 'ai7' ? [] : ['test/audio.test.ts', 'test/frames.test.ts', 'test/live-url.test.ts', 'test/types.test.ts', 'test/pauses.test.ts'])],
        environment: 'node',
        testTimeout: 30_000,
        hookTimeout: 60_000,
        provide: { aiPackage: pkg },
      },
    })),
  },
});
