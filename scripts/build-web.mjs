// Builds the web console (web/ → dist/web) when it is missing or older than its sources, saying
// why; `--if-stale` makes it a no-op when the build is current (npm start runs it so that a fresh
// clone serves the console). Without Vite (an install without dev dependencies) it says so and
// leaves the API to start without the console.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib, { brotliCompressSync, gzipSync } from 'node:zlib';

const root = path.resolve(import.meta.dirname, '..');
const web = path.join(root, 'web');
const stamp = path.join(root, 'dist/web/.built');

function newest(dir) {
  let latest = { mtimeMs: 0, file: '' };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const candidate = entry.isDirectory() ? newest(full) : { mtimeMs: statSync(full).mtimeMs, file: full };
    if (candidate.mtimeMs > latest.mtimeMs) latest = candidate;
  }
  return latest;
}

export function staleReason() {
  if (!existsSync(stamp)) return 'the console is not built yet';
  const built = statSync(stamp).mtimeMs;
  for (const source of [newest(web), ...['package-lock.json'].map((f) => ({ file: path.join(root, f), mtimeMs: statSync(path.join(root, f)).mtimeMs }))]) {
    if (source.mtimeMs > built) return `${path.relative(root, source.file)} changed since the last build`;
  }
  return undefined;
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
  const started = Date.now();
  const result = spawnSync(process.execPath, [vite, 'build', '--config', path.join(web, 'vite.config.ts'), '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    // Whatever the server's NODE_ENV (development, test), the console is a production build: Vite
    // would otherwise bundle React's development build.
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) return { ok: false, message: 'the console build failed (see above)' };
  precompress(path.join(root, 'dist/web/assets'));
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return { ok: true, message: `built the console in ${((Date.now() - started) / 1000).toFixed(1)} s` };
}

// Run as a script (also through a symlink or from a path with spaces), not imported by a test.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const reason = process.argv.includes('--if-stale') ? staleReason() : 'asked to';
  if (reason) {
    console.log(`web console: building (${reason})…`);
    const { ok, message } = buildWeb();
    console.log(`web console: ${message}`);
    if (!ok && !process.argv.includes('--if-stale')) process.exit(1);
  }
}
