// `npm run lint:openapi`: writes the generated OpenAPI document to dist/openapi/openapi.json and
// lints it with Redocly (redocly.yaml: no error or warning allowed) and Spectral (.spectral.mjs:
// spectral:oas + OWASP; no error allowed, warnings listed).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const file = 'dist/openapi/openapi.json';
const bin = (name) => path.join(root, 'node_modules/.bin', name);

const generated = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
if (generated.status !== 0) {
  process.stderr.write(generated.stderr);
  process.exit(1);
}
mkdirSync(path.join(root, 'dist/openapi'), { recursive: true });
writeFileSync(path.join(root, file), generated.stdout);

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
console.log('== Redocly');
const lint = spawnSync(bin('redocly'), ['lint', file, '--max-problems', '100'], { cwd: root, env, encoding: 'utf8' });
process.stdout.write(lint.stdout);
process.stderr.write(lint.stderr.replace(/\n *[╔║╚][^\n]*/g, ''));
// Redocly exits 0 with warnings; none are allowed.
const redocly = lint.status || /You have \d+ warning/.test(lint.stdout + lint.stderr) ? 1 : 0;
console.log('== Spectral (spectral:oas + OWASP)');
const spectral = spawnSync(bin('spectral'), ['lint', file, '--ruleset', '.spectral.mjs', '--fail-severity', 'error', '--display-only-failures'], { cwd: root, env, stdio: 'inherit' }).status;
process.exit(redocly || spectral ? 1 : 0);
