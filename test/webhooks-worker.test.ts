// The webhook worker under concurrency and crashes: two workers on one database, and a worker process
// killed with SIGKILL in the middle of an attempt.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { recordDeliveryEvent, type DeliveryEventName } from '../src/modules/webhooks/outbox.js';
import { signHex } from '../src/modules/webhooks/webhook-signature.js';
import { OutboxRepository } from '../src/modules/webhooks/outbox.repository.js';
import { WebhookWorker } from '../src/modules/webhooks/webhook-worker.js';
import { systemClock } from '../src/shared/clock.js';
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { startReceiver, type Received } from './webhooks-receiver.js';

const LIFECYCLE: [DeliveryEventName, string][] = [
  ['delivery.assigned', 'ASSIGNED'],
  ['delivery.picked_up', 'PICKED_UP'],
  ['delivery.in_transit', 'IN_TRANSIT'],
  ['delivery.delivered', 'DELIVERED'],
];

async function createEndpoint(t: TestApp, user: TestUser, url: string) {
  const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: user.headers, payload: { url } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; secret: string };
}

/** Events in the order each package's were received, per package. */
function byPackage(received: Received[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of received) {
    const body = JSON.parse(r.body) as { delivery_id: string; status: string };
    out.set(body.delivery_id, [...(out.get(body.delivery_id) ?? []), body.status]);
  }
  return out;
}

