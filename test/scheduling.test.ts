// Time (contract section 22): windows and booking ahead validated with 400s naming the field, shown on
// the job; a scheduled job waits SCHEDULED until start − lead (the lead in the dispatch log), enters
// dispatch once, priced then unless a quote locked it; a scheduled ride searches until scheduledAt + 10m
// and its customer is told once at scheduledAt − 10m when nobody has accepted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { SchedulingRepository } from '../src/modules/scheduling/scheduling.repository.js';
import { SchedulingService, type SchedulingDeps } from '../src/modules/scheduling/scheduling.service.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody } from './packages-helpers.js';

const MIN = 60_000;

describe('scheduling: windows, booking ahead, scheduled dispatch', () => {
  let t: TestApp;
  let business: TestUser;
  let customer: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp();
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(() => t.close());

  /** A token signed at the test clock's now (moving the clock hours on expires the first one). */
  const h = async (u: TestUser) => ({
    authorization: `Bearer ${(await t.tokens.signAccess({ userId: u.id, role: u.role, sessionId: u.sessionId })).token}`,
  });
  const at = (msFromNow: number) => new Date(t.clock.nowMs() + msFromNow).toISOString();
  const windowOf = (fromMs: number, toMs: number) => ({ start: at(fromMs), end: at(toMs) });
  const createPackage = async (extra: Record<string, unknown>) =>
    post(t, '/api/packages', await h(business), packageBody(business.countryId, extra));

  test('countries carry their IANA time zone; an admin sets it, an unknown zone is a 400 naming the field', async () => {
    const list = (await get(t, '/api/countries', {})).json().items as { code: string; timeZone: string; id: string }[];
    const zone = (code: string) => list.find((c) => c.code === code)!.timeZone;
    assert.equal(zone('KE'), 'Africa/Nairobi');
    assert.equal(zone('GB'), 'Europe/London');
    assert.equal(zone('US'), 'America/New_York');
    const us = list.find((c) => c.code === 'US')!;
    const bad = await t.app.inject({
      method: 'PATCH',
      url: `/api/admin/countries/${us.id}`,
      headers: await h(admin),
      payload: { timeZone: 'Mars/Olympus_Mons' },
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'VALIDATION_FAILED');
    assert.match(bad.json().message, /body\.timeZone/);
    const ok = await t.app.inject({
      method: 'PATCH',
      url: `/api/admin/countries/${us.id}`,
      headers: await h(admin),
      payload: { timeZone: 'America/Chicago' },
    });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().timeZone, 'America/Chicago');
  });

  test('bad windows and a ride booked too soon are 400 VALIDATION_FAILED naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ pickupWindow: windowOf(60 * MIN, 70 * MIN) }, /body\.pickupWindow must be at least 30 minutes/],
      [{ pickupWindow: { start: at(90 * MIN), end: at(60 * MIN) } }, /body\.pickupWindow\.end must be after/],
      [{ pickupWindow: windowOf(-120 * MIN, -60 * MIN) }, /body\.pickupWindow\.end must not be in the past/],
      [
        { dropoffWindow: windowOf(31 * 24 * 60 * MIN, 31 * 24 * 60 * MIN + 60 * MIN) },
        /body\.dropoffWindow\.start must be at most/,
      ],
      [
        { pickupWindow: windowOf(60 * MIN, 120 * MIN), dropoffWindow: windowOf(60 * MIN, 100 * MIN) },
        /body\.dropoffWindow\.end must not be before body\.pickupWindow\.end/,
      ],
      [{ pickupWindow: { start: '2026-13-01T10:00', end: at(60 * MIN) } }, /body\.pickupWindow\.start/],
      [{ timeZone: 'Africa/Atlantis' }, /body\.timeZone must be an IANA time zone/],
    ];
    for (const [extra, message] of cases) {
      const res = await createPackage(extra);
      assert.equal(res.statusCode, 400, `${JSON.stringify(extra)}: ${res.body}`);
      assert.equal(res.json().code, 'VALIDATION_FAILED');
      assert.match(res.json().message, message);
    }
    const soon = await post(
      t,
      '/api/rides',
      await h(customer),
      rideBody(customer.countryId, { scheduledAt: at(29 * MIN) }),
    );
    assert.equal(soon.statusCode, 400);
    assert.match(soon.json().message, /body\.scheduledAt must be at least 30 minutes ahead/);
    const far = await post(
      t,
      '/api/rides',
      await h(customer),
      rideBody(customer.countryId, { scheduledAt: at(31 * 24 * 60 * MIN) }),
    );
    assert.equal(far.statusCode, 400);
    assert.match(far.json().message, /body\.scheduledAt must be at most/);
  });

  test('an ASAP package shows no windows and its country’s time zone; it is dispatched at once', async () => {
    const res = await createPackage({});
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.pickupWindow, null);
    assert.equal(body.dropoffWindow, null);
    assert.equal(body.timeZone, 'Africa/Nairobi');
    assert.notEqual(body.dispatch.state, 'SCHEDULED');
  });

  test('a package with windows waits SCHEDULED until start − lead (default 20m + 5m), then enters dispatch once', async () => {
    const pickupWindow = windowOf(3 * 60 * MIN, 4 * 60 * MIN);
    const dropoffWindow = windowOf(3 * 60 * MIN, 5 * 60 * MIN);
    const res = await createPackage({ pickupWindow, dropoffWindow, timeZone: 'Africa/Kampala' });
    assert.equal(res.statusCode, 201, res.body);
    const pkg = res.json();
    assert.deepEqual(pkg.pickupWindow, pickupWindow);
    assert.deepEqual(pkg.dropoffWindow, dropoffWindow);
    assert.equal(pkg.timeZone, 'Africa/Kampala');
    assert.equal(pkg.dispatch.state, 'SCHEDULED');
    t.services.packages.announce(pkg);
    await t.services.dispatch.idle();

    // The public tracking answer shows the promised windows and the zone.
    const tracked = (await get(t, `/api/tracking/${pkg.trackingUrl.split('/t/')[1]}`, {})).json();
    assert.deepEqual(
      [tracked.pickupWindow, tracked.dropoffWindow, tracked.scheduledAt, tracked.timeZone],
      [pickupWindow, dropoffWindow, null, 'Africa/Kampala'],
    );
    // The read (the poll's JSON built by PostgreSQL) shows the same fields.
    const read = (await get(t, `/api/packages/${pkg.id}`, await h(business))).json();
    assert.deepEqual(read.pickupWindow, pickupWindow);
    assert.equal(read.timeZone, 'Africa/Kampala');
    assert.equal(read.dispatch.state, 'SCHEDULED');

    const startMs = Date.parse(pickupWindow.start);
    const dueMs = startMs - 25 * MIN;
    t.clock.set(dueMs - 1000);
    assert.equal(await t.services.scheduling.wake(), 0, 'not before start − lead');
    assert.equal((await t.services.dispatch.dispatch('PACKAGE', pkg.id)) ?? null, null);
    assert.equal((await get(t, `/api/packages/${pkg.id}`, await h(business))).json().dispatch.state, 'SCHEDULED');

    t.clock.set(dueMs);
    assert.equal(await t.services.scheduling.wake(), 1);
    await t.services.dispatch.idle();
    assert.equal(await t.services.scheduling.wake(), 0, 'never twice');
    const state = (await get(t, `/api/packages/${pkg.id}`, await h(business))).json().dispatch.state;
    assert.ok(['SEARCHING', 'NO_DRIVERS', 'OFFERED'].includes(state), state);

    const log = (await get(t, `/api/admin/dispatch/${pkg.id}`, await h(admin))).json();
    assert.equal(log.scheduled.start, pickupWindow.start);
    assert.equal(log.scheduled.leadSeconds, 25 * 60);
    assert.equal(log.scheduled.leadSamples, 0);
    assert.equal(log.scheduled.enteredAt, new Date(dueMs).toISOString());
  });

  test('the lead is the p90 of the area’s accept-to-arrival times when there are at least 20, plus the buffer', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
    // 20 rides near the pickup accepted 1..20 minutes before arriving (p90 = 18.1 min, rounded up to the second).
    const now = t.clock.nowMs();
    for (let i = 1; i <= 20; i++) {
      const id = crypto.randomUUID();
      const created = new Date(now - 60 * 60_000);
      await sql`insert into rides (id, status, customer_id, driver_id, vehicle_type, country_id, pickup_lat, pickup_lng,
                  destination_lat, destination_lng, created_at, updated_at, payment_method, commission_rate)
                values (${id}, 'COMPLETED', ${customer.id}, ${driver.id}, 'CAR', ${customer.countryId}, -1.2, 36.9,
                  -1.25, 36.95, ${created}, ${created}, 'CASH', 0)`.execute(t.db);
      await sql`insert into ride_status_history (ride_id, status, reason, actor_id, at) values
                  (${id}, 'ACCEPTED', null, ${driver.id}, ${new Date(now - 50 * 60_000)}),
                  (${id}, 'ARRIVED', null, ${driver.id}, ${new Date(now - 50 * 60_000 + i * 60_000)})`.execute(t.db);
    }
    const lead = await t.services.scheduling.leadFor('RIDE', -1.2001, 36.9001);
    assert.equal(lead.source, 'P90');
    assert.equal(lead.samples, 20);
    assert.equal(lead.p90Seconds, Math.ceil(18.1 * 60));
    assert.equal(lead.ms, Math.ceil(18.1 * 60) * 1000 + 5 * MIN);
    // Far away: no samples, the default.
    const elsewhere = await t.services.scheduling.leadFor('RIDE', 0.5, 38);
    assert.deepEqual([elsewhere.source, elsewhere.ms], ['DEFAULT', 25 * MIN]);
  });

  test('a scheduled package without a quote is priced when it enters dispatch; a quoted one keeps its price', async () => {
    const pickupWindow = windowOf(2 * 60 * MIN, 3 * 60 * MIN);
    const plain = (await createPackage({ pickupWindow })).json();
    const quote = (
      await post(t, '/api/quotes', await h(business), {
        kind: 'PACKAGE',
        pickup: { location: { lat: -1.2864, lng: 36.8172 } },
        dropoff: { location: { lat: -1.3, lng: 36.8 } },
        vehicleType: 'BIKE',
        countryId: business.countryId,
      })
    ).json();
    const quoted = (await createPackage({ pickupWindow, quoteId: quote.id })).json();
    assert.equal(quoted.price.amount, quote.amount);
    // The tariff doubles its base between booking and dispatch.
    const tariffUrl = `/api/admin/tariffs/${business.countryId}/BIKE`;
    const tariff = (await get(t, tariffUrl, await h(admin))).json();
    const put = await t.app.inject({
      method: 'PUT',
      url: tariffUrl,
      headers: await h(admin),
      payload: {
        base: tariff.base + 10_000,
        perKm: tariff.perKm,
        perMinute: tariff.perMinute,
        minimum: tariff.minimum,
        bookingFee: tariff.bookingFee,
        cancellationFee: tariff.cancellationFee,
      },
    });
    assert.equal(put.statusCode, 200, put.body);
    t.clock.set(Date.parse(pickupWindow.start) - 25 * MIN);
    assert.equal(await t.services.scheduling.wake(), 2);
    await t.services.dispatch.idle();
    const plainNow = (await get(t, `/api/packages/${plain.id}`, await h(business))).json();
    const quotedNow = (await get(t, `/api/packages/${quoted.id}`, await h(business))).json();
    assert.equal(plainNow.price.amount, plain.price.amount + 10_000);
    assert.equal(quotedNow.price.amount, quote.amount);
  });

  test('quotes take the same fields and answer pickupEta, dropoffEta and availability', async () => {
    const quote = async (extra: Record<string, unknown>, lat = -1.2864, lng = 36.8172) =>
      post(t, '/api/quotes', await h(business), {
        kind: 'PACKAGE',
        pickup: { location: { lat, lng } },
        dropoff: { location: { lat: lat - 0.0136, lng: lng - 0.0172 } },
        vehicleType: 'BIKE',
        countryId: business.countryId,
        ...extra,
      });
    const bad = await quote({ pickupWindow: windowOf(60 * MIN, 70 * MIN) });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /body\.pickupWindow must be at least 30 minutes/);

    // Far from any driver or job ever seen: BLOCK.
    const nowhere = (await quote({ pickupWindow: windowOf(60 * MIN, 120 * MIN) }, 3.5, 36.1)).json();
    assert.equal(nowhere.availability, 'BLOCK');
    // Where packages were taken by drivers this week: the pickup is the window's start, the drop-off the trip later.
    await sql`update packages set driver_id = ${admin.id} where business_id = ${business.id}`.execute(t.db);
    const pickupWindow = windowOf(60 * MIN, 120 * MIN);
    const ok = (await quote({ pickupWindow })).json();
    assert.notEqual(ok.availability, 'BLOCK');
    assert.equal(ok.pickupEta, pickupWindow.start);
    assert.equal(Date.parse(ok.dropoffEta) - Date.parse(ok.pickupEta), ok.durationSeconds * 1000);
    // A drop-off window ending before the trip (some 60 km by bike) can be done after the earliest pickup: BLOCK.
    const S = Date.parse(pickupWindow.start);
    const long = await post(t, '/api/quotes', await h(business), {
      kind: 'PACKAGE',
      pickup: { location: { lat: -1.2864, lng: 36.8172 } },
      dropoff: { location: { lat: -0.75, lng: 36.8172 } },
      vehicleType: 'BIKE',
      countryId: business.countryId,
      pickupWindow: { start: new Date(S).toISOString(), end: new Date(S + 30 * MIN).toISOString() },
      dropoffWindow: { start: new Date(S).toISOString(), end: new Date(S + 31 * MIN).toISOString() },
    });
    assert.equal(long.statusCode, 201, long.body);
    assert.ok(long.json().durationSeconds > 31 * 60);
    assert.equal(long.json().availability, 'BLOCK');
  });

  test('a scheduled ride searches until scheduledAt + 10m; its customer is told once at scheduledAt − 10m', async () => {
    const scheduledAt = at(2 * 60 * MIN);
    const res = await post(t, '/api/rides', await h(customer), rideBody(customer.countryId, { scheduledAt }));
    assert.equal(res.statusCode, 201, res.body);
    const ride = res.json();
    assert.equal(ride.scheduledAt, scheduledAt);
    assert.equal(ride.timeZone, 'Africa/Nairobi');
    assert.equal(ride.dispatch.state, 'SCHEDULED');
    const atMs = Date.parse(scheduledAt);

    const told = () => t.logLines.filter((l) => l.includes('"sms"') && l.includes('No driver has accepted')).length;
    t.clock.set(atMs - 10 * MIN - 1000);
    await t.services.scheduling.tick();
    assert.equal(told(), 0);
    t.clock.set(atMs - 10 * MIN);
    await t.services.scheduling.tick();
    await t.services.scheduling.tick();
    assert.equal(told(), 1, 'told once');
    const log = (await get(t, `/api/admin/dispatch/${ride.id}`, await h(admin))).json();
    assert.equal(log.scheduled.customerToldAt, new Date(atMs - 10 * MIN).toISOString());

    // Long past section 10's 5 minutes, still searching; expired only after scheduledAt + 10m.
    t.clock.set(atMs + 9 * MIN);
    assert.deepEqual(await t.services.rides.expireStale(), []);
    assert.equal((await get(t, `/api/rides/${ride.id}`, await h(customer))).json().status, 'REQUESTED');
    t.clock.set(atMs + 10 * MIN + 1000);
    assert.deepEqual(await t.services.rides.expireStale(), [ride.id]);
  });

  test('the notice is sent at most once: an instance that dies after sending it is not followed by a second', async () => {
    const scheduledAt = at(2 * 60 * MIN);
    const ride = (await post(t, '/api/rides', await h(customer), rideBody(customer.countryId, { scheduledAt }))).json();
    const atMs = Date.parse(scheduledAt);
    const toldOf = () =>
      t.logLines.filter(
        (l) => l.includes('"sms"') && l.includes('No driver has accepted') && l.includes(customer.phone),
      ).length;
    // Instance X (the same database and clock) sends the notice, then dies before doing anything else:
    // its sending never returns.
    const sentByX: string[] = [];
    const x = new SchedulingService({
      db: t.db,
      repo: new SchedulingRepository(t.db),
      clock: t.clock,
      logger: t.deps.logger,
      tellUnaccepted: (r) => {
        sentByX.push(r.jobId);
        return new Promise<void>(() => undefined);
      },
    } as Partial<SchedulingDeps> as SchedulingDeps);
    t.clock.set(atMs - 10 * MIN);
    void x.notifyUnaccepted();
    for (let i = 0; i < 50 && sentByX.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(sentByX, [ride.id]);
    // Long after any lease, the live instance's turns do not send it again.
    const before = toldOf();
    for (const later of [1, 2, 5]) {
      t.clock.set(atMs - 10 * MIN + later * MIN);
      await t.services.scheduling.tick();
    }
    assert.equal(toldOf(), before, 'not told a second time');
    const log = (await get(t, `/api/admin/dispatch/${ride.id}`, await h(admin))).json();
    assert.equal(log.scheduled.customerToldAt, new Date(atMs - 10 * MIN).toISOString());
  });

  test('a scheduled ride accepted long after its creation (before scheduledAt + 10m) is ACCEPTED, not EXPIRED', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR', availability: 'ONLINE' } });
    const scheduledAt = at(3 * 60 * MIN);
    const ride = (await post(t, '/api/rides', await h(customer), rideBody(customer.countryId, { scheduledAt }))).json();
    t.clock.set(Date.parse(scheduledAt) - 20 * MIN);
    await t.services.scheduling.wake();
    await t.services.dispatch.idle();
    const accepted = await post(t, `/api/rides/${ride.id}/accept`, await h(driver));
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().status, 'ACCEPTED');
  });
  test('a job booked for later is not open to drivers before it enters dispatch: 409 JOB_SCHEDULED on accept, nothing changed', async () => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'BIKE', availability: 'ONLINE' } });
    const pickupWindow = windowOf(3 * 60 * MIN, 4 * 60 * MIN);
    const pkg = (await createPackage({ pickupWindow })).json();
    assert.equal(pkg.dispatch.state, 'SCHEDULED');
    const refused = await post(t, `/api/packages/${pkg.id}/accept`, await h(driver));
    assert.equal(refused.statusCode, 409, refused.body);
    assert.equal(refused.json().code, 'JOB_SCHEDULED');
    const read = (await get(t, `/api/packages/${pkg.id}`, await h(business))).json();
    assert.deepEqual([read.status, read.dispatch.state, read.driver ?? null], ['PENDING', 'SCHEDULED', null]);
    const profile = await t.db
      .selectFrom('driver_profiles')
      .select('active_job_id')
      .where('user_id', '=', driver.id)
      .executeTakeFirstOrThrow();
    assert.equal(profile.active_job_id, null, 'the driver holds nothing');

    t.clock.set(Date.parse(pickupWindow.start) - 25 * MIN);
    assert.equal(await t.services.scheduling.wake(), 1);
    await t.services.dispatch.idle();
    const taken = await post(t, `/api/packages/${pkg.id}/accept`, await h(driver));
    assert.equal(taken.statusCode, 200, taken.body);
    assert.equal(taken.json().status, 'ASSIGNED');
  });
});
