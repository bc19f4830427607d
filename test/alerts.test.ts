// Lateness alerts (contract section 23): each of the five alerts raised once for a condition made to
// hold (the clock moved by hand, drivers placed by hand), none in an on-time delivery; `sla` on the
// job JSON; who sees, acknowledges and resolves which alert; alert.raised to subscribers only; the
// account stream's `event: alert`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';
import { get, packageBody, post, rideBody, setDriverPosition } from './packages-helpers.js';
import { signHex } from '../src/modules/webhooks/webhook-signature.js';
import { OutboxRepository } from '../src/modules/webhooks/outbox.repository.js';
import { WebhookWorker } from '../src/modules/webhooks/webhook-worker.js';
import { startReceiver } from './webhooks-receiver.js';

const MIN = 60_000;
const PICKUP = { lat: -1.2864, lng: 36.8172 };
const DROPOFF = { lat: -1.3, lng: 36.8 };

describe('lateness alerts', () => {
  let t: TestApp;
  let base: string;
  let business: TestUser;
  let otherBusiness: TestUser;
  let customer: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let admin: TestUser;

  before(async () => {
    // Jobs as before dispatch (accepted by id); the monitor's turns are run by the tests themselves.
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast', SLA_MONITOR: 'false' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    business = await createUser(t, { role: 'BUSINESS' });
    otherBusiness = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const driver = (companyId = company.id, vehicleType: 'BIKE' | 'CAR' = 'BIKE') =>
    createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', companyId, vehicleType } });
  const tick = () => t.services.alerts.monitor();
  /** A fresh access token: the tests move the clock past the tokens' lifetime. */
  const h = async (who: TestUser) => ({
    authorization: `Bearer ${(await t.tokens.signAccess({ userId: who.id, role: who.role, sessionId: who.sessionId })).token}`,
  });
  /** Moves the clock in steps of SLA_INTERVAL, a monitor turn at each. */
  const run = async (ms: number, each?: () => Promise<void>) => {
    for (let done = 0; done < ms; done += 15_000) {
      t.clock.advance(Math.min(15_000, ms - done));
      await each?.();
      await tick();
    }
  };
  const kinds = async (jobId: string) => {
    const { rows } = await sql<{ kind: string; n: number }>`
      select kind, count(*)::int as n from alerts where job_id = ${jobId}::uuid group by kind order by kind`.execute(
      t.db,
    );
    for (const r of rows) assert.equal(r.n, 1, `${r.kind} raised ${r.n} times`);
    return rows.map((r) => r.kind);
  };
  const newPackage = async (overrides: Record<string, unknown> = {}, by = business) => {
    const res = await post(t, '/api/packages', await h(by), packageBody(by.countryId, overrides));
    assert.equal(res.statusCode, 201, res.body);
    return res.json() as { id: string; sla: { pickupBy: string; dropoffBy: string; risk: string } | null };
  };
  const step = async (jobs: string, id: string, action: string, who: TestUser) => {
    const res = await post(t, `/api/${jobs}/${id}/${action}`, await h(who));
    assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    return res.json();
  };
  const window = (fromMs: number, toMs: number) => ({
    start: new Date(t.clock.nowMs() + fromMs).toISOString(),
    end: new Date(t.clock.nowMs() + toMs).toISOString(),
  });

  test('an on-time delivery raises no alert, and its sla stays OK until it ends', async () => {
    const d = await driver();
    await setDriverPosition(t, d.id, PICKUP.lat + 0.005, PICKUP.lng);
    const pkg = await newPackage();
    assert.equal(pkg.sla?.risk, 'OK');
    assert.equal(Date.parse(pkg.sla!.pickupBy), t.clock.nowMs() + 15 * MIN, 'ASAP: created + ASAP_SLACK');
    await run(MIN);
    await step('packages', pkg.id, 'accept', d);
    await run(MIN, () => setDriverPosition(t, d.id, PICKUP.lat + 0.0002, PICKUP.lng));
    await step('packages', pkg.id, 'pickup', d);
    await step('packages', pkg.id, 'start', d);
    // Seven minutes to the drop-off, a position every 15 s.
    let i = 0;
    await run(7 * MIN, async () => {
      i += 1;
      const f = Math.min(1, i / 28);
      await setDriverPosition(
        t,
        d.id,
        PICKUP.lat + (DROPOFF.lat - PICKUP.lat) * f,
        PICKUP.lng + (DROPOFF.lng - PICKUP.lng) * f,
      );
    });
    const seen = (await get(t, `/api/packages/${pkg.id}`, await h(business))).json();
    assert.equal(seen.sla.risk, 'OK');
    await step('packages', pkg.id, 'deliver', d);
    await run(15 * MIN);
    assert.deepEqual(await kinds(pkg.id), []);
    assert.equal((await get(t, `/api/packages/${pkg.id}`, await h(business))).json().sla, null);
  });

  test('offer.unanswered after UNANSWERED_AFTER, and after 5 offers sooner; each once', async () => {
    const slow = await newPackage();
    await run(10 * MIN - 15_000);
    assert.deepEqual(await kinds(slow.id), []);
    await run(15_000);
    assert.deepEqual(await kinds(slow.id), ['offer.unanswered']);
    await run(MIN);
    assert.ok((await kinds(slow.id)).includes('offer.unanswered'));

    const declined = await newPackage();
    const d = await driver();
    for (let i = 0; i < 5; i++) {
      await t.db
        .insertInto('dispatch_offers')
        .values({
          id: randomUUID(),
          job_type: 'PACKAGE',
          job_id: declined.id,
          driver_id: d.id,
          state: 'DECLINED',
          offer: '{}',
          choice: '{}',
          created_at: t.clock.now(),
          expires_at: t.clock.now(),
          answered_at: t.clock.now(),
        })
        .execute();
      await tick();
      assert.deepEqual(await kinds(declined.id), i < 4 ? [] : ['offer.unanswered']);
    }
    for (const p of [slow, declined]) await post(t, `/api/packages/${p.id}/cancel`, await h(business));
  });

  test('job.at_risk, driver.not_at_pickup, job.late and driver.stalled, each once, as their conditions come to hold', async () => {
    const far = await driver();
    const near = await driver();
    // 20 km away by bike: about an hour to the pickup, whose window ends in 30 minutes.
    await setDriverPosition(t, far.id, PICKUP.lat + 0.18, PICKUP.lng);
    await setDriverPosition(t, near.id, PICKUP.lat + 0.0003, PICKUP.lng);
    const windows = { pickupWindow: window(0, 30 * MIN), dropoffWindow: window(0, 60 * MIN) };
    const late = await newPackage(windows);
    const onTime = await newPackage(windows);
    await step('packages', late.id, 'accept', far);
    await step('packages', onTime.id, 'accept', near);
    await tick();
    assert.deepEqual(await kinds(late.id), ['job.at_risk']);
    assert.equal((await get(t, `/api/packages/${late.id}`, await h(business))).json().sla.risk, 'AT_RISK');
    // The near driver was at the pickup (within 100 m) and waits a little further on: it has arrived.
    let k = 0;
    await run(6 * MIN, async () => {
      k += 1;
      await setDriverPosition(t, far.id, PICKUP.lat + 0.18 - k * 0.003, PICKUP.lng);
      await setDriverPosition(t, near.id, PICKUP.lat + 0.0003 + (k % 2) * 0.003, PICKUP.lng);
    });
    assert.deepEqual(await kinds(late.id), ['driver.not_at_pickup', 'job.at_risk']);
    assert.deepEqual(await kinds(onTime.id), []);
    const alert = await t.db
      .selectFrom('alerts')
      .selectAll()
      .where('job_id', '=', late.id)
      .where('kind', '=', 'driver.not_at_pickup')
      .executeTakeFirstOrThrow();
    assert.equal(alert.driver_id, far.id);
    assert.equal(alert.business_id, business.id);
    assert.ok(alert.raised_at.getTime() - (Date.parse(windows.pickupWindow.start) + 5 * MIN) <= 30_000, 'within 30 s');

    // The far driver stops: 10 minutes later it is stalled; the pickup window's end passes: late.
    await run(25 * MIN);
    assert.deepEqual(await kinds(late.id), ['driver.not_at_pickup', 'driver.stalled', 'job.at_risk', 'job.late']);
    assert.equal((await get(t, `/api/packages/${late.id}`, await h(business))).json().sla.risk, 'LATE');
    const stalled = await t.db
      .selectFrom('alerts')
      .select(['raised_at', 'details'])
      .where('job_id', '=', late.id)
      .where('kind', '=', 'driver.stalled')
      .executeTakeFirstOrThrow();
    const details = stalled.details as { since: string; movedMeters: number };
    assert.ok(details.movedMeters < 200);
    assert.ok(
      stalled.raised_at.getTime() - Date.parse(details.since) - 10 * MIN <= 30_000,
      'within 30 s of 10 minutes still',
    );
    for (const p of [late, onTime]) await post(t, `/api/packages/${p.id}/cancel`, await h(business));
  });

  test('a ride booked ahead: late and not at the pickup once scheduledAt passed, nothing more once ARRIVED', async () => {
    const d = await driver(company.id, 'CAR');
    const scheduledAt = new Date(t.clock.nowMs() + 40 * MIN).toISOString();
    const created = await post(t, '/api/rides', await h(customer), rideBody(customer.countryId, { scheduledAt }));
    assert.equal(created.statusCode, 201, created.body);
    const ride = created.json();
    assert.equal(ride.sla.pickupBy, scheduledAt);
    await setDriverPosition(t, d.id, PICKUP.lat + 0.04, PICKUP.lng);
    await step('rides', ride.id, 'accept', d);
    await tick();
    assert.deepEqual(await kinds(ride.id), []);
    let k = 0;
    await run(46 * MIN, () => setDriverPosition(t, d.id, PICKUP.lat + 0.04 + (++k % 2) * 0.004, PICKUP.lng));
    assert.deepEqual(await kinds(ride.id), ['driver.not_at_pickup', 'job.at_risk', 'job.late']);
    const alerts = (await get(t, `/api/alerts?kind=job.late`, await h(admin))).json().items;
    assert.ok(alerts.some((a: { jobId: string; jobType: string }) => a.jobId === ride.id && a.jobType === 'RIDE'));
    await setDriverPosition(t, d.id, PICKUP.lat, PICKUP.lng);
    await step('rides', ride.id, 'arrive', d);
    await run(15 * MIN);
    // A driver waiting at the pickup is not stalled; nothing else is raised twice.
    assert.deepEqual(await kinds(ride.id), ['driver.not_at_pickup', 'job.at_risk', 'job.late']);
  });

  test('who sees which alert; acknowledge and resolve with an audit row; a resolved one is 409', async () => {
    const ours = await driver(company.id);
    await setDriverPosition(t, ours.id, PICKUP.lat + 0.2, PICKUP.lng);
    const pkg = await newPackage({ pickupWindow: window(0, 30 * MIN), dropoffWindow: window(0, 60 * MIN) });
    await step('packages', pkg.id, 'accept', ours);
    await tick();
    const [row] = await t.db.selectFrom('alerts').select('id').where('job_id', '=', pkg.id).execute();
    const id = row!.id;
    const ids = async (who: TestUser, query = '') => {
      const res = await get(t, `/api/alerts${query}`, await h(who));
      assert.equal(res.statusCode, 200, res.body);
      return (res.json().items as { id: string }[]).map((a) => a.id);
    };
    for (const who of [business, company, admin]) assert.ok((await ids(who)).includes(id));
    for (const who of [otherBusiness, otherCompany]) assert.ok(!(await ids(who)).includes(id));
    const d = await driver();
    for (const who of [customer, d]) {
      const res = await get(t, '/api/alerts', await h(who));
      assert.equal(res.statusCode, 403);
    }
    const notFound = { statusCode: 404, message: 'Alert not found', error: 'Not Found', code: 'ALERT_NOT_FOUND' };
    for (const who of [otherBusiness, otherCompany]) {
      const res = await post(t, `/api/alerts/${id}/acknowledge`, await h(who));
      assert.deepEqual(res.json(), notFound);
    }
    assert.equal((await post(t, `/api/alerts/${id}/resolve`, await h(d))).statusCode, 403);
    assert.equal((await post(t, `/api/alerts/not-a-uuid/resolve`, await h(admin))).statusCode, 400);

    const acked = await post(t, `/api/alerts/${id}/acknowledge`, await h(business));
    assert.equal(acked.statusCode, 200, acked.body);
    assert.equal(acked.json().state, 'ACKNOWLEDGED');
    assert.equal(acked.json().by, business.id);
    assert.deepEqual(await ids(business, '?state=ACKNOWLEDGED'), [id]);
    assert.ok(!(await ids(business, '?state=OPEN')).includes(id));
    const resolved = await post(t, `/api/alerts/${id}/resolve`, await h(company));
    assert.equal(resolved.json().state, 'RESOLVED');
    assert.deepEqual((await post(t, `/api/alerts/${id}/acknowledge`, await h(admin))).json(), {
      statusCode: 409,
      message: 'Alert is already resolved',
      error: 'Conflict',
      code: 'ALERT_RESOLVED',
    });
    const audit = await t.db.selectFrom('alert_audit').selectAll().where('alert_id', '=', id).orderBy('at').execute();
    assert.deepEqual(
      audit.map((a) => [a.action, a.from_state, a.to_state, a.actor_id]),
      [
        ['ACKNOWLEDGE', 'OPEN', 'ACKNOWLEDGED', business.id],
        ['RESOLVE', 'ACKNOWLEDGED', 'RESOLVED', company.id],
      ],
    );

    // Filters: kind, and the period of raisedAt; bad values are 400 naming the field.
    assert.ok((await ids(admin, '?kind=job.at_risk')).includes(id));
    assert.ok(!(await ids(admin, '?kind=job.late')).includes(id));
    const at = Date.parse(acked.json().raisedAt);
    assert.ok(
      (await ids(admin, `?from=${new Date(at).toISOString()}&to=${new Date(at + 1).toISOString()}`)).includes(id),
    );
    assert.ok(!(await ids(admin, `?to=${new Date(at).toISOString()}`)).includes(id));
    assert.equal((await get(t, '/api/alerts?kind=job.exploded', await h(admin))).statusCode, 400);
    const badFrom = await get(t, '/api/alerts?from=yesterday', await h(admin));
    assert.equal(badFrom.statusCode, 400);
    assert.match(badFrom.json().message, /querystring\.from/);
    await post(t, `/api/packages/${pkg.id}/cancel`, await h(business));
  });

  test('alert.raised goes, signed, only to endpoints that subscribed to it; the account stream shows it', async () => {
    const receiver = await startReceiver();
    try {
      const owner = await createUser(t, { role: 'BUSINESS' });
      const endpoint = async (events?: string[]) => {
        const res = await post(t, '/api/webhooks', await h(owner), {
          url: receiver.url,
          ...(events ? { events } : {}),
        });
        assert.equal(res.statusCode, 201, res.body);
        return res.json() as { id: string; secret: string; events: string[] };
      };
      const byDefault = await endpoint();
      assert.ok(!byDefault.events.includes('alert.raised'));
      const subscribed = await endpoint(['alert.raised']);
      const stream = await SseClient.open(`${base}/api/events/stream`, await h(owner));
      const strangers = await SseClient.open(`${base}/api/events/stream`, await h(otherBusiness));
      const pkg = await newPackage({}, owner);
      await run(10 * MIN);
      const [alert] = await t.db.selectFrom('alerts').selectAll().where('job_id', '=', pkg.id).execute();
      assert.equal(alert?.kind, 'offer.unanswered');
      const rows = await t.db
        .selectFrom('webhook_deliveries')
        .select(['endpoint_id', 'event', 'payload'])
        .where('delivery_id', '=', pkg.id)
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.endpoint_id, r.event]),
        [[subscribed.id, 'alert.raised']],
      );
      const worker = new WebhookWorker({
        db: t.db,
        repo: new OutboxRepository(t.db),
        clock: t.clock,
        logger: t.deps.logger,
        config: t.deps.config,
        registry: t.deps.metrics.registry,
      });
      await worker.drain();
      await receiver.waitFor(1);
      const got = receiver.received[0]!;
      assert.equal(
        got.body,
        JSON.stringify({
          event: 'alert.raised',
          delivery_id: pkg.id,
          status: 'PENDING',
          timestamp: alert!.raised_at.toISOString(),
          alert: { id: alert!.id, kind: 'offer.unanswered' },
        }),
      );
      assert.equal(got.headers['x-service-signature'], signHex(subscribed.secret, got.body));
      assert.equal(got.headers['x-service-event'], 'alert.raised');

      await stream.until((c) => c.of('alert').length >= 1);
      const shown = stream.json('alert')[0]!;
      assert.equal(shown.id, alert!.id);
      assert.equal(shown.kind, 'offer.unanswered');
      assert.equal(shown.state, 'OPEN');
      await post(t, `/api/alerts/${alert!.id}/acknowledge`, await h(owner));
      await stream.until((c) => c.of('alert').length >= 2);
      assert.equal(stream.json('alert')[1]!.state, 'ACKNOWLEDGED');
      assert.equal(strangers.of('alert').length, 0);
      stream.close();
      strangers.close();
      await post(t, `/api/packages/${pkg.id}/cancel`, await h(owner));
    } finally {
      await receiver.close();
    }
  });
});
