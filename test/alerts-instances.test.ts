// The lateness monitor across instances (contract section 23) on one PostgreSQL server: three
// instances run their turns at once, and one dies holding the turn; every alert is raised once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { AlertsRepository } from '../src/modules/alerts/alerts.repository.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { serverDatabaseUrl } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { packageBody, post } from './packages-helpers.js';

const MIN = 60_000;
const env = { DISPATCH_MODE: 'broadcast', SLA_MONITOR: 'false' };

describe(
  'the lateness monitor across instances (PostgreSQL)',
  { skip: serverDatabaseUrl ? false : 'needs TEST_DATABASE_URL' },
  () => {
    let a: TestApp;
    let b: TestApp;
    let c: TestApp;
    let bHandle: DatabaseHandle;
    let cHandle: DatabaseHandle;
    let business: TestUser;

    before(async () => {
      a = await buildTestApp({ env });
      bHandle = await openDatabase({ url: a.database.url });
      cHandle = await openDatabase({ url: a.database.url });
      b = await buildTestApp({ env, database: { ...bHandle, url: a.database.url }, clock: a.clock });
      c = await buildTestApp({ env, database: { ...cHandle, url: a.database.url }, clock: a.clock });
      business = await createUser(a, { role: 'BUSINESS' });
    });
    after(async () => {
      await c.close();
      await b.close();
      await a.close();
      await cHandle.close().catch(() => undefined);
      await bHandle.close();
    });

    const headers = async () => ({
      authorization: `Bearer ${(await a.tokens.signAccess({ userId: business.id, role: business.role, sessionId: business.sessionId })).token}`,
    });
    const create = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const res = await post([a, b, c][i % 3]!, '/api/packages', await headers(), packageBody(business.countryId));
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().id);
      }
      return ids;
    };
    const counts = async (ids: string[]) => {
      const { rows } = await sql<{ job_id: string; kind: string; n: number }>`
        select job_id, kind, count(*)::int as n from alerts where job_id = any(${ids}::uuid[]) group by job_id, kind`.execute(
        a.db,
      );
      return rows;
    };

    test('three instances taking turns at once: each alert raised once, by one of them', async () => {
      const ids = await create(30);
      // 10 minutes and a turn later nobody has taken them: offer.unanswered and job.at_risk for each.
      a.clock.advance(10 * MIN + 15_000);
      const raised: number[] = [];
      for (let round = 0; round < 4; round++) {
        const turns = await Promise.all([a, b, c].map((t) => t.services.alerts.monitor()));
        for (const turn of turns) raised.push(turn.filter((x) => ids.includes(x.job_id)).length);
      }
      const rows = await counts(ids);
      assert.equal(rows.length, 60);
      for (const r of rows) assert.equal(r.n, 1);
      assert.deepEqual([...new Set(rows.map((r) => r.kind))].sort(), ['job.at_risk', 'offer.unanswered']);
      // What the turns returned is what the table holds: no turn raised one that another had raised.
      assert.equal(
        raised.reduce((x, y) => x + y, 0),
        60,
      );
      for (const id of ids) await post(a, `/api/packages/${id}/cancel`, await headers());
    });

    test('an instance that dies holding the turn: another raises the alerts, once', async () => {
      const ids = await create(12);
      a.clock.advance(10 * MIN + 15_000);
      // C takes the turn (the monitor's lock, in its transaction) and is killed before it commits.
      const repo = new AlertsRepository(cHandle.db);
      let pid = 0;
      let release!: () => void;
      const holding = new Promise<void>((r) => (release = r));
      const locked = new Promise<void>((resolve) => {
        void cHandle.db
          .transaction()
          .execute(async (trx) => {
            assert.equal(await repo.tryLock(trx), true);
            await repo.activeJobs(trx);
            pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
            resolve();
            await holding;
          })
          .catch(() => undefined);
      });
      await locked;
      // While C holds it, the others' turns do nothing (never two at once).
      const skipped = await Promise.all([a.services.alerts.monitor(), b.services.alerts.monitor()]);
      assert.deepEqual(
        skipped.map((s) => s.length),
        [0, 0],
      );
      await sql`select pg_terminate_backend(${pid})`.execute(a.db);
      release();
      const turns = await Promise.all([a.services.alerts.monitor(), b.services.alerts.monitor()]);
      const raised = turns.flat().filter((x) => ids.includes(x.job_id));
      assert.equal(raised.length, 24);
      const rows = await counts(ids);
      assert.equal(rows.length, 24);
      for (const r of rows) assert.equal(r.n, 1);
      for (const id of ids) await post(a, `/api/packages/${id}/cancel`, await headers());
    });

    test('two turns racing without the lock still raise an alert once (the job-and-kind key)', async () => {
      const [id] = await create(1);
      const alert = (n: number) => ({
        id: `00000000-0000-4000-8000-00000000000${n}`,
        kind: 'job.late' as const,
        jobType: 'PACKAGE' as const,
        jobId: id!,
        driverId: null,
        businessId: business.id,
        details: '{}',
      });
      const [x, y] = await Promise.all([
        new AlertsRepository(bHandle.db).insertAlerts(bHandle.db, [alert(1)], a.clock.now()),
        new AlertsRepository(cHandle.db).insertAlerts(cHandle.db, [alert(2)], a.clock.now()),
      ]);
      assert.equal(x.length + y.length, 1);
      assert.equal((await counts([id!])).length, 1);
      await post(a, `/api/packages/${id}/cancel`, await headers());
    });
  },
);
