// Compiles the server (src/ → dist/) for `npm start` when dist/ is missing or older than its sources,
// saying why; `--if-stale` makes it a no-op when the build is current. esbuild only strips the types,
// file by file, in about 0.2 s (`npm run build` type-checks with tsc and takes ~15 s); the output
// has the layout of tsc's, so either build serves `node dist/server.js`. Running compiled
// JavaScript instead of TypeScript through tsx keeps tsx's loader thread and its esbuild process out
// of the running service (~60 MB of the `npm start` process tree, bench/RESULTS.md). esbuild is a
// development dependency: after `npm ci --omit=dev`, run `npm run build` and `npm run start:prod`.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { changedSince, filesUnder, root, runsAsScript, writeStamp } from './build-stamp.mjs';

const src = path.join(root, 'src');
const dist = path.join(root, 'dist');
const stampIn = (out) => path.join(out, '.server-built');

/** The server's sources: every .ts file under src/ but the tests, and the JSON it imports (message catalogs). */
export function sources(dir = src) {
  return filesUnder(dir, (name) => (name.endsWith('.ts') && !name.endsWith('.test.ts')) || name.endsWith('.json'));
}

export function staleReason(files = sources(), out = dist) {
  const stamp = stampIn(out);
  if (!existsSync(path.join(out, 'server.js')) || !existsSync(stamp)) return 'the server is not built yet';
  return changedSince(stamp, [...files, path.join(root, 'package-lock.json'), path.join(root, 'tsconfig.json'), fileURLToPath(import.meta.url)]);
}

export async function buildServer(files = sources(), out = dist) {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    return { ok: false, message: 'esbuild is not installed: run `npm install` (with the dev dependencies), or `npm run build` then `node dist/server.js`' };
  }
  const started = new Date();
  // JSON is imported as it is (`with { type: 'json' }`): copied beside the compiled files.
  for (const file of files.filter((f) => f.endsWith('.json'))) {
    const target = path.join(out, path.relative(src, file));
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  await esbuild.build({
    entryPoints: files.filter((f) => f.endsWith('.ts')),
    outdir: out,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node 20.10+ reads `with { type: 'json' }` (the catalogs); esbuild's node20 would drop it.
    supported: { 'import-attributes': true },
    sourcemap: true,
    logLevel: 'warning',
  });
  writeStamp(stampIn(out), started);
  return { ok: true, message: `compiled ${files.length} files in ${((Date.now() - started.getTime()) / 1000).toFixed(1)} s` };
}

if (runsAsScript(import.meta.url)) {
  const files = sources();
  const reason = process.argv.includes('--if-stale') ? staleReason(files) : 'asked to';
  if (reason) {
    console.log(`server: compiling (${reason})…`);
    const { ok, message } = await buildServer(files);
    console.log(`server: ${message}`);
    if (!ok) process.exit(1);
  }
}
