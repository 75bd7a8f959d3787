import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The built page is shipped inside the Python package (adk_asgi/_web) and served by
// `adk-asgi serve` at `/`. Relative asset URLs keep it working under any prefix.
// `npm run dev` proxies the API to a local `adk-asgi serve` (ADK_ASGI_URL to change it).
const target = process.env.ADK_ASGI_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  plugins: [react()],
  base: './',
  build: {
    outDir: process.env.WEB_OUT_DIR ?? '../../adk_asgi/_web',
    emptyOutDir: true,
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': { target, ws: true } },
  },
});
