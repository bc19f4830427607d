// The write path's statement budget (issue 41): every statement a job step sends on its connection,
// BEGIN and COMMIT included, counted at the drivers (test/helpers/statement-counter.ts) for one HTTP
// request, with and without an Idempotency-Key. A change that adds a statement to a step fails here:
// lower a budget when a step gets cheaper, never raise one without saying why in docs/architecture.md.
// Settings as B14/B17 measure them: DISPATCH_MODE=off, sessions warm (a cold session adds its read).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { installStatementCounter, countStatements } from './helpers/statement-counter.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, setDriverPosition, stop } from './packages-helpers.js';

installStatementCounter();

type Step = 'accept' | 'pickup' | 'start' | 'deliver' | 'fail' | 'cancel';
type Counted = Step | 'deliverCold' | 'deliverRead';

/**
 * Statements per step; `keyed`: sent with an Idempotency-Key (its claim before the step, its answer
 * stored in the step's transaction). Before issue 41 (main at 7a5ec16): accept 10/12, pickup 6/8,
 * start 6/8, deliver 8/10 (cold account 11/13), fail 6/8, cancel 8/10. A driver's pickup, start and
 * fail are now one autocommitted statement; delivery BEGIN, the step, the ledger's account read (the
 * accounts of a driver's first delivery are not yet remembered; none once they are) and posting, COMMIT.
 * Accept and cancel still take the full path (docs/architecture.md, the write path).
 */
export const STATEMENT_BUDGET: Record<Counted, { plain: number; keyed: number }> = {
  accept: { plain: 10, keyed: 12 },
  pickup: { plain: 1, keyed: 1 },
  start: { plain: 1, keyed: 1 },
  /** Delivery, the ledger accounts remembered (a driver who has been paid before: B14's). */
  deliver: { plain: 4, keyed: 4 },
  /** Delivery whose accounts are read once (the driver's second: its first opened them in that transaction). */
  deliverRead: { plain: 5, keyed: 5 },
  fail: { plain: 1, keyed: 1 },
  cancel: { plain: 8, keyed: 10 },
  /** A delivery that opens the driver's ledger account (its first): listed apart. */
  deliverCold: { plain: 8, keyed: 8 },
};

/** A flat tariff, so that delivery books the ledger (price 12,000, 15 % commission). */
const TARIFF = {
  base: 10_000,
  perKm: 0,
  perMinute: 0,
  minimum: 0,
  bookingFee: 2_000,
  cancellationFee: 5_000,
  commissionRate: 1500,
};

