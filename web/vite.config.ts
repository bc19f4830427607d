// The web apps' build: web/ → dist/web (served by the API process, src/http/web-console.ts). Each app
// is a page of its own, its own entry and its own entry chunk (assets/<app>-<hash>.js), so that one
// app never loads another's code; what apps share (React, web/src/shared/) goes into chunks of its own.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

const web = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/**
 * App name → its page. The console is served at / (dist/web/index.html), the driver app at /driver/
 * (web/driver/index.html → dist/web/driver/index.html), the customer app at /app/ (web/app/index.html),
 * each page with a <script type="module" src="/src/<app>/main.tsx">.
 */
export const APPS: Record<string, string> = {
  console: 'index.html',
  driver: 'driver/index.html',
  customer: 'app/index.html',
};

/**
 * The files an installed app loads (its entry chunk, what that imports statically or dynamically, and
 * their CSS), collected from the bundle: its service worker precaches these and not the other apps'.
 */
function reachableFrom(entry: string): { plugin: Plugin; files: Set<string> } {
  const files = new Set<string>();
  const plugin: Plugin = {
    name: `reachable-files-${entry}`,
    apply: 'build',
    generateBundle(_options, bundle) {
      files.clear();
      const visit = (name: string) => {
        const chunk = bundle[name];
        if (!chunk || files.has(name)) return;
        files.add(name);
        if (chunk.type !== 'chunk') return;
        for (const css of chunk.viteMetadata?.importedCss ?? []) files.add(css);
        for (const asset of chunk.viteMetadata?.importedAssets ?? []) files.add(asset);
        for (const next of [...chunk.imports, ...chunk.dynamicImports]) visit(next);
      };
      for (const [name, chunk] of Object.entries(bundle)) if (chunk.type === 'chunk' && chunk.isEntry && chunk.name === entry) visit(name);
    },
  };
  return { plugin, files };
}

/**
 * An installed app's service worker (contract sections 19 and 20), dist/web/<dir>/sw.js with scope
 * /<dir>/: Workbox precaches the app shell (the page, its chunks and CSS, the manifest and icons) so
 * that the app opens offline; a navigation under /<dir>/ is answered with the cached page. The API is
 * never cached here: the app keeps what it must itself. The manifest is a static file
 * (web/public/<dir>/), and the page registers the worker itself (nothing is injected into the
 * console's page). `importScripts`: hand-written handlers the worker loads (the driver's push
 * notifications, web/public/driver/push-sw.js).
 */
function appWorker(entry: string, dir: string, importScripts: string[] = []): Plugin[] {
  const reachable = reachableFrom(entry);
  const worker = VitePWA({
    strategies: 'generateSW',
    filename: `${dir}/sw.js`,
    injectRegister: false,
    manifest: false,
    workbox: {
      globPatterns: [`${dir}/index.html`, `${dir}/*.{png,webmanifest}`, 'assets/*.{js,css}'],
      manifestTransforms: [
        (entries) => ({
          manifest: entries
            .filter((e) => e.url.startsWith(`${dir}/`) || reachable.files.has(e.url))
            // Relative URLs would resolve against the worker's own folder (/<dir>/assets/…).
            .map((e) => ({ ...e, url: `/${e.url}` })),
          warnings: [],
        }),
      ],
      // Hashed names need no revision query.
      dontCacheBustURLsMatching: /^assets\//,
      navigateFallback: `/${dir}/index.html`,
      navigateFallbackAllowlist: [new RegExp(`^/${dir}(?:/|$)`)],
      inlineWorkboxRuntime: true,
      cleanupOutdatedCaches: true,
      clientsClaim: true,
      skipWaiting: true,
      sourcemap: false,
      ...(importScripts.length ? { importScripts } : {}),
    },
  });
  return [reachable.plugin, ...(Array.isArray(worker) ? worker : [worker])];
}

export default defineConfig({
  root: web('.'),
  plugins: [react(), ...appWorker('driver', 'driver', ['/driver/push-sw.js']), ...appWorker('customer', 'app', ['/driver/push-sw.js'])],
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
