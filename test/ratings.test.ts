// Ratings and tips (contract section 20) through HTTP: who may rate or tip which job and when, once
// per side and job even under concurrency, the average over the last 500, who sees comments, tips
// booked in the ledger in their own transaction, and cancellationFeeNow.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DispatchRepository } from '../src/modules/dispatch/dispatch.repository.js';
import { sourceKeys } from '../src/modules/ledger/postings.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody } from './packages-helpers.js';

/** The seeded Kenyan tariffs' cancellation fees (KES cents). */
const KE_CAR_CANCELLATION_FEE = 10_000;

const error = (statusCode: number, code: string, message: string) => ({
  statusCode,
  error: { 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict' }[statusCode],
  code,
  message,
});

describe('ratings and tips', () => {
  let t: TestApp;
  let customer: TestUser;
  let otherCustomer: TestUser;
  let business: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let driver: TestUser;
  let otherDriver: TestUser;
  let bikeDriver: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    customer = await createUser(t, { role: 'CUSTOMER' });
    otherCustomer = await createUser(t, { role: 'CUSTOMER' });
    business = await createUser(t, { role: 'BUSINESS' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    driver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'CAR', companyId: company.id },
    });
    otherDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'CAR', companyId: otherCompany.id },
    });
    bikeDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'BIKE', companyId: company.id },
    });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const step = async (path: string, by: TestUser, body?: unknown) => {
    const res = await post(t, path, by.headers, body);
    assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
    return res.json();
  };
  /** A ride of `by` taken by `drv` up to `until` (COMPLETED by default). */
  const ride = async (by: TestUser = customer, drv: TestUser = driver, until = 'COMPLETED') => {
    const created = await post(t, '/api/rides', by.headers, rideBody(by.countryId));
    assert.equal(created.statusCode, 201, created.body);
    const id: string = created.json().id;
    for (const [action, status] of [
      ['accept', 'ACCEPTED'],
      ['arrive', 'ARRIVED'],
      ['start', 'IN_PROGRESS'],
      ['complete', 'COMPLETED'],
    ]) {
      if (until === 'REQUESTED') break;
      await step(`/api/rides/${id}/${action}`, drv);
      if (status === until) break;
    }
    return id;
  };
  const pkg = async (by: TestUser = business, until = 'DELIVERED', overrides: Record<string, unknown> = {}) => {
    const created = await post(t, '/api/packages', by.headers, packageBody(by.countryId, overrides));
    assert.equal(created.statusCode, 201, created.body);
    const id: string = created.json().id;
    for (const [action, status] of [
      ['accept', 'ASSIGNED'],
      ['pickup', 'PICKED_UP'],
      ['start', 'IN_TRANSIT'],
      ['deliver', 'DELIVERED'],
    ]) {
      if (until === 'PENDING') break;
      await step(`/api/packages/${id}/${action}`, bikeDriver);
      if (status === until) break;
    }
    return id;
  };
  const rate = (kind: 'rides' | 'packages', id: string, by: TestUser, body: unknown = { stars: 5 }) =>
    post(t, `/api/${kind}/${id}/rating`, by.headers, body);
  const tip = (kind: 'rides' | 'packages', id: string, by: TestUser, amount: number) =>
    post(t, `/api/${kind}/${id}/tip`, by.headers, { amount });
  const rideNotFound = error(404, 'RIDE_NOT_FOUND', 'Ride not found');
  const packageNotFound = error(404, 'PACKAGE_NOT_FOUND', 'Package not found');

  test('a ride: the customer rates the driver and the driver the customer, once each; the driver summary carries the rating', async () => {
    const id = await ride();
    const before = (await get(t, `/api/rides/${id}`, customer.headers)).json();
    assert.equal(before.driver.rating, null);
    assert.equal(before.driver.ratingCount, 0);

    const res = await rate('rides', id, customer, { stars: 4, comment: 'Smooth\ntrip' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(
      { ...body, id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        jobType: 'RIDE',
        jobId: id,
        side: 'CREATOR',
        ratedId: driver.id,
        stars: 4,
        comment: 'Smooth\ntrip',
      },
    );
    assert.deepEqual(
      (await rate('rides', id, customer, { stars: 5 })).json(),
      error(409, 'ALREADY_RATED', 'You rated this ride already'),
    );

    const byDriver = await rate('rides', id, driver, { stars: 3 });
    assert.equal(byDriver.statusCode, 201, byDriver.body);
    assert.equal(byDriver.json().ratedId, customer.id);
    assert.equal(byDriver.json().side, 'DRIVER');
    assert.equal((await rate('rides', id, driver)).statusCode, 409);

    const shown = (await get(t, `/api/rides/${id}`, customer.headers)).json();
    assert.equal(shown.driver.rating, 4);
    assert.equal(shown.driver.ratingCount, 1);
    const profile = (await get(t, '/api/drivers/me', driver.headers)).json();
    assert.equal(profile.rating, 4);
    // The customer's own rating reaches the driver's offers.
    const job = await new DispatchRepository(t.db).loadJob('RIDE', id);
    assert.equal(job?.customerRating, 3);
  });

  test('only the parties rate: anyone else gets the 404 of a ride they cannot see', async () => {
    const id = await ride();
    assert.deepEqual((await rate('rides', id, otherCustomer)).json(), rideNotFound);
    assert.deepEqual((await rate('rides', id, otherDriver)).json(), rideNotFound);
    assert.deepEqual((await rate('rides', randomUUID(), customer)).json(), rideNotFound);
    assert.equal((await rate('rides', id, company)).statusCode, 403);
    assert.equal((await rate('rides', id, admin)).statusCode, 403);
    const pkgId = await pkg(business, 'DELIVERED', { customerId: customer.id });
    // The customer a business's package names is not its creator: not a party to rate it.
    assert.deepEqual((await rate('packages', pkgId, customer)).json(), packageNotFound);
    assert.deepEqual((await rate('packages', pkgId, driver)).json(), packageNotFound);
    assert.equal((await rate('packages', pkgId, business, { stars: 2 })).statusCode, 201);
    const byDriver = await rate('packages', pkgId, bikeDriver, { stars: 5 });
    assert.equal(byDriver.statusCode, 201);
    assert.equal(byDriver.json().ratedId, business.id);
  });

  /** Moves a job's final status back in time by `ms` (the clock stays: tokens keep working). */
  const finishedAgo = async (kind: 'rides' | 'packages', id: string, ms: number) => {
    const at = new Date(t.clock.nowMs() - ms);
    if (kind === 'packages') await t.db.updateTable('packages').set({ finished_at: at }).where('id', '=', id).execute();
    else
      await t.db
        .updateTable('ride_status_history')
        .set({ at })
        .where('ride_id', '=', id)
        .where('status', '=', 'COMPLETED')
        .execute();
  };

  test('only after COMPLETED or DELIVERED, and within 7 days of it', async () => {
    const started = await ride(customer, driver, 'IN_PROGRESS');
    assert.deepEqual(
      (await rate('rides', started, customer)).json(),
      error(409, 'JOB_NOT_COMPLETED', 'Only a COMPLETED ride can be rated or tipped (this one is IN_PROGRESS)'),
    );
    await step(`/api/rides/${started}/complete`, driver);
    const cancelled = await pkg(business, 'PENDING');
    await step(`/api/packages/${cancelled}/cancel`, business);
    assert.deepEqual(
      (await rate('packages', cancelled, business)).json(),
      error(409, 'JOB_NOT_COMPLETED', 'Only a DELIVERED package can be rated or tipped (this one is CANCELLED)'),
    );

    const day = 24 * 3600_000;
    await finishedAgo('rides', started, 7 * day);
    assert.equal((await rate('rides', started, customer)).statusCode, 201, 'exactly 7 days: still open');
    const late = await ride();
    await finishedAgo('rides', late, 7 * day + 1000);
    assert.deepEqual(
      (await rate('rides', late, customer)).json(),
      error(409, 'RATING_CLOSED', 'Ratings close 7 days after the job ends'),
    );
    assert.deepEqual(
      (await rate('rides', late, driver)).json(),
      error(409, 'RATING_CLOSED', 'Ratings close 7 days after the job ends'),
    );
    const latePackage = await pkg();
    await finishedAgo('packages', latePackage, 8 * day);
    assert.equal((await rate('packages', latePackage, business)).json().code, 'RATING_CLOSED');
  });

  test('stars are a whole number from 1 to 5 and a comment at most 500 characters', async () => {
    const id = await ride();
    for (const body of [
      { stars: 0 },
      { stars: 6 },
      { stars: 4.5 },
      { stars: '5' },
      {},
      { stars: 5, comment: 'x'.repeat(501) },
      { stars: 5, comment: 'a\u0007b' },
      { stars: 5, extra: 1 },
    ]) {
      const res = await rate('rides', id, customer, body);
      assert.equal(res.statusCode, 400, JSON.stringify(body));
    }
    assert.equal((await rate('rides', id, customer, { stars: 5, comment: 'x'.repeat(500) })).statusCode, 201);
  });

  test('concurrent duplicates: exactly one rating lands', async () => {
    const id = await ride();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => rate('rides', id, customer, { stars: 1 + (i % 5) })),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409, 409]);
    const rows = await t.db.selectFrom('ratings').select('stars').where('job_id', '=', id).execute();
    assert.equal(rows.length, 1);
    // Ratings of one party from many jobs at once all count.
    const fresh = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const jobs = [];
    for (let i = 0; i < 4; i++) jobs.push(await ride(customer, fresh));
    const many = await Promise.all(jobs.map((j, i) => rate('rides', j, customer, { stars: i + 1 })));
    assert.deepEqual(
      many.map((r) => r.statusCode),
      [201, 201, 201, 201],
    );
    const summary = await t.db
      .selectFrom('driver_profiles')
      .select(['rating', 'rating_count'])
      .where('user_id', '=', fresh.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(summary, { rating: 2.5, rating_count: 4 });
  });

  test('the average is over the last 500 ratings, one decimal; the count is of all', async () => {
    const rated = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    // 100 old one-star ratings, then 499 four-star ones (one a second), then one five-star rating through the API.
    const start = t.clock.nowMs() - 3600_000;
    await sql`
      insert into ratings (id, job_type, job_id, rater_side, rater_id, rated_id, driver_id, stars, comment, created_at)
      select gen_random_uuid(), 'RIDE', gen_random_uuid(), 'CREATOR', ${customer.id}, ${rated.id}, ${rated.id},
             case when n <= 100 then 1 else 4 end, null, ${new Date(start)}::timestamptz + n * interval '1 second'
      from generate_series(1, 599) n`.execute(t.db);
    await sql`insert into rating_summaries (user_id, average_tenths, rating_count, updated_at) values (${rated.id}, 35, 599, now())`.execute(
      t.db,
    );
    const id = await ride(customer, rated);
    assert.equal((await rate('rides', id, customer, { stars: 5 })).statusCode, 201);
    const shown = (await get(t, `/api/rides/${id}`, customer.headers)).json();
    // Last 500: 499 × 4 + 5 = 2001 → 4.002 → 4.0 (all 600 would give 3.5).
    assert.equal(shown.driver.rating, 4);
    assert.equal(shown.driver.ratingCount, 600);
  });

  test('comments: admins and their author see them; the company of the rated driver sees stars only', async () => {
    const id = await pkg(business);
    assert.equal((await rate('packages', id, business, { stars: 2, comment: 'Late and rude' })).statusCode, 201);
    const mine = (await get(t, '/api/businesses/me/ratings', business.headers)).json();
    const given = mine.items.find((r: { jobId: string }) => r.jobId === id);
    assert.equal(given.comment, 'Late and rude');
    assert.equal(given.raterRole, 'BUSINESS');
    assert.equal(given.ratedId, bikeDriver.id);

    const all = (await get(t, `/api/admin/ratings?driverId=${bikeDriver.id}&limit=100`, admin.headers)).json();
    assert.equal(all.items.find((r: { jobId: string }) => r.jobId === id).comment, 'Late and rude');
    assert.ok(all.items.every((r: { driverId: string }) => r.driverId === bikeDriver.id));

    const companyView = (await get(t, '/api/companies/me/ratings?limit=100', company.headers)).json();
    const seen = companyView.items.find((r: { jobId: string }) => r.jobId === id);
    assert.equal(seen.stars, 2);
    assert.equal('comment' in seen, false);
    assert.equal(
      (await get(t, '/api/companies/me/ratings', otherCompany.headers))
        .json()
        .items.some((r: { jobId: string }) => r.jobId === id),
      false,
    );
    // The rated driver sees its stars (the average on its jobs), not the comment: no list for it.
    assert.equal((await get(t, '/api/admin/ratings', bikeDriver.headers)).statusCode, 403);
    assert.equal((await get(t, '/api/businesses/me/ratings', bikeDriver.headers)).statusCode, 403);

    // Pagination like other lists.
    const page1 = (await get(t, '/api/admin/ratings?limit=2', admin.headers)).json();
    assert.equal(page1.items.length, 2);
    const page2 = (await get(t, `/api/admin/ratings?limit=2&cursor=${page1.nextCursor}`, admin.headers)).json();
    assert.notEqual(page2.items[0].id, page1.items[1].id);
  });

  test("GET /drivers/me/ratings: side=received shows stars only (no comment, no rater), side=given the driver's own comments; paginated", async () => {
    const me = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    const ids = [await ride(customer, me), await ride(otherCustomer, me), await ride(customer, me)];
    for (const [i, id] of ids.entries()) {
      assert.equal(
        (await rate('rides', id, i === 1 ? otherCustomer : customer, { stars: i + 2, comment: `Secret ${i}` }))
          .statusCode,
        201,
      );
      t.clock.advance(1000);
    }
    assert.equal((await rate('rides', ids[0]!, me, { stars: 5, comment: 'Friendly' })).statusCode, 201);
    // Someone else's ratings are not in the driver's lists.
    const theirs = await ride(customer, driver);
    assert.equal((await rate('rides', theirs, customer, { stars: 1 })).statusCode, 201);

    const received = await get(t, '/api/drivers/me/ratings?side=received&limit=2', me.headers);
    assert.equal(received.statusCode, 200, received.body);
    const page1 = received.json();
    assert.deepEqual(
      page1.items.map((r: { stars: number }) => r.stars),
      [4, 3],
      'newest first',
    );
    for (const item of page1.items)
      assert.deepEqual(Object.keys(item).sort(), ['createdAt', 'id', 'jobId', 'jobType', 'side', 'stars']);
    assert.equal(received.body.includes('Secret'), false);
    assert.equal(received.body.includes(customer.id), false);
    const page2 = (
      await get(t, `/api/drivers/me/ratings?side=received&limit=2&cursor=${page1.nextCursor}`, me.headers)
    ).json();
    assert.deepEqual(
      page2.items.map((r: { stars: number }) => r.stars),
      [2],
    );
    assert.equal(page2.nextCursor, null);

    const given = (await get(t, '/api/drivers/me/ratings?side=given', me.headers)).json();
    assert.equal(given.items.length, 1);
    assert.deepEqual(
      { ...given.items[0], id: undefined, createdAt: undefined },
      {
        id: undefined,
        createdAt: undefined,
        jobType: 'RIDE',
        jobId: ids[0],
        side: 'DRIVER',
        stars: 5,
        comment: 'Friendly',
      },
    );

    assert.equal((await get(t, '/api/drivers/me/ratings', me.headers)).statusCode, 400);
    assert.equal((await get(t, '/api/drivers/me/ratings?side=all', me.headers)).json().error, 'Bad Request');
    assert.equal((await get(t, '/api/drivers/me/ratings?side=received', customer.headers)).statusCode, 403);
  });

  test('alerts: drivers below RATING_ALERT_BELOW with at least 20 ratings', async () => {
    const low = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
    const fewRatings = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
    const fine = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'CAR' } });
    for (const [user, tenths, count] of [
      [low, 31, 20],
      [fewRatings, 20, 19],
      [fine, 40, 50],
    ] as const) {
      await sql`insert into rating_summaries (user_id, average_tenths, rating_count, updated_at) values (${user.id}, ${tenths}, ${count}, now())`.execute(
        t.db,
      );
    }
    const alerts = (await get(t, '/api/admin/ratings/alerts', admin.headers)).json();
    assert.equal(alerts.threshold, 4);
    assert.equal(alerts.minimumRatings, 20);
    const ids = alerts.items.map((a: { driverId: string }) => a.driverId);
    assert.ok(ids.includes(low.id));
    assert.ok(!ids.includes(fewRatings.id));
    assert.ok(!ids.includes(fine.id));
    assert.deepEqual(alerts.items.find((a: { driverId: string }) => a.driverId === low.id).rating, 3.1);
    assert.equal((await get(t, '/api/admin/ratings/alerts', company.headers)).statusCode, 403);
  });

  const ledgerOf = async (id: string, jobType: 'RIDE' | 'PACKAGE') => {
    const rows = await sql<{ kind: string; party_id: string | null; amount: string | number; code: string }>`
      select a.kind, a.party_id, e.amount, e.code from ledger_transactions tx
      join ledger_entries e on e.transaction_id = tx.id join ledger_accounts a on a.id = e.account_id
      where tx.source_key = ${sourceKeys.tip(jobType, id)} order by e.amount`.execute(t.db);
    return rows.rows.map((r) => ({ ...r, amount: Number(r.amount) }));
  };
  const trialBalanceIsZero = async () => {
    for (const row of await t.services.ledger.trialBalance())
      assert.equal(row.total, 0, `${row.currency} sums to ${row.total}`);
  };

  test("tips: the customer tips its ride once (cash: the driver's account charged and credited); the job shows it to its parties", async () => {
    const id = await ride();
    const price = (await get(t, `/api/rides/${id}`, customer.headers)).json().price;
    const amount = Math.floor(price.amount / 4);
    const res = await tip('rides', id, customer, amount);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      { ...(res.json() as object), createdAt: undefined },
      { jobType: 'RIDE', jobId: id, amount, currency: price.currency, paymentMethod: 'CASH', createdAt: undefined },
    );
    assert.deepEqual(
      (await tip('rides', id, customer, 1)).json(),
      error(409, 'ALREADY_TIPPED', 'You tipped this ride already'),
    );

    const entries = await ledgerOf(id, 'RIDE');
    assert.deepEqual(entries, [
      { kind: 'DRIVER', party_id: driver.id, amount: -amount, code: 'CASH_COLLECTED' },
      { kind: 'DRIVER', party_id: driver.id, amount, code: 'TIP' },
    ]);
    await trialBalanceIsZero();

    for (const viewer of [customer, driver, company, admin]) {
      assert.deepEqual(
        (await get(t, `/api/rides/${id}`, viewer.headers)).json().tip,
        { amount, currency: price.currency },
        viewer.role,
      );
    }
    const listed = (await get(t, '/api/rides?limit=100', customer.headers))
      .json()
      .items.find((r: { id: string }) => r.id === id);
    assert.deepEqual(listed.tip, { amount, currency: price.currency });
  });

  test('tips: only the creator, within 24 h, at most TIP_MAX_SHARE of the price, a whole number of minor units', async () => {
    const id = await ride();
    const price = (await get(t, `/api/rides/${id}`, customer.headers)).json().price.amount as number;
    assert.deepEqual((await tip('rides', id, otherCustomer, 100)).json(), rideNotFound);
    // Drivers and companies do not tip (the role check).
    assert.equal((await tip('rides', id, driver, 100)).statusCode, 403);
    assert.equal((await tip('rides', id, company, 100)).statusCode, 403);
    const cap = Math.floor(price / 2);
    assert.deepEqual(
      (await tip('rides', id, customer, cap + 1)).json(),
      error(400, 'TIP_TOO_LARGE', `A tip may be at most 50% of the price: ${cap} KES minor units`),
    );
    for (const amount of [0, -5, 1.5, '100'])
      assert.equal(
        (await post(t, `/api/rides/${id}/tip`, customer.headers, { amount })).statusCode,
        400,
        String(amount),
      );
    await finishedAgo('rides', id, 24 * 3600_000 + 1000);
    assert.deepEqual(
      (await tip('rides', id, customer, 100)).json(),
      error(409, 'TIP_CLOSED', 'Tips close 24 hours after the job ends'),
    );
    assert.deepEqual(await ledgerOf(id, 'RIDE'), []);

    const open = await ride(customer, driver, 'IN_PROGRESS');
    assert.equal((await tip('rides', open, customer, 100)).json().code, 'JOB_NOT_COMPLETED');
    await step(`/api/rides/${open}/complete`, driver);
    assert.equal((await tip('rides', open, customer, cap)).statusCode, 201, 'the cap itself is allowed');
  });

  test('tips: concurrent duplicates book once', async () => {
    const id = await ride();
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => tip('rides', id, customer, 100 + i)));
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409]);
    const entries = await ledgerOf(id, 'RIDE');
    assert.equal(entries.length, 2);
    const won = results.find((r) => r.statusCode === 201)!.json().amount;
    assert.equal(entries[1]!.amount, won);
    await trialBalanceIsZero();
  });

  test("tips: a business's package on ACCOUNT (the business charged, the driver credited); who sees it on the package", async () => {
    const id = await pkg(business, 'DELIVERED', { customerId: customer.id });
    const driverBefore = await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: bikeDriver.id });
    const businessBefore = await t.services.ledger.balance('KES', { kind: 'BUSINESS', partyId: business.id });
    const res = await tip('packages', id, business, 500);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().paymentMethod, 'ACCOUNT');
    assert.equal(
      await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: bikeDriver.id }),
      driverBefore + 500,
    );
    assert.equal(
      await t.services.ledger.balance('KES', { kind: 'BUSINESS', partyId: business.id }),
      businessBefore - 500,
    );
    await trialBalanceIsZero();

    for (const viewer of [business, bikeDriver, company, admin]) {
      const body = (await get(t, `/api/packages/${id}`, viewer.headers)).json();
      assert.deepEqual(body.tip, { amount: 500, currency: 'KES' }, viewer.role);
    }
    // The customer the package names is not its creator: no tip, no fee.
    const named = (await get(t, `/api/packages/${id}`, customer.headers)).json();
    assert.equal('tip' in named, false);
    assert.equal('cancellationFeeNow' in named, false);
    assert.deepEqual((await tip('packages', id, customer, 10)).json(), packageNotFound);
    assert.equal((await tip('packages', id, business, 10)).json().code, 'ALREADY_TIPPED');
  });

  test('cancellationFeeNow: what cancelling by the creator costs now, shown to the creator only', async () => {
    const requested = await ride(customer, driver, 'REQUESTED');
    const fee0 = (await get(t, `/api/rides/${requested}`, customer.headers)).json();
    assert.deepEqual(fee0.cancellationFeeNow, { amount: 0, currency: 'KES' });
    assert.equal(fee0.tip, null);
    await step(`/api/rides/${requested}/accept`, driver);
    const accepted = (await get(t, `/api/rides/${requested}`, customer.headers)).json();
    assert.deepEqual(accepted.cancellationFeeNow, { amount: KE_CAR_CANCELLATION_FEE, currency: 'KES' });
    const asDriver = (await get(t, `/api/rides/${requested}`, driver.headers)).json();
    assert.equal('cancellationFeeNow' in asDriver, false);
    assert.equal(asDriver.tip, null);
    // Cancelling charges what was shown.
    const cancelled = await step(`/api/rides/${requested}/cancel`, customer);
    assert.deepEqual(cancelled.cancellationFee, accepted.cancellationFeeNow);
    assert.equal(cancelled.cancellationFeeNow, null);

    const inProgress = await ride(customer, driver, 'IN_PROGRESS');
    assert.equal((await get(t, `/api/rides/${inProgress}`, customer.headers)).json().cancellationFeeNow, null);
    await step(`/api/rides/${inProgress}/complete`, driver);

    // Packages, through the poll's JSON text and the list.
    const pending = await pkg(business, 'PENDING');
    assert.deepEqual((await get(t, `/api/packages/${pending}`, business.headers)).json().cancellationFeeNow, {
      amount: 0,
      currency: 'KES',
    });
    const tariff = (await get(t, `/api/admin/tariffs/${business.countryId}/BIKE`, admin.headers)).json();
    await step(`/api/packages/${pending}/accept`, bikeDriver);
    const assigned = (await get(t, `/api/packages/${pending}`, business.headers)).json();
    assert.deepEqual(assigned.cancellationFeeNow, { amount: tariff.cancellationFee, currency: 'KES' });
    assert.equal('cancellationFeeNow' in (await get(t, `/api/packages/${pending}`, bikeDriver.headers)).json(), false);
    const listed = (await get(t, '/api/packages?limit=100', business.headers))
      .json()
      .items.find((p: { id: string }) => p.id === pending);
    assert.deepEqual(listed.cancellationFeeNow, assigned.cancellationFeeNow);
    await step(`/api/packages/${pending}/pickup`, bikeDriver);
    assert.equal((await get(t, `/api/packages/${pending}`, business.headers)).json().cancellationFeeNow, null);
  });
});
