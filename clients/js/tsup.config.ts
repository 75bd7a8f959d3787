import { defineConfig } from 'tsup';

// One ESM bundle and its declarations; `ai` stays external (a peer dependency).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  target: 'es2022',
  platform: 'browser',
  dts: true,
  clean: true,
  sourcemap: false,
  splitting: false,
  treeshake: false,
  minify: false,
});
