// The worker process (`npm run worker`): the shared background work, and /health* and /metrics on WORKER_PORT.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { perProcessWork, sharedWork } from '../src/background.js';
import { buildWorkerApp } from '../src/worker-app.js';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from './helpers/app.js';
import { createTestDatabase, serverDatabaseUrl } from './helpers/database.js';

const root = path.resolve(import.meta.dirname, '..');

describe('worker', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('background work is listed in two groups: shared (webhook worker, sweeps, scheduled wake-ups, the lateness monitor, the tracking token backfill) and per process (write-behind, the live device keys, surge)', () => {
    const shared = sharedWork(t.deps, t.services, { webhookWorker: true }).map((l) => l.name);
    assert.deepEqual(shared.slice(0, 10), [
      'ride expiry sweep',
      'purging expired codes',
      'purging expired quotes',
      'tracking token backfill',
      'ledger roll-up',
      'monthly invoices',
      'recurring jobs',
      'lateness monitor',
      'dispatch sweep',
      'scheduled wake-ups',
    ]);
    assert.match(shared[10]!, /^webhook worker /);
    assert.equal(shared.length, 11);
    assert.deepEqual(sharedWork(t.deps, t.services, { webhookWorker: false }).length, 10);
    assert.deepEqual(
      perProcessWork(t.services).map((l) => l.name),
      ['driver index and position write-behind', 'device keys', 'surge'],
    );
  });

  test("the worker's server answers /health, /health/ready and /metrics", async () => {
    const app = await buildWorkerApp({ deps: t.deps });
    try {
      const health = await app.inject({ method: 'GET', url: '/health' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
      const ready = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.json().checks.database, 'ok');
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      assert.equal(metrics.statusCode, 200);
      assert.match(metrics.body, /webhook_deliveries_total/);
      const missing = await app.inject({ method: 'GET', url: '/api/packages' });
      assert.equal(missing.statusCode, 404);
    } finally {
      await app.close();
    }
  });

  test(
    'npm run worker serves them on WORKER_PORT and stops cleanly on SIGTERM',
    {
      skip: serverDatabaseUrl ? false : 'needs a PostgreSQL server shared with a child process: set TEST_DATABASE_URL',
      timeout: 60_000,
    },
    async () => {
      const database = await createTestDatabase({ migrate: false });
      let out = '';
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          NODE_ENV: 'test',
          DATABASE_URL: database.url!,
          JWT_SECRET: TEST_JWT_SECRET,
          DATA_DIR: `/tmp/rd-worker-${process.pid}`,
          HOST: '127.0.0.1',
          WORKER_PORT: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      try {
        child.stdout!.on('data', (d) => (out += d));
        child.stderr!.on('data', (d) => (out += d));
        const until = Date.now() + 45_000;
        while (!out.includes('"msg":"worker running"')) {
          assert.ok(Date.now() < until && child.exitCode === null, `worker did not start: ${out}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // WORKER_PORT=0: the port the system chose is in the start line.
        const started = out.split('\n').find((line) => line.includes('"msg":"worker running"'))!;
        const base = `http://127.0.0.1:${(JSON.parse(started) as { port: number }).port}`;
        assert.deepEqual(await (await fetch(`${base}/health`)).json(), { status: 'ok' });
        const ready = await fetch(`${base}/health/ready`);
        assert.equal(ready.status, 200);
        assert.equal(((await ready.json()) as { checks: Record<string, string> }).checks.database, 'ok');
        const metrics = await fetch(`${base}/metrics`);
        assert.equal(metrics.status, 200);
        assert.match(await metrics.text(), /webhook_deliveries_total/);
        child.kill('SIGTERM');
        assert.equal(await exited, 0);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        await database.close();
      }
    },
  );
});
