// The web apps' build: web/ → dist/web (served by the API process, src/http/web-console.ts). Each app
// is a page of its own, its own entry and its own entry chunk (assets/<app>-<hash>.js), so that one
// app never loads another's code; what apps share (React, web/src/shared/) goes into chunks of its own.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const web = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/**
 * App name → its page. The console is served at / (dist/web/index.html); the driver and customer
 * apps will be web/driver/index.html and web/customer/index.html, built to dist/web/driver/ and
 * dist/web/customer/, each with a <script type="module" src="/src/<app>/main.tsx">.
 */
export const APPS: Record<string, string> = {
  console: 'index.html',
};

export default defineConfig({
  root: web('.'),
  plugins: [react()],
  build: {
    outDir: web('../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    // Vite's modulepreload polyfill would be an inline script without this (the CSP forbids those).
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 400,
    rolldownOptions: {
      input: Object.fromEntries(Object.entries(APPS).map(([app, page]) => [app, web(page)])),
      output: { entryFileNames: 'assets/[name]-[hash].js' },
    },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
