// The real entry point as an operator runs it: start, serve, persist, stop on SIGTERM.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { serverDatabaseUrl } from './helpers/database.js';
import { freePort, spawnNode, waitForReady } from './helpers/processes.js';

const start = (env: Record<string, string>) => spawnNode(['--import', 'tsx', 'src/server.ts'], env);

describe('server process', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('starts on the embedded database, keeps data across a restart, stops cleanly on SIGTERM', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-server-'));
    dirs.push(dataDir);
    const port = String(await freePort());
    const env = { PORT: port, HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT_GLOBAL: 'off' };

    const first = start(env);
    await waitForReady(first, 120_000, 'first start');
    assert.match(first.output(), /"database":"pglite"/);
    assert.match(first.output(), /applied migrations/);
    const res = await fetch(`http://127.0.0.1:${port}/api/countries`);
    assert.equal(res.status, 200);
    assert.ok(((await res.json()) as { items: unknown[] }).items.length >= 10);
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    assert.match(first.output(), /"signal":"SIGTERM".*shutting down/);

    const second = start(env);
    await waitForReady(second, 120_000, 'second start');
    // The database in DATA_DIR was kept: nothing left to migrate.
    assert.doesNotMatch(second.output(), /applied migrations/);
    second.child.kill('SIGINT');
    assert.equal(await second.exited, 0);
  });

  test('refuses to start with invalid configuration, naming every bad variable', async () => {
    const bad = start({ NODE_ENV: 'production', PORT: 'abc', RATE_LIMIT_LOGIN: 'lots' });
    assert.equal(await bad.exited, 1);
    const text = bad.output();
    for (const name of ['PORT', 'RATE_LIMIT_LOGIN', 'DATABASE_URL', 'JWT_SECRET', 'SMS_TRANSPORT'])
      assert.match(text, new RegExp(name));
  });

  test(
    'starts on the PostgreSQL server with DATABASE_URL',
    { skip: serverDatabaseUrl ? false : 'needs TEST_DATABASE_URL' },
    async () => {
      const { createTestDatabase } = await import('./helpers/database.js');
      const database = await createTestDatabase({ migrate: false });
      try {
        const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-server-'));
        dirs.push(dataDir);
        const port = String(await freePort());
        const proc = start({
          PORT: port,
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          DATABASE_URL: database.url!,
          RATE_LIMIT_GLOBAL: 'off',
        });
        await waitForReady(proc, 120_000, 'start on PostgreSQL');
        assert.match(proc.output(), /"database":"postgres"/);
        const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
        assert.deepEqual(await ready.json(), { status: 'ok', checks: { database: 'ok' } });
        proc.child.kill('SIGTERM');
        assert.equal(await proc.exited, 0);
      } finally {
        await database.close();
      }
    },
  );
});
