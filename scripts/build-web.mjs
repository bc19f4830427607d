// Builds the web console (web/ → dist/web) when it is missing or older than its sources, saying
// why; `--if-stale` makes it a no-op when the build is current (npm start runs it so that a fresh
// clone serves the console). Without Vite (an install without dev dependencies) it says so and
// leaves the API to start without the console.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib, { brotliCompressSync, gzipSync } from 'node:zlib';
import { changedSince, filesUnder, root, runsAsScript, writeStamp } from './build-stamp.mjs';

const web = path.join(root, 'web');
const stamp = path.join(root, 'dist/web/.built');

export function staleReason() {
  if (!existsSync(stamp)) return 'the console is not built yet';
  return changedSince(stamp, [...filesUnder(web), path.join(root, 'package-lock.json')]);
}

// @fastify/static serves these to clients that accept them (preCompressed), at no cost per request.
function precompress(dir) {
  for (const name of readdirSync(dir)) {
    if (!/\.(js|css|svg)$/.test(name)) continue;
    const data = readFileSync(path.join(dir, name));
    writeFileSync(path.join(dir, `${name}.br`), brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
    writeFileSync(path.join(dir, `${name}.gz`), gzipSync(data, { level: 9 }));
  }
}

export function buildWeb() {
  let vite;
  try {
    vite = path.join(path.dirname(createRequire(path.join(root, 'package.json')).resolve('vite/package.json')), 'bin/vite.js');
  } catch {
    return { ok: false, message: 'Vite is not installed (npm install without --omit=dev builds the console); starting without it' };
  }
  const started = new Date();
  const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(web, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    // Whatever the server's NODE_ENV (development, test), the console is a production build: Vite
    // would otherwise bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) return { ok: false, message: 'the console build failed (see above)' };
  precompress(path.join(root, 'dist/web/assets'));
  writeStamp(stamp, started);
  return { ok: true, message: `built the console in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s` };
}

if (runsAsScript(import.meta.url)) {
  const reason = process.argv.includes('--if-stale') ? staleReason() : 'asked to';
  if (reason) {
    console.log(`web console: building (${reason})…`);
    const { ok, message } = buildWeb();
    console.log(`web console: ${message}`);
    if (!ok && !process.argv.includes('--if-stale')) process.exit(1);
  }
}