describe('write path: statements per job step', () => {
  let t: TestApp;
  let business: TestUser;
  let other: TestUser;
  let area = 0;
  const seen: Record<string, number> = {};

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
    const admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    other = await createUser(t, { role: 'BUSINESS' });
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/tariffs/${business.countryId}/BIKE`,
      headers: admin.headers,
      payload: TARIFF,
    });
    assert.equal(res.statusCode, 200, res.body);
    // One enabled endpoint: each event writes one outbox row.
    const hook = await post(t, '/api/webhooks', business.headers, { url: 'https://hooks.example.com/in' });
    assert.equal(hook.statusCode, 201, hook.body);
  });
  after(async () => {
    console.log('statements per step (DISPATCH_MODE=off):', JSON.stringify(seen));
    await t.close();
  });

  /** A PENDING package and an online driver beside it (a new one unless given), both sessions warm. */
  const fresh = async (given?: TestUser) => {
    area += 1;
    const at = { lat: -4 + area * 0.5, lng: 38 };
    const driver =
      given ?? (await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } }));
    await setDriverPosition(t, driver.id, at.lat, at.lng);
    const created = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng) }),
    );
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    // Warms the driver's session (a cold one adds its read: listed apart in docs/architecture.md).
    await get(t, '/api/drivers/me/offers', driver.headers);
    return { id, driver };
  };

  /** Sends one step and counts its statements; the answer must be `status`. */
  const step = async (
    name: Step,
    keyed: boolean,
    id: string,
    user: TestUser,
    payload: unknown,
    status: number,
    as?: 'deliverCold' | 'deliverRead',
  ) => {
    const headers = keyed ? { ...user.headers, 'idempotency-key': `${name}-${id}` } : user.headers;
    const { result: res, texts } = await countStatements(() =>
      post(t, `/api/packages/${id}/${name}`, headers, payload),
    );
    assert.equal(res.statusCode, status, res.body);
    const counted: Counted = as ?? name;
    const budget = STATEMENT_BUDGET[counted][keyed ? 'keyed' : 'plain'];
    seen[`${counted}${keyed ? '+key' : ''}`] = texts.length;
    if (process.env.STATEMENTS_DUMP) console.log(`${counted}${keyed ? '+key' : ''}:\n  ${texts.join('\n  ')}`);
    assert.ok(
      texts.length <= budget,
      `${name}${keyed ? ' with a key' : ''}: ${texts.length} statements, budget ${budget}:\n${texts.join('\n')}`,
    );
    return res;
  };

  const ledgerSum = async () =>
    Number(
      (await sql<{ n: number }>`select coalesce(sum(amount), 0)::int as n from ledger_entries`.execute(t.db)).rows[0]!
        .n,
    );
  const outboxRows = async (id: string) =>
    (
      await t.db.selectFrom('webhook_deliveries').select('event').where('delivery_id', '=', id).orderBy('seq').execute()
    ).map((r) => r.event);

  for (const keyed of [false, true]) {
    const how = keyed ? 'with an Idempotency-Key' : 'without a key';

    test(`the whole life of a package ${how}: each step within its budget, one event each, the ledger balanced`, async () => {
      // A first package opens the driver's ledger account (deliverCold), the second reads it once
      // (deliverRead), the third finds it remembered (deliver, B14's case).
      const lifeOf = async (as: 'deliverCold' | 'deliverRead' | undefined, given?: TestUser) => {
        const job = await fresh(given);
        for (const name of ['accept', 'pickup', 'start'] as const)
          await step(name, keyed, job.id, job.driver, undefined, 200);
        await step('deliver', keyed, job.id, job.driver, { recipientName: 'Amina' }, 200, as);
        return job.driver;
      };
      const worked = await lifeOf('deliverCold');
      await lifeOf('deliverRead', worked);
      const { id, driver } = await fresh(worked);
      const accepted = await step('accept', keyed, id, driver, undefined, 200);
      assert.equal(accepted.json().status, 'ASSIGNED');
      assert.equal((await step('pickup', keyed, id, driver, undefined, 200)).json().status, 'PICKED_UP');
      assert.equal((await step('start', keyed, id, driver, undefined, 200)).json().status, 'IN_TRANSIT');
      const delivered = await step('deliver', keyed, id, driver, { recipientName: 'Amina' }, 200);
      assert.equal(delivered.json().status, 'DELIVERED');
      assert.equal(delivered.json().earnings.driver, 8_500);
      assert.deepEqual(await outboxRows(id), [
        'delivery.assigned',
        'delivery.picked_up',
        'delivery.in_transit',
        'delivery.delivered',
      ]);
      const booked = await sql<{ n: number }>`select count(*)::int as n from ledger_transactions
        where source_key like ${'%' + id + '%'}`.execute(t.db);
      assert.equal(booked.rows[0]!.n, 1);
      assert.equal(await ledgerSum(), 0);
      // The step again: 409 naming the status (a replay with the same key answers 200 from the store).
      if (!keyed) {
        const again = await post(t, `/api/packages/${id}/deliver`, driver.headers, {});
        assert.equal(again.statusCode, 409);
        assert.equal(again.json().message, 'Package is DELIVERED');
      } else {
        const replay = await post(
          t,
          `/api/packages/${id}/deliver`,
          { ...driver.headers, 'idempotency-key': `deliver-${id}` },
          { recipientName: 'Amina' },
        );
        assert.equal(replay.statusCode, 200);
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.deepEqual(replay.json(), delivered.json());
      }
    });

    test(`fail and cancel ${how}: within their budgets; another's package is 404`, async () => {
      const a = await fresh();
      await step('accept', keyed, a.id, a.driver, undefined, 200);
      const failed = await step('fail', keyed, a.id, a.driver, { reason: 'Gate locked', reasonCode: 'CLOSED' }, 200);
      assert.equal(failed.json().status, 'FAILED');
      assert.equal(failed.json().reasonCode, 'CLOSED');
      const b = await fresh();
      const notYours = await post(t, `/api/packages/${b.id}/cancel`, other.headers, {});
      assert.equal(notYours.statusCode, 404);
      const cancelled = await step('cancel', keyed, b.id, business, { reason: 'Changed my mind' }, 200);
      assert.equal(cancelled.json().status, 'CANCELLED');
      assert.deepEqual(await outboxRows(b.id), ['delivery.cancelled']);
      assert.equal(await ledgerSum(), 0);
    });
  }
});
