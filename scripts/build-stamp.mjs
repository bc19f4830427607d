// What the two builds `npm start` runs when stale share (build-web.mjs, build-server.mjs): the files
// a build reads, the first one changed since its stamp, a stamp dated when the build started, and
// whether the module runs as a script.
import { readdirSync, realpathSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(import.meta.dirname, '..');

/** Every file under `dir` that `keep` accepts (by name). */
export function filesUnder(dir, keep = () => true) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(full, keep));
    else if (keep(entry.name)) files.push(full);
  }
  return files;
}

/** The first of `inputs` changed after the build stamped `stamp` (which must exist), as a reason; undefined when none. */
export function changedSince(stamp, inputs) {
  const built = statSync(stamp).mtimeMs;
  const changed = inputs.find((file) => statSync(file).mtimeMs > built);
  return changed && `${path.relative(root, changed)} changed since the last build`;
}

/** Stamps a build with the time it started: a source saved while it ran is newer, and builds next time. */
export function writeStamp(stamp, started) {
  writeFileSync(stamp, `${started.toISOString()}\n`);
  utimesSync(stamp, started, started);
}

/** Whether the module of `url` runs as a script (also through a symlink or from a path with spaces), not imported by a test. */
export function runsAsScript(url) {
  return Boolean(process.argv[1]) && realpathSync(process.argv[1]) === fileURLToPath(url);
}
