// A PostgreSQL server that drops the app's connections or restarts, under traffic, on a cluster of
// this test's own (the shared server is never touched): the process stays up, what fails meanwhile
// fails with 503 SERVICE_UNAVAILABLE, readiness follows the database, nothing acknowledged is lost.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TEST_JWT_SECRET } from './helpers/app.js';
import {
  createLoadAccounts,
  startServer,
  waitForReady,
  WriteLoad,
  type LoadAccounts,
  type ServerProcess,
} from './helpers/fault-load.js';
import { freePort, pgClusterSkipReason, startPgCluster, type PgCluster } from './helpers/pg-cluster.js';
import { packageBody } from './packages-helpers.js';
import { startReceiver } from './webhooks-receiver.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL faults under traffic', { skip: pgClusterSkipReason }, () => {
  let cluster: PgCluster;
  let database: DatabaseHandle;
  let accounts: LoadAccounts;
  let server: ServerProcess | undefined;
  let dataDir: string;

  before(async () => {
    cluster = await startPgCluster();
    const url = await cluster.createDatabase('faults');
    database = await openDatabase({ url, poolSize: 2 });
    await migrateToLatest(database.db);
    accounts = await createLoadAccounts(database.db, 6);
    dataDir = await mkdtemp(path.join(tmpdir(), 'rd-faults-'));
    server = await startServer(
      {
        DATA_DIR: dataDir,
        DATABASE_URL: url,
        JWT_SECRET: TEST_JWT_SECRET,
        RATE_LIMIT_GLOBAL: 'off',
        LOG_LEVEL: 'info',
        DATABASE_CONNECT_TIMEOUT: '2s',
      },
      await freePort(),
    );
  });

  after(async () => {
    if (server?.alive()) server.child.kill('SIGKILL');
    await database?.close();
    await cluster?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test('terminated connections and a restart: the process stays up, 503s in the error shape, nothing acknowledged lost', async () => {
    const proc = server!;
    const load = new WriteLoad([proc.base], accounts, 4);
    load.start();
    await pause(700);

    // (a) Every connection of the app terminated by an administrator.
    assert.ok((await cluster.terminateConnections('faults')) > 0, 'the app had connections to terminate');
    await pause(700);
    assert.ok(proc.alive(), `the process ended after its connections were terminated:\n${proc.output().slice(-3000)}`);

    // (b) pg_ctl restart -m fast.
    await cluster.restart();
    await waitForReady(proc.base, 200, 15_000);
    await pause(500);
    assert.ok(proc.alive(), `the process ended after a restart:\n${proc.output().slice(-3000)}`);

    // (c) The same fast shutdown, with the server kept away until readiness says so and writes fail.
    const before = load.answered;
    await cluster.stop();
    await waitForReady(proc.base, 503, 15_000);
    const stoppedAt = Date.now();
    while (load.failuresByStatus(stoppedAt)['503'] === undefined) {
      assert.ok(
        proc.alive() && Date.now() - stoppedAt < 15_000,
        `no write answered 503 while the database was away:\n${proc.output().slice(-3000)}`,
      );
      await pause(20);
    }
    assert.ok(load.answered > before, 'requests are answered while the database is away');
    await cluster.start();
    await waitForReady(proc.base, 200, 15_000);
    await pause(500);
    await load.stop();
    assert.ok(proc.alive(), `the process ended during the outage:\n${proc.output().slice(-3000)}`);

    // Every failure is a 503 in the error shape: never a 500, never a hang.
    for (const failure of load.failures) {
      assert.equal(failure.status, 503, `unexpected failure ${failure.status}: ${failure.body}`);
      const body = JSON.parse(failure.body) as Record<string, unknown>;
      assert.equal(body.statusCode, 503);
      assert.equal(body.error, 'Service Unavailable');
      assert.equal(body.code, 'SERVICE_UNAVAILABLE');
      assert.equal(typeof body.message, 'string');
    }
    assert.ok(load.createdPackages.length > 0 && load.lastLatitude.size > 0, 'writes were acknowledged');

    // The in-process webhook worker kept polling through the outages: a job event after them is delivered.
    const receiver = await startReceiver();
    try {
      const post = (url: string, headers: Record<string, string>, body?: unknown) =>
        fetch(proc.base + url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify(body ?? {}),
        });
      assert.equal((await post('/api/webhooks', accounts.business.headers, { url: receiver.url })).status, 201);
      const created = await post('/api/packages', accounts.business.headers, packageBody(accounts.countryId));
      assert.equal(created.status, 201);
      const packageId = ((await created.json()) as { id: string }).id;
      const accepted = await post(`/api/packages/${packageId}/accept`, accounts.drivers[0].headers);
      assert.equal(accepted.status, 200, await accepted.text());
      await receiver.waitFor(1, 10_000);
      assert.match(receiver.received[0].body, new RegExp(packageId));
    } finally {
      await receiver.close();
    }

    // A clean stop writes the positions still held back; then every acknowledged write is there.
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
    const ids = load.createdPackages;
    const stored = await database.db.selectFrom('packages').select('id').where('id', 'in', ids).execute();
    assert.equal(stored.length, ids.length, 'every acknowledged package is stored');
    const positions = await database.db
      .selectFrom('driver_profiles')
      .select(['user_id', 'last_lat'])
      .where('user_id', 'in', [...load.lastLatitude.keys()])
      .execute();
    for (const row of positions) {
      assert.ok(
        (row.last_lat ?? -90) >= load.lastLatitude.get(row.user_id)! - 1e-9,
        `driver ${row.user_id}: acknowledged position lost`,
      );
    }

    // One line per change of state, not one per failed request.
    const lines = proc
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; failedRequests?: number });
    const lost = lines.filter((l) => l.msg === 'database lost');
    const recovered = lines.filter((l) => l.msg === 'database recovered');
    assert.ok(lost.length >= 2 && lost.length <= 12, `"database lost" logged ${lost.length} times`);
    assert.ok(
      recovered.length >= 2 && recovered.length <= lost.length,
      `"database recovered" logged ${recovered.length} times`,
    );
    assert.ok(
      recovered.some((l) => (l.failedRequests ?? 0) > 0),
      'the recovery line counts the failed requests',
    );
    const errors = lines.filter((l) => l.level >= 50 && l.msg !== 'database lost');
    assert.deepEqual(
      errors.map((l) => l.msg),
      [],
      'no other error lines (no "unhandled error" per request)',
    );
  });
});