describe('webhook workers', () => {
  let t: TestApp;
  let business: TestUser;

  before(async () => {
    // Real time here: the workers run their own loops, and a child process has its own clock.
    t = await buildTestApp({ env: { WEBHOOK_TIMEOUT: '1s' } });
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(() => t.close());

  test('two workers on one database send each attempt once and keep every package in order', async (ctx) => {
    // Every third delivery fails its first attempt (and is retried once); each answer takes 0-4 ms.
    const seen = new Set<string>();
    const failedAt = new Set<number>();
    const receiver = await startReceiver((r, i) => {
      const id = r.headers['webhook-id'] as string;
      const fail = !seen.has(id) && seen.size % 3 === 0;
      seen.add(id);
      if (fail) failedAt.add(i);
      return { status: fail ? 500 : 200, hold: i % 5 };
    });
    ctx.after(() => receiver.close());
    const endpoint = await createEndpoint(t, business, receiver.url);
    const packages = Array.from({ length: 25 }, () => randomUUID());
    for (const [event, status] of LIFECYCLE) {
      for (const packageId of packages) {
        await t.db
          .transaction()
          .execute((trx) =>
            recordDeliveryEvent(trx, { packageId, businessId: business.id, event, status, occurredAt: new Date() }),
          );
      }
    }
    // A second connection pool on the server (PGlite is one connection: then both share it).
    const second: DatabaseHandle = t.database.url
      ? await openDatabase({ url: t.database.url, poolSize: 5 })
      : t.database;
    ctx.after(async () => {
      if (second !== t.database) await second.close();
    });
    const config = {
      ...t.deps.config,
      webhooks: { ...t.deps.config.webhooks, retryScheduleMs: [50], timeoutMs: 10_000 },
    };
    const workers = [t.db, second.db].map(
      (db) =>
        new WebhookWorker({
          db,
          repo: new OutboxRepository(db),
          clock: systemClock,
          logger: t.deps.logger,
          config,
          pollIntervalMs: 20,
          batchSize: 7,
          perEndpointConcurrency: 4,
        }),
    );
    for (const w of workers) w.start();
    try {
      const expected = packages.length * LIFECYCLE.length;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const left = await t.db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('endpoint_id', '=', endpoint.id)
          .where('status', '=', 'PENDING')
          .executeTakeFirstOrThrow();
        if (Number(left.n) === 0) break;
        assert.ok(Date.now() < deadline, `${left.n} of ${expected} still pending`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const rows = await t.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'attempts', 'status'])
      .where('endpoint_id', '=', endpoint.id)
      .execute();
    assert.equal(rows.length, packages.length * LIFECYCLE.length);
    // Every attempt the database counted reached the receiver exactly once: no attempt was sent twice.
    const perId = new Map<string, number>();
    for (const r of receiver.received)
      perId.set(r.headers['webhook-id'] as string, (perId.get(r.headers['webhook-id'] as string) ?? 0) + 1);
    for (const row of rows) {
      assert.equal(row.status, 'SUCCEEDED');
      assert.equal(perId.get(row.id), row.attempts, `delivery ${row.id}`);
    }
    // Order per package, counting only the successful answers' order: failures were retried before the next event.
    const successes = receiver.received.filter((_r, i) => !failedAt.has(i));
    assert.ok(failedAt.size > 20);
    for (const [packageId, statuses] of byPackage(successes)) {
      assert.deepEqual(statuses, ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT', 'DELIVERED'], packageId);
    }
    for (const r of receiver.received) assert.equal(r.headers['x-service-signature'], signHex(endpoint.secret, r.body));
  });

  test(
    'a worker process killed mid-delivery is replaced and everything arrives at least once with the same webhook-id',
    {
      skip: serverDatabaseUrl ? false : 'needs a PostgreSQL server shared with a child process: set TEST_DATABASE_URL',
      timeout: 60_000,
    },
    async (ctx) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding = true;
      const receiver = await startReceiver(() => (holding ? { status: 200, hold: held } : { status: 200 }));
      ctx.after(async () => {
        release();
        await receiver.close();
      });
      const endpoint = await createEndpoint(t, business, receiver.url);
      const packageId = randomUUID();
      for (const [event, status] of LIFECYCLE.slice(0, 3)) {
        await t.db
          .transaction()
          .execute((trx) =>
            recordDeliveryEvent(trx, { packageId, businessId: business.id, event, status, occurredAt: new Date() }),
          );
      }

      const children: ChildProcess[] = [];
      ctx.after(() => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
      const startWorker = () => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
          env: {
            ...process.env,
            NODE_ENV: 'test',
            DATABASE_URL: t.database.url!,
            JWT_SECRET: TEST_JWT_SECRET,
            DATA_DIR: `/tmp/rd-webhooks-child-${process.pid}`,
            WEBHOOK_TIMEOUT: '1s',
            WEBHOOK_RETRY_SCHEDULE: '1s',
            LOG_LEVEL: 'warn',
            WORKER_PORT: '0',
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        children.push(child);
        return child;
      };

      const first = startWorker();
      await receiver.waitFor(1, 20_000);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      const killedId = receiver.received[0].headers['webhook-id'];
      holding = false;
      release();

      const second = startWorker();
      await receiver.waitFor(4, 30_000);
      const rows = await t.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'event', 'status'])
        .where('endpoint_id', '=', endpoint.id)
        .orderBy('seq')
        .execute();
      // Wait for the last answer to be recorded.
      const deadline = Date.now() + 10_000;
      while (
        (
          await t.db
            .selectFrom('webhook_deliveries')
            .select('status')
            .where('endpoint_id', '=', endpoint.id)
            .where('status', '=', 'PENDING')
            .execute()
        ).length
      ) {
        assert.ok(Date.now() < deadline, 'deliveries still pending');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      second.kill('SIGTERM');
      await new Promise((resolve) => second.once('exit', resolve));

      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      assert.equal(ids[0], rows[0].id, 'the first attempt was the first event');
      assert.equal(ids[1], killedId, 'the interrupted delivery was sent again with the same webhook-id');
      assert.deepEqual(
        ids.slice(1),
        rows.map((r) => r.id),
        'then every event once, in order',
      );
      assert.deepEqual(
        receiver.received.map((r) => JSON.parse(r.body).event),
        ['delivery.assigned', 'delivery.assigned', 'delivery.picked_up', 'delivery.in_transit'],
      );
      assert.equal(second.exitCode, 0, 'SIGTERM stops the worker cleanly');
    },
  );
});
