import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The API serves the built portal on the same origin in production; in development the dev server
// forwards /api and /cdn (embedded logo storage) to the API's default port.
const apiTarget = process.env.LATCHKEY_API_URL ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      '/api': { target: apiTarget, changeOrigin: false },
      '/cdn': { target: apiTarget, changeOrigin: false },
    },
  },
  preview: {
    proxy: {
      '/api': { target: apiTarget, changeOrigin: false },
      '/cdn': { target: apiTarget, changeOrigin: false },
    },
  },
  // The manifest lets bench/bundle-size.mjs weigh what each route loads first.
  // No module preloading (decision 0005): Vite's helper appended one <link rel=modulepreload> per
  // dependency of every lazy route a navigation loads (43 on an overview), in the entry's evaluation,
  // and held each route's import until all of them had loaded. The browser fetches a chunk's imports
  // itself as it parses the chunk.
  build: { outDir: 'dist', sourcemap: false, manifest: true, modulePreload: false },
});
