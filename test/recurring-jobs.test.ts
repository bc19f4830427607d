// Recurring jobs end to end (contract section 22): the API, its 400/403/404s, materialisation
// RECURRING_HORIZON ahead exactly once (two instances on one database), pause, resume, skip, edit,
// delete, and the same local time across a daylight-saving change. Real database, manual clock.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { packageBody } from './packages-helpers.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** The local wall clock of an instant, by Intl (independent of the code under test). */
function wall(at: Date | string, timeZone: string): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  }).format(new Date(at));
}

const EVENING_RULE = 'FREQ=DAILY;BYHOUR=18;BYMINUTE=0;BYSECOND=0';

function template(countryId: string, overrides: Record<string, unknown> = {}) {
  return {
    ...packageBody(countryId),
    pickupWindow: { startOffset: 'PT0S', endOffset: 'PT1H' },
    dropoffWindow: { startOffset: 'PT13H', endOffset: 'PT14H' },
    ...overrides,
  };
}

describe('recurring jobs', () => {
  let a: TestApp;
  let b: TestApp;
  let business: TestUser;
  let other: TestUser;
  let customer: TestUser;
  let driver: TestUser;

  // Monday 2027-01-04 06:00Z: 09:00 in Nairobi, before the day's 18:00 occurrence.
  const START = new Date('2027-01-04T06:00:00Z');
  const env = { RECURRING_HORIZON: '7d' };

  before(async () => {
    a = await buildTestApp({ env });
    a.clock.set(START);
    b = await buildTestApp({ env, database: a.database, clock: a.clock });
    business = await createUser(a, { role: 'BUSINESS' });
    other = await createUser(a, { role: 'BUSINESS' });
    customer = await createUser(a, { role: 'CUSTOMER' });
    driver = await createUser(a, { role: 'DRIVER' });
  });
  beforeEach(() => a.clock.set(START));
  after(async () => {
    await b.close();
    await a.close();
  });

  /** The user's headers with a token of the test clock's now (the clock moves by days here). */
  async function headers(user: TestUser) {
    await a.db
      .updateTable('auth_sessions')
      .set({ expires_at: new Date('2030-01-01T00:00:00Z') })
      .where('id', '=', user.sessionId)
      .execute();
    const { token } = await a.tokens.signAccess({ userId: user.id, role: user.role, sessionId: user.sessionId });
    return { authorization: `Bearer ${token}` };
  }

  const call = async (
    t: TestApp,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    user: TestUser,
    payload?: object,
  ) => t.app.inject({ method, url, headers: await headers(user), ...(payload ? { payload } : {}) });

  async function occurrenceRows(jobId: string) {
    return a.db
      .selectFrom('recurring_occurrences as o')
      .leftJoin('packages as p', 'p.id', 'o.package_id')
      .select([
        'o.occurrence_local',
        'o.occurs_at',
        'o.state',
        'o.package_id',
        'o.pickup_start',
        'o.pickup_end',
        'o.dropoff_end',
        'p.status',
        'p.cancellation_fee',
      ])
      .where('o.recurring_job_id', '=', jobId)
      .orderBy('o.occurs_at')
      .execute();
  }

  async function create(user: TestUser, body: Record<string, unknown>) {
    const res = await call(a, 'POST', '/api/recurring-jobs', user, body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  test('only a business may use them; another business’s is a 404', async () => {
    const job = await create(business, { rule: EVENING_RULE, template: template(business.countryId) });
    for (const user of [customer, driver]) {
      assert.equal((await call(a, 'GET', '/api/recurring-jobs', user)).statusCode, 403);
      assert.equal(
        (await call(a, 'POST', '/api/recurring-jobs', user, { rule: EVENING_RULE, template: template(user.countryId) }))
          .statusCode,
        403,
      );
    }
    const base = `/api/recurring-jobs/${job.id}`;
    for (const [method, url, payload] of [
      ['GET', base],
      ['PATCH', base, { rule: 'FREQ=DAILY;BYHOUR=9' }],
      ['DELETE', base],
      ['POST', `${base}/pause`, {}],
      ['POST', `${base}/resume`],
      ['DELETE', `${base}/occurrences/2027-01-09`],
    ] as const) {
      const res = await call(a, method, url, other, payload);
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
      assert.equal(res.json().code, 'RECURRING_JOB_NOT_FOUND');
    }
    const list = (await call(a, 'GET', '/api/recurring-jobs', other)).json();
    assert.deepEqual(list.items, []);
    const deleted = await call(a, 'DELETE', base, business);
    assert.equal(deleted.statusCode, 204, deleted.body);
  });

  test('bad input is a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ rule: 'FREQ=SOMETIMES', template: template(business.countryId) }, /body\.rule/],
      [{ rule: 'FREQ=DAILY;BYHOUR=99', template: template(business.countryId) }, /body\.rule/],
      [
        { rule: 'FREQ=HOURLY;BYMINUTE=0,20,40', template: template(business.countryId) },
        /RECURRING_MAX_PER_DAY \(50\)/,
      ],
      [{ rule: EVENING_RULE, timeZone: 'Mars/Olympus', template: template(business.countryId) }, /body\.timeZone/],
      [
        {
          rule: EVENING_RULE,
          template: template(business.countryId, { pickupWindow: { startOffset: 'PT1H', endOffset: 'PT0S' } }),
        },
        /body\.template\.pickupWindow\.endOffset/,
      ],
      [
        {
          rule: EVENING_RULE,
          template: template(business.countryId, {
            pickup: { ...packageBody(business.countryId).pickup, contactPhone: '+254000' },
          }),
        },
        /body\.template\.pickup\.contactPhone/,
      ],
      [{ rule: 'FREQ=DAILY;COUNT=1;BYHOUR=1', template: template(business.countryId) }, /body\.rule/],
    ];
    for (const [body, field] of cases) {
      const res = await call(a, 'POST', '/api/recurring-jobs', business, body);
      assert.equal(res.statusCode, 400, `${JSON.stringify(body.rule)}: ${res.body}`);
      assert.match(res.json().message, field);
    }
    // None of them left a template or a package behind.
    const count = await a.db
      .selectFrom('recurring_jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_id', '=', business.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test('a daily 18:00 job: 7 days created at once with their windows, the next 10 shown, exactly once on two instances', async () => {
    const job = await create(business, { rule: EVENING_RULE, template: template(business.countryId) });
    assert.equal(job.timeZone, 'Africa/Nairobi'); // the business's country's
    assert.equal(job.state, 'ACTIVE');
    let rows = await occurrenceRows(job.id);
    assert.deepEqual(
      rows.map((r) => r.occurrence_local),
      ['04', '05', '06', '07', '08', '09', '10'].map((d) => `2027-01-${d}T18:00:00`),
    );
    for (const r of rows) {
      assert.equal(r.state, 'CREATED');
      assert.equal(r.status, 'PENDING');
      assert.equal(wall(r.occurs_at, 'Africa/Nairobi'), `${r.occurrence_local.slice(0, 10)} 18:00`);
      assert.equal(r.pickup_start!.getTime(), r.occurs_at.getTime());
      assert.equal(r.pickup_end!.getTime() - r.occurs_at.getTime(), HOUR);
      assert.equal(r.dropoff_end!.getTime() - r.occurs_at.getTime(), 14 * HOUR); // 08:00 next day
    }

    const read = (await call(a, 'GET', `/api/recurring-jobs/${job.id}`, business)).json();
    assert.equal(read.nextOccurrences.length, 10);
    assert.deepEqual(
      read.nextOccurrences.map((o: { state: string }) => o.state),
      [...Array(7).fill('CREATED'), 'UPCOMING', 'UPCOMING', 'UPCOMING'],
    );
    assert.equal(read.nextOccurrences[0].packageId, rows[0].package_id);
    assert.equal(read.nextOccurrences[9].date, '2027-01-13T18:00:00');
    assert.equal(read.nextOccurrences[9].dropoffWindow.end, '2027-01-14T05:00:00.000Z');

    // Three days on, both instances materialise at once, twice each: the 3 new days, once each.
    a.clock.advance(3 * DAY);
    await Promise.all([
      a.services.recurring.materialise(),
      b.services.recurring.materialise(),
      a.services.recurring.materialise(),
      b.services.recurring.materialise(),
    ]);
    rows = await occurrenceRows(job.id);
    assert.equal(rows.length, 10);
    assert.equal(new Set(rows.map((r) => r.package_id)).size, 10);
    const packages = await a.db
      .selectFrom('packages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_id', '=', business.id)
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    assert.equal(Number(packages.n), 10);
    // A restart (a new turn, same clock) creates nothing more.
    await b.services.recurring.materialise();
    assert.equal((await occurrenceRows(job.id)).length, 10);

    // Deleting cancels its PENDING packages still to come (not the 3 whose time has passed) and forgets it.
    assert.equal((await call(a, 'DELETE', `/api/recurring-jobs/${job.id}`, business)).statusCode, 204);
    assert.equal((await call(a, 'GET', `/api/recurring-jobs/${job.id}`, business)).statusCode, 404);
    const left = await a.db
      .selectFrom('packages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_id', '=', business.id)
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 3);
    a.clock.set(START);
  });

  test('a week’s pause cancels exactly 7 of a daily rule, free; resume creates them again', async () => {
    const owner = await createUser(a, { role: 'BUSINESS' });
    // A 14-day horizon on this instance: the pause's week and the week after exist as packages.
    const c = await buildTestApp({ env: { RECURRING_HORIZON: '14d' }, database: a.database, clock: a.clock });
    try {
      const res = await c.app.inject({
        method: 'POST',
        url: '/api/recurring-jobs',
        headers: await headers(owner),
        payload: { rule: EVENING_RULE, template: template(owner.countryId) },
      });
      assert.equal(res.statusCode, 201, res.body);
      const job = res.json();
      assert.equal((await occurrenceRows(job.id)).length, 14);

      const until = new Date(START.getTime() + 7 * DAY).toISOString();
      const paused = await c.app.inject({
        method: 'POST',
        url: `/api/recurring-jobs/${job.id}/pause`,
        headers: await headers(owner),
        payload: { until },
      });
      assert.equal(paused.statusCode, 200, paused.body);
      assert.equal(paused.json().cancelled, 7);
      assert.equal(paused.json().state, 'PAUSED');
      assert.equal(paused.json().pausedUntil, until);
      let rows = await occurrenceRows(job.id);
      assert.deepEqual(
        rows.map((r) => [r.state, r.status]),
        [...Array(7).fill(['PAUSED', 'CANCELLED']), ...Array(7).fill(['CREATED', 'PENDING'])],
      );
      assert.ok(
        rows.slice(0, 7).every((r) => !r.cancellation_fee),
        'no cancellation fee',
      );

      // While paused, a later turn creates nothing inside the pause; after it, the days past the horizon.
      a.clock.advance(2 * DAY);
      await c.services.recurring.materialise();
      rows = await occurrenceRows(job.id);
      assert.equal(rows.length, 16);
      assert.equal(rows.filter((r) => r.status === 'PENDING').length, 9);

      // Indefinitely: the rest is cancelled; resume brings back every one still to come.
      const stop = await c.app.inject({
        method: 'POST',
        url: `/api/recurring-jobs/${job.id}/pause`,
        headers: await headers(owner),
        payload: {},
      });
      assert.equal(stop.json().cancelled, 9);
      a.clock.advance(DAY);
      await c.services.recurring.materialise();
      assert.equal((await occurrenceRows(job.id)).length, 16);
      a.clock.advance(-DAY);
      const resumed = await c.app.inject({
        method: 'POST',
        url: `/api/recurring-jobs/${job.id}/resume`,
        headers: await headers(owner),
      });
      assert.equal(resumed.statusCode, 200, resumed.body);
      assert.equal(resumed.json().state, 'ACTIVE');
      rows = await occurrenceRows(job.id);
      // From 2027-01-06T06:00Z on: the 6th to the 19th, 14 PENDING packages again.
      const pending = rows.filter((r) => r.status === 'PENDING');
      assert.equal(pending.length, 14);
      assert.equal(pending[0].occurrence_local, '2027-01-06T18:00:00');
      assert.equal(new Set(pending.map((r) => r.occurrence_local)).size, 14);
    } finally {
      await c.close();
      a.clock.set(START);
    }
  });

  test('skip one: its PENDING package is cancelled; a later one is never created; past or absent ones are refused', async () => {
    const owner = await createUser(a, { role: 'BUSINESS' });
    const job = await create(owner, { rule: EVENING_RULE, template: template(owner.countryId) });
    const base = `/api/recurring-jobs/${job.id}/occurrences`;
    const skipped = await call(a, 'DELETE', `${base}/2027-01-06`, owner);
    assert.equal(skipped.statusCode, 200, skipped.body);
    assert.deepEqual(
      skipped.json().skipped.map((o: { date: string }) => o.date),
      ['2027-01-06T18:00:00'],
    );
    const again = await call(a, 'DELETE', `${base}/2027-01-06T18:00`, owner);
    assert.equal(again.statusCode, 200, 'skipping twice is fine');
    assert.equal((await call(a, 'DELETE', `${base}/2027-01-20T18:00:00`, owner)).statusCode, 200);
    assert.equal((await call(a, 'DELETE', `${base}/2027-01-07T10:00`, owner)).json().code, 'OCCURRENCE_NOT_FOUND');
    assert.equal((await call(a, 'DELETE', `${base}/2027-01-03`, owner)).json().code, 'OCCURRENCE_NOT_FOUND');
    assert.equal((await call(a, 'DELETE', `${base}/not-a-date`, owner)).statusCode, 400);
    a.clock.advance(DAY);
    assert.equal((await call(a, 'DELETE', `${base}/2027-01-04`, owner)).json().code, 'OCCURRENCE_PAST');

    a.clock.advance(13 * DAY);
    await a.services.recurring.materialise();
    const rows = await occurrenceRows(job.id);
    const byDate = new Map(rows.map((r) => [r.occurrence_local.slice(0, 10), r]));
    assert.equal(byDate.get('2027-01-06')!.state, 'SKIPPED');
    assert.equal(byDate.get('2027-01-06')!.status, 'CANCELLED');
    assert.equal(byDate.get('2027-01-20')!.state, 'SKIPPED');
    assert.equal(byDate.get('2027-01-20')!.package_id, null);
    assert.equal(byDate.get('2027-01-21')!.status, 'PENDING');
    a.clock.set(START);
    await call(a, 'DELETE', `/api/recurring-jobs/${job.id}`, owner);
  });

  test('pause, skip, edit and delete send delivery.cancelled only for occurrences that entered dispatch', async () => {
    const owner = await createUser(a, { role: 'BUSINESS' });
    // An endpoint of the business subscribed to every event: each event it is sent is an outbox row.
    await sql`insert into webhook_endpoints (id, business_id, url, events, enabled, secret, created_at, updated_at)
      values (${randomUUID()}, ${owner.id}, 'https://example.com/hook',
        array['delivery.assigned','delivery.picked_up','delivery.in_transit','delivery.delivered','delivery.failed','delivery.cancelled'],
        true, 'whsec_test', now(), now())`.execute(a.db);
    const sent = async () =>
      (
        await sql<{ delivery_id: string; event: string }>`select d.delivery_id, d.event from webhook_deliveries d
          join packages p on p.id::text = d.delivery_id where p.business_id = ${owner.id} order by d.seq`.execute(a.db)
      ).rows.map((r) => [r.delivery_id, r.event]);
    const job = await create(owner, { rule: EVENING_RULE, template: template(owner.countryId) });
    const base = `/api/recurring-jobs/${job.id}`;
    assert.equal((await occurrenceRows(job.id)).length, 7);

    // Skip: the 6th's package, booked for later and never dispatched, is cancelled without an event.
    assert.equal((await call(a, 'DELETE', `${base}/occurrences/2027-01-06`, owner)).statusCode, 200);
    // Today's 18:00 (15:00Z) enters dispatch at 15:00Z − 25m; the others still wait.
    a.clock.set(new Date('2027-01-04T14:40:00Z'));
    await a.services.scheduling.wake();
    await a.services.dispatch.idle();
    const today = (await occurrenceRows(job.id)).find((r) => r.occurrence_local === '2027-01-04T18:00:00')!;
    // Pause: the 5 others cancelled quietly; today's, offered to drivers already, with its event.
    const paused = await call(a, 'POST', `${base}/pause`, owner, {});
    assert.equal(paused.json().cancelled, 6, paused.body);
    assert.deepEqual(await sent(), [[today.package_id, 'delivery.cancelled']]);

    // Resume makes them again; an edit cancels those (never dispatched) and makes new ones; delete cancels those.
    assert.equal((await call(a, 'POST', `${base}/resume`, owner)).statusCode, 200);
    const patched = await call(a, 'PATCH', base, owner, { rule: 'FREQ=DAILY;BYHOUR=19;BYMINUTE=0' });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal((await call(a, 'DELETE', base, owner)).statusCode, 204);
    const made = await a.db
      .selectFrom('packages')
      .select(['id', 'status'])
      .where('business_id', '=', owner.id)
      .execute();
    assert.ok(made.length >= 19, `packages made and cancelled: ${made.length}`);
    assert.ok(made.every((r) => r.status === 'CANCELLED'));
    assert.deepEqual(await sent(), [[today.package_id, 'delivery.cancelled']], 'no other event');
  });

  test('an edit applies to occurrences not created yet; the list pages', async () => {
    const owner = await createUser(a, { role: 'BUSINESS' });
    const job = await create(owner, { rule: EVENING_RULE, template: template(owner.countryId) });
    const patched = await call(a, 'PATCH', `/api/recurring-jobs/${job.id}`, owner, {
      rule: 'FREQ=DAILY;BYHOUR=9;BYMINUTE=30',
    });
    assert.equal(patched.statusCode, 200, patched.body);
    const next = patched.json().nextOccurrences as { date: string; state: string }[];
    // 09:00 in Nairobi now: today's 09:30 is the first; the 18:00 packages (PENDING) are cancelled and
    // 09:30 ones made instead, the horizon's 7.
    assert.equal(next[0].date, '2027-01-04T09:30:00');
    assert.ok(next.every((o) => o.date.endsWith('T09:30:00')));
    assert.deepEqual(
      next.map((o) => o.state),
      [...Array(7).fill('CREATED'), 'UPCOMING', 'UPCOMING', 'UPCOMING'],
    );
    const rows = await occurrenceRows(job.id);
    assert.deepEqual(
      rows.map((r) => [r.occurrence_local.slice(11), r.status]),
      Array(7).fill(['09:30:00', 'PENDING']),
    );
    const cancelled = await a.db
      .selectFrom('packages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_id', '=', owner.id)
      .where('status', '=', 'CANCELLED')
      .executeTakeFirstOrThrow();
    assert.equal(Number(cancelled.n), 7);
    assert.equal((await call(a, 'PATCH', `/api/recurring-jobs/${job.id}`, owner, {})).statusCode, 400);

    a.clock.advance(60_000);
    await create(owner, { rule: EVENING_RULE, template: template(owner.countryId) });
    const page = (await call(a, 'GET', '/api/recurring-jobs?limit=1', owner)).json();
    assert.equal(page.items.length, 1);
    assert.ok(page.nextCursor);
    const page2 = (await call(a, 'GET', `/api/recurring-jobs?limit=1&cursor=${page.nextCursor}`, owner)).json();
    assert.equal(page2.items[0].id, job.id);
  });

  test('Europe/London across the March change: 18:00 local before and after', async () => {
    const owner = await createUser(a, { role: 'BUSINESS' });
    a.clock.set(new Date('2027-03-24T12:00:00Z'));
    try {
      // A Kenyan business whose rule is in London's zone (a job may name its own zone).
      const job = await create(owner, {
        rule: EVENING_RULE,
        timeZone: 'Europe/London',
        template: template(owner.countryId),
      });
      assert.equal(job.timeZone, 'Europe/London');
      const rows = await occurrenceRows(job.id);
      assert.equal(rows.length, 7);
      for (const r of rows)
        assert.equal(wall(r.occurs_at, 'Europe/London'), `${r.occurrence_local.slice(0, 10)} 18:00`);
      assert.deepEqual(
        rows.map((r) => r.occurs_at.getUTCHours()),
        [18, 18, 18, 18, 17, 17, 17],
      );
      // The drop-off the night the clocks go forward is still 08:00 local: 13 hours later, not 14.
      const night = rows.find((r) => r.occurrence_local.startsWith('2027-03-27'))!;
      assert.equal(wall(night.dropoff_end!, 'Europe/London'), '2027-03-28 08:00');
      assert.equal(night.dropoff_end!.getTime() - night.occurs_at.getTime(), 13 * HOUR);
    } finally {
      a.clock.set(START);
    }
  });
});
