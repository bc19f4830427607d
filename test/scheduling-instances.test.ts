// Scheduled dispatch across instances (contract section 22) on one PostgreSQL server: three instances
// wake the same due jobs at once, and one dies (its connection killed) while it holds due wake-ups
// locked: every job still enters dispatch, once; the customers of unaccepted scheduled rides are told once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { SchedulingRepository } from '../src/modules/scheduling/scheduling.repository.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { packageBody, post, rideBody } from './packages-helpers.js';

const MIN = 60_000;

describe(
  'scheduled wake-ups across instances (PostgreSQL)',
  { skip: serverDatabaseUrl ? false : 'needs TEST_DATABASE_URL' },
  () => {
    let a: TestApp;
    let b: TestApp;
    let c: TestApp;
    let bHandle: DatabaseHandle;
    let cHandle: DatabaseHandle;
    let business: TestUser;

    before(async () => {
      a = await buildTestApp();
      // B and C: their own connection pools on the same database, the same clock.
      bHandle = await openDatabase({ url: a.database.url });
      cHandle = await openDatabase({ url: a.database.url });
      b = await buildTestApp({ database: { ...bHandle, url: a.database.url }, clock: a.clock });
      c = await buildTestApp({ database: { ...cHandle, url: a.database.url }, clock: a.clock });
      business = await createUser(a, { role: 'BUSINESS' });
    });
    after(async () => {
      await c.close();
      await b.close();
      await a.close();
      await cHandle.close().catch(() => undefined);
      await bHandle.close();
    });

    const entries = (t: TestApp) =>
      t.logLines
        .filter((l) => l.includes('scheduled job entered dispatch'))
        .map((l) => (JSON.parse(l) as { jobId: string }).jobId);

    test('60 jobs due at once, three instances waking them together: each enters dispatch once', async () => {
      const start = new Date(a.clock.nowMs() + 2 * 60 * MIN).toISOString();
      const end = new Date(a.clock.nowMs() + 3 * 60 * MIN).toISOString();
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const res = await post(
          [a, b, c][i % 3]!,
          '/api/packages',
          business.headers,
          packageBody(business.countryId, { pickupWindow: { start, end } }),
        );
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().id);
      }
      a.clock.set(Date.parse(start) - 25 * MIN);
      const woken = await Promise.all([a, b, c].map((t) => t.services.scheduling.wake()));
      await Promise.all([a, b, c].map((t) => t.services.dispatch.idle()));
      assert.equal(
        woken.reduce((x, y) => x + y, 0),
        60,
      );
      const all = [...entries(a), ...entries(b), ...entries(c)];
      assert.equal(all.length, 60);
      assert.deepEqual([...new Set(all)].sort(), [...ids].sort());
      const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from dispatch_jobs where job_id = any(${ids}::uuid[]) and entered_at is not null and state <> 'SCHEDULED'`.execute(
        a.db,
      );
      assert.equal(rows[0]!.n, 60);
    });

    test('an instance that dies holding due wake-ups locked: the others wake those jobs too, each once', async () => {
      business.headers.authorization = `Bearer ${(await a.tokens.signAccess({ userId: business.id, role: business.role, sessionId: business.sessionId })).token}`;
      const base = a.clock.nowMs();
      const start = new Date(base + 2 * 60 * MIN).toISOString();
      const end = new Date(base + 3 * 60 * MIN).toISOString();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const res = await post(
          [a, b][i % 2]!,
          '/api/packages',
          business.headers,
          packageBody(business.countryId, { pickupWindow: { start, end } }),
        );
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().id);
      }
      const before = { a: entries(a).length, b: entries(b).length };
      a.clock.set(Date.parse(start) - 25 * MIN);

      // C claims 10 of them (the wake-up's own statement, in its transaction) and is killed before committing.
      const cRepo = new SchedulingRepository(cHandle.db);
      let held: string[] = [];
      let release!: () => void;
      const holding = new Promise<void>((r) => (release = r));
      const claimed = new Promise<void>((resolve) => {
        void cHandle.db
          .transaction()
          .execute(async (trx) => {
            held = (await cRepo.lockDue(trx, a.clock.now(), 10)).map((r) => r.job_id);
            const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
            pidOfC = rows[0]!.pid;
            resolve();
            await holding;
          })
          .catch(() => undefined);
      });
      let pidOfC = 0;
      await claimed;
      assert.equal(held.length, 10);

      // While C holds them, A and B skip them (never twice) and wake the other 20.
      const first = await Promise.all([a.services.scheduling.wake(), b.services.scheduling.wake()]);
      assert.equal(first[0] + first[1], 20);

      // C dies: PostgreSQL ends its session and rolls its claim back.
      await sql`select pg_terminate_backend(${pidOfC})`.execute(a.db);
      release();
      const second = await Promise.all([a.services.scheduling.wake(), b.services.scheduling.wake()]);
      assert.equal(second[0] + second[1], 10);
      await Promise.all([a.services.dispatch.idle(), b.services.dispatch.idle()]);

      const now = [...entries(a).slice(before.a), ...entries(b).slice(before.b)];
      assert.equal(now.length, 30);
      assert.deepEqual([...new Set(now)].sort(), [...ids].sort());
      for (const id of held) assert.ok(now.includes(id), `held job ${id} woken by another instance`);
      assert.equal(await a.services.scheduling.wake(), 0);
    });

    test('30 unaccepted scheduled rides, three instances telling their customers together: each told once', async () => {
      const customers: TestUser[] = [];
      const base = a.clock.nowMs();
      const scheduledAt = new Date(base + 2 * 60 * MIN).toISOString();
      for (let i = 0; i < 30; i++) {
        const customer = await createUser(a, { role: 'CUSTOMER' });
        customers.push(customer);
        const res = await post(
          [a, b, c][i % 3]!,
          '/api/rides',
          customer.headers,
          rideBody(customer.countryId, { scheduledAt }),
        );
        assert.equal(res.statusCode, 201, res.body);
      }
      a.clock.set(Date.parse(scheduledAt) - 10 * MIN);
      const told = await Promise.all([a, b, c].map((t) => t.services.scheduling.notifyUnaccepted()));
      assert.equal(
        told.reduce((x, y) => x + y, 0),
        30,
      );
      const lines = [a, b, c].flatMap((t) => t.logLines.filter((l) => l.includes('No driver has accepted')));
      for (const customer of customers)
        assert.equal(lines.filter((l) => l.includes(customer.phone)).length, 1, `${customer.phone} told once`);
      assert.equal(
        (await Promise.all([a, b, c].map((t) => t.services.scheduling.notifyUnaccepted()))).reduce((x, y) => x + y, 0),
        0,
      );
    });
  },
);
