// The compiled build as an operator runs it: tsc → JavaScript started with plain `node` (no tsx).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createServerDatabase, serverDatabaseUrl } from './helpers/database.js';
import { freePort, spawnNode, waitFor, waitForReady } from './helpers/processes.js';

const root = path.resolve(import.meta.dirname, '..');
// Inside the project, so that the compiled files find node_modules as dist/ does.
const outDir = path.join(root, 'dist-test');
const STRONG_SECRET = 'Zr8mQ2vLx7Kp4Tn9Wb3Yc6Hd1Jf5Gs0A-build-test';

const run = (script: string, env: Record<string, string>) => spawnNode([path.join(outDir, script)], env);

describe('compiled build', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  before(() => {
    const built = spawnSync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', outDir],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    assert.equal(built.status, 0, `tsc failed:\n${built.stdout}${built.stderr}`);
  });
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
    await rm(outDir, { recursive: true, force: true });
  });

  test('emits JavaScript for the entry points and no test files', () => {
    for (const file of ['server.js', 'worker.js', 'db/migrate-cli.js', 'cli/admin-create.js'])
      assert.ok(existsSync(path.join(outDir, file)), file);
    assert.equal(existsSync(path.join(outDir, 'config.test.js')), false);
  });

  test("npm start's build (esbuild, when the sources are newer) emits the same files, and the server runs from it", async () => {
    const { buildServer, sources, staleReason } = await import('../scripts/build-server.mjs');
    const quickDir = path.join(root, 'dist-test-start');
    await rm(quickDir, { recursive: true, force: true });
    cleanups.push(() => rm(quickDir, { recursive: true, force: true }));
    assert.match(staleReason(sources(), quickDir) ?? '', /not built yet/);
    const built = await buildServer(sources(), quickDir);
    assert.ok(built.ok, built.message);
    assert.equal(staleReason(sources(), quickDir), undefined);
    const js = (dir: string) =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.js'))
        .sort();
    assert.deepEqual(js(quickDir), js(outDir));
    // A source edited after the build: the next `npm start` compiles again, and says which file.
    const past = new Date(Math.min(...sources().map((file: string) => statSync(file).mtimeMs)) - 1000);
    utimesSync(path.join(quickDir, '.server-built'), past, past);
    assert.match(staleReason(sources(), quickDir) ?? '', /^src\/.+\.ts changed since the last build$/);

    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-build-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const p = String(await freePort());
    const proc = spawnNode([path.join(quickDir, 'server.js')], {
      PORT: p,
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      RATE_LIMIT_GLOBAL: 'off',
    });
    cleanups.push(async () => proc.child.kill('SIGKILL'));
    await waitForReady(proc, 60_000, 'ready');
    assert.equal((await fetch(`http://127.0.0.1:${p}/api/countries`)).status, 200);
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
  });

  test('the heavy libraries and ioredis are not in the start-up graph of the server or the worker (imported with import() on first use)', async () => {
    const esbuild = await import('esbuild');
    const { metafile } = await esbuild.build({
      entryPoints: ['src/server.ts', 'src/worker.ts'].map((file) => path.join(root, file)),
      absWorkingDir: root,
      bundle: true,
      packages: 'external',
      platform: 'node',
      format: 'esm',
      outdir: path.join(root, 'dist-test-graph'),
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    // From each entry, the static imports only (a dynamic import() is loaded when it runs).
    // (The invoice font, dejavu-fonts-ttf, is not imported at all: its files are read with the first PDF.)
    const heavy = /^(sharp|pdfkit|dejavu-fonts-ttf|@aws-sdk\/|web-push|qrcode|ioredis)(\/|$)/;
    for (const entry of ['src/server.ts', 'src/worker.ts']) {
      const seen = new Set<string>([entry]);
      const packages = new Set<string>();
      const dynamic = new Set<string>();
      for (const file of seen) {
        for (const i of metafile.inputs[file]?.imports ?? []) {
          if (i.kind !== 'import-statement') {
            if (i.external) dynamic.add(i.path);
            continue;
          }
          if (i.external) packages.add(i.path);
          else seen.add(i.path);
        }
      }
      assert.ok(seen.size > 50 && packages.has('fastify'), `${entry}: the graph was walked (${seen.size} modules)`);
      assert.deepEqual(
        [...packages].filter((p) => heavy.test(p)),
        [],
        `${entry} imports no heavy library at start`,
      );
      assert.ok(dynamic.has('ioredis'), `${entry} imports ioredis on first use`);
    }
  });

  test('production refuses to start without a strong JWT_SECRET, naming the variable', async () => {
    const base = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
      SMS_TRANSPORT: 'http',
      SMS_HTTP_URL: 'https://sms.example/send',
    };
    for (const env of [base, { ...base, JWT_SECRET: 'change-me-change-me-change-me-change-me' }]) {
      const proc = run('server.js', env);
      assert.equal(await proc.exited, 1);
      assert.match(proc.output(), /JWT_SECRET/);
    }
  });

  test('the compiled server starts with plain node on the embedded database and serves the API', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-build-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const p = String(await freePort());
    const proc = run('server.js', { PORT: p, HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT_GLOBAL: 'off' });
    cleanups.push(async () => proc.child.kill('SIGKILL'));
    await waitForReady(proc, 60_000, 'ready');
    assert.equal((await fetch(`http://127.0.0.1:${p}/health/ready`)).status, 200);
    const countries = await fetch(`http://127.0.0.1:${p}/api/countries`);
    assert.equal(countries.status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${p}/api/openapi.json`)).status, 200);
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
  });

  test(
    'in production on a PostgreSQL server, the compiled server and worker start and stop cleanly',
    { skip: serverDatabaseUrl ? false : 'needs a PostgreSQL server: set TEST_DATABASE_URL' },
    async () => {
      const database = await createServerDatabase(serverDatabaseUrl!, 'build');
      cleanups.push(database.drop);
      const env = {
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        JWT_SECRET: STRONG_SECRET,
        SMS_TRANSPORT: 'http',
        SMS_HTTP_URL: 'https://sms.example/send',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      };
      const api = run('server.js', { ...env, PORT: String(await freePort()) });
      cleanups.push(async () => api.child.kill('SIGKILL'));
      await waitForReady(api, 30_000, 'api ready');
      const worker = run('worker.js', { ...env, WORKER_PORT: String(await freePort()) });
      cleanups.push(async () => worker.child.kill('SIGKILL'));
      await waitFor(
        () => /worker.*running|running.*worker/i.test(worker.output()),
        30_000,
        'worker running',
        worker.output,
      );
      api.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      assert.equal(await api.exited, 0);
      assert.equal(await worker.exited, 0);
    },
  );
});
