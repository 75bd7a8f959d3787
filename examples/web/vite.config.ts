import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The built page is shipped inside the Python package (adk_asgi/_web) and served by
// `adk-asgi serve` at `/`. Relative asset URLs keep it working under any prefix.
// `npm run dev` proxies the API to a local `adk-asgi serve` (ADK_ASGI_URL to change it).
const target = process.env.ADK_ASGI_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  base: './',
  // `adk-asgi` is linked from ../../clients/js (built first by `prebuild`): its `ai`
  // import must be this app's copy, not the one in the package's own dev install.
  resolve: { dedupe: ['ai'] },
  build: {
    outDir: process.env.WEB_OUT_DIR ?? '../../adk_asgi/_web',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 600, // ai@7 with its schemas is most of the page
    rollupOptions: {
      onwarn(warning, warn) {
        // zod's comments that Rollup drops: harmless, and not ours.
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('node_modules')) return;
        warn(warning);
      },
    },
  },
  server: {
    proxy: { '/api': { target, ws: true }, '/agent.json': { target } },
  },
});
