// Lighthouse on the installed apps' first pages (contract sections 19 and 20), with Debian's Chromium:
// the driver app's sign-in page (/driver/) and the customer app's (/app/), mobile profile (Lighthouse's
// default: a Moto G Power-sized screen, simulated slow 4G and 4× CPU slowdown), median of RUNS runs.
//
//   node bench/lighthouse.mjs [--runs 3] [--url http://127.0.0.1:3000]
//
// Without --url it builds what is stale and starts the server itself (`node dist/server.js`)
// on the embedded database in a temporary DATA_DIR, MAP_TILE_URL unset (no tile request fails offline).
// Prints each run's four scores and the medians, as JSON on the last line.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const runs = Number(opt('runs', '3'));
let base = opt('url', undefined);
const pages = opt('pages', '/driver/,/app/').split(',');

let server;
let dataDir;
if (!base) {
  dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lh-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SMS_TRANSPORT: 'file',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_GLOBAL: 'off',
  };
  delete env.MAP_TILE_URL;
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  for (const script of ['scripts/build-web.mjs', 'scripts/build-server.mjs']) {
    await new Promise((resolve, reject) => {
      const b = spawn(process.execPath, [script, '--if-stale'], { stdio: 'inherit' });
      b.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${script} exited ${code}`))));
    });
  }
  server = spawn(process.execPath, ['dist/server.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const until = Date.now() + 60_000;
  for (;;) {
    if (
      await fetch(`${base}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > until) throw new Error('the server did not become ready in 60 s');
    await new Promise((r) => setTimeout(r, 250));
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const results = {};
try {
  for (const page of pages) {
    const scores = [];
    for (let i = 0; i < runs; i++) {
      // A fresh browser per run: no warm cache or service worker from the run before.
      const chrome = await chromeLauncher.launch({
        chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
        chromeFlags: [
          '--headless=new',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        const result = await lighthouse(`${base}${page}`, {
          port: chrome.port,
          output: 'json',
          logLevel: 'error',
          onlyCategories: CATEGORIES,
        });
        const lhr = result.lhr;
        const run = Object.fromEntries(CATEGORIES.map((c) => [c, Math.round((lhr.categories[c]?.score ?? 0) * 100)]));
        run.lcpMs = Math.round(lhr.audits['largest-contentful-paint']?.numericValue ?? 0);
        run.tbtMs = Math.round(lhr.audits['total-blocking-time']?.numericValue ?? 0);
        const failed = Object.values(lhr.audits)
          .filter((a) => a.score !== null && a.score < 0.9 && a.scoreDisplayMode === 'binary')
          .map((a) => a.id);
        console.log(
          `${page} run ${i + 1}: ${JSON.stringify(run)}${failed.length ? ` failing: ${failed.join(', ')}` : ''}`,
        );
        scores.push(run);
      } finally {
        await chrome.kill();
      }
    }
    results[page] = Object.fromEntries(Object.keys(scores[0]).map((k) => [k, median(scores.map((s) => s[k]))]));
  }
} finally {
  server?.kill('SIGTERM');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
console.log(JSON.stringify({ runs, medians: results }));
