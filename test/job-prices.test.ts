// Prices on jobs (contract section 18) through HTTP: quoteId on POST /packages and /rides, the price
// fields, the final ride fare from the driver's reported positions, cancellation fees, and statements.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import type { PriceInputs } from '../src/modules/pricing/pricing.service.js';
import { pathDistanceMeters } from '../src/modules/pricing/routing.js';
import { fareCap, finalFare, priceTrip, tenthsFromSurge } from '../src/modules/pricing/tariff.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, setDriverPosition, stop } from './packages-helpers.js';

const PICKUP = { lat: -1.2864, lng: 36.8172 };
const DROPOFF = { lat: -1.2421, lng: 36.8737 };
/** The seeded Kenyan car tariff (KES cents). */
const KE_CAR = {
  base: 10_000,
  perKm: 4_000,
  perMinute: 400,
  minimum: 25_000,
  bookingFee: 2_000,
  cancellationFee: 10_000,
};

describe('prices on jobs', () => {
  let t: TestApp;
  let business: TestUser;
  let otherBusiness: TestUser;
  let customer: TestUser;
  let otherCustomer: TestUser;
  let admin: TestUser;
  let bikeDriver: TestUser;
  let carDriver: TestUser;

  before(async () => {
    // The clock runs hours ahead here (expiries, rides, statement periods): tokens outlive it.
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast', ACCESS_TOKEN_TTL: '1d' } });
    business = await createUser(t, { role: 'BUSINESS' });
    otherBusiness = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    otherCustomer = await createUser(t, { role: 'CUSTOMER' });
    admin = await createUser(t, { role: 'ADMIN' });
    bikeDriver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
    carDriver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    await setDriverPosition(t, bikeDriver.id, PICKUP.lat, PICKUP.lng);
    await setDriverPosition(t, carDriver.id, PICKUP.lat, PICKUP.lng);
  });
  after(async () => t.close());

  const quote = async (by: TestUser, overrides: Record<string, unknown> = {}) => {
    const res = await post(t, '/api/quotes', by.headers, {
      kind: 'PACKAGE',
      pickup: { location: PICKUP },
      dropoff: { location: DROPOFF },
      vehicleType: 'BIKE',
      countryId: by.countryId,
      ...overrides,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const pkgBody = (by: TestUser, overrides: Record<string, unknown> = {}) =>
    packageBody(by.countryId, {
      pickup: stop(PICKUP.lat, PICKUP.lng),
      dropoff: stop(DROPOFF.lat, DROPOFF.lng),
      ...overrides,
    });
  const createPackage = async (
    by: TestUser,
    overrides: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) => post(t, '/api/packages', { ...by.headers, ...headers }, pkgBody(by, overrides));
  const error = (statusCode: number, code: string, message: string) => ({
    statusCode,
    error: statusCode === 400 ? 'Bad Request' : statusCode === 404 ? 'Not Found' : 'Conflict',
    code,
    message,
  });
  const stored = async (table: 'packages' | 'rides', id: string) =>
    (
      await sql<{
        quote_id: string | null;
        tariff_version: number;
        surge: number;
        price_inputs: PriceInputs;
        price_breakdown: Record<string, number>;
      }>`
      select quote_id, tariff_version, surge, price_inputs, price_breakdown from ${sql.table(table)} where id = ${id}`.execute(
        t.db,
      )
    ).rows[0]!;

  test('a package created with its quote carries the quoted price; the job keeps the tariff version and inputs; the quote is used up', async () => {
    const q = await quote(business);
    const res = await createPackage(business, { quoteId: q.id });
    assert.equal(res.statusCode, 201, res.body);
    const pkg = res.json();
    assert.deepEqual(pkg.price, { amount: q.amount, currency: 'KES' });
    assert.equal(pkg.cancellationFee, null);
    assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, business.headers)).json().price, pkg.price);

    const row = await stored('packages', pkg.id);
    assert.equal(row.quote_id, q.id, 'the job keeps the quote id');
    assert.equal(row.tariff_version, 1);
    assert.equal(row.surge, 1);
    assert.deepEqual(row.price_breakdown, q.breakdown);
    // The inputs alone give the price again.
    const again = priceTrip(row.price_inputs.tariff, {
      distanceMeters: row.price_inputs.distanceMeters,
      durationSeconds: row.price_inputs.durationSeconds,
      surgeTenths: tenthsFromSurge(row.price_inputs.surge),
    });
    assert.equal(again.amount, q.amount);

    // A quote locks one job: used again, 409.
    assert.deepEqual(
      (await createPackage(business, { quoteId: q.id })).json(),
      error(409, 'QUOTE_ALREADY_USED', 'The quote has already been used'),
    );
  });

  test('quoteId refused: expired (409), for other points, vehicle type, kind or account (400), unknown (404); the failed job leaves the quote usable', async () => {
    const expired = await quote(business);
    t.clock.advance(10 * 60_000);
    assert.deepEqual(
      (await createPackage(business, { quoteId: expired.id })).json(),
      error(409, 'QUOTE_EXPIRED', 'The quote has expired: ask for a new one'),
    );

    const q = await quote(business);
    const far = { lat: PICKUP.lat + 0.01, lng: PICKUP.lng };
    assert.deepEqual(
      (await createPackage(business, { quoteId: q.id, pickup: stop(far.lat, far.lng) })).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another pickup point'),
    );
    assert.deepEqual(
      (await createPackage(business, { quoteId: q.id, dropoff: stop(far.lat, far.lng) })).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another dropoff point'),
    );
    assert.deepEqual(
      (await createPackage(business, { quoteId: q.id, vehicleType: 'CAR' })).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another vehicle type (BIKE)'),
    );
    assert.deepEqual(
      (await createPackage(otherBusiness, { quoteId: q.id })).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another account'),
    );
    const rideQuote = await quote(business, { kind: 'RIDE' });
    assert.deepEqual(
      (await createPackage(business, { quoteId: rideQuote.id })).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for a ride'),
    );
    // No quote under this id: never given (or one digit changed).
    const altered = q.id.slice(0, 35) + (q.id[35] === '0' ? '1' : '0');
    for (const quoteId of [randomUUID(), altered]) {
      assert.deepEqual(
        (await createPackage(business, { quoteId })).json(),
        error(404, 'QUOTE_NOT_FOUND', 'Quote not found'),
      );
    }
    // Not a UUID (the sealed ids of versions before this one among them).
    for (const quoteId of [
      'q1_',
      `q1_${randomBytes(300).toString('base64url')}`,
      `${q.id}0`,
      'not-a-quote-id-but-long-enough-to-pass-min',
    ]) {
      const res = await createPackage(business, { quoteId });
      assert.equal(res.statusCode, 400, quoteId);
      assert.equal(res.json().code, 'VALIDATION_FAILED');
    }
    // A point within 25 m is the same point; the refusals above used nothing up.
    const near = { lat: PICKUP.lat + 0.0001, lng: PICKUP.lng };
    const ok = await createPackage(business, { quoteId: q.id, pickup: stop(near.lat, near.lng) });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().price.amount, q.amount);
  });

  test('an Idempotency-Key replay of a creation with a quote returns the same package, and does not use the quote twice', async () => {
    const q = await quote(business);
    const key = { 'idempotency-key': randomUUID() };
    const first = await createPackage(business, { quoteId: q.id }, key);
    const replay = await createPackage(business, { quoteId: q.id }, key);
    assert.equal(first.statusCode, 201);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), first.json());
  });

  test('without a quote the price is computed at creation, as a quote would be; the pricing rules apply (400 outside the country)', async () => {
    const q = await quote(business);
    const res = await createPackage(business);
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json().price, { amount: q.amount, currency: 'KES' });
    const row = await stored('packages', res.json().id);
    assert.equal(row.quote_id, null);
    assert.equal(row.price_inputs.distanceMeters, q.distanceMeters);

    const kampala = await createPackage(business, { pickup: stop(0.3476, 32.5825), dropoff: stop(0.3136, 32.5811) });
    assert.deepEqual(
      kampala.json(),
      error(400, 'POINT_OUTSIDE_COUNTRY', 'The pickup and the dropoff must be in the country (KE)'),
    );
  });

  test('rides: quoteId locks the price (CUSTOMER only for its own quote); a package quote, other points or expiry are refused', async () => {
    const q = await quote(customer, { kind: 'RIDE', vehicleType: 'CAR' });
    const body = (overrides: Record<string, unknown> = {}) =>
      rideBody(customer.countryId, { pickupLocation: PICKUP, destinationLocation: DROPOFF, ...overrides });
    assert.deepEqual(
      (await post(t, '/api/rides', otherCustomer.headers, body({ quoteId: q.id }))).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another account'),
    );
    assert.deepEqual(
      (await post(t, '/api/rides', customer.headers, body({ quoteId: q.id, destinationLocation: PICKUP }))).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another dropoff point'),
    );
    const pkgQuote = await quote(customer, { vehicleType: 'CAR' });
    assert.deepEqual(
      (await post(t, '/api/rides', customer.headers, body({ quoteId: pkgQuote.id }))).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for a package'),
    );
    const res = await post(t, '/api/rides', customer.headers, body({ quoteId: q.id }));
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().price, { amount: q.amount, currency: 'KES' });
    assert.equal(res.json().fare, null);
    assert.equal(res.json().cancellationFee, null);
    assert.deepEqual(
      (await post(t, '/api/rides', customer.headers, body({ quoteId: q.id }))).json(),
      error(409, 'QUOTE_ALREADY_USED', 'The quote has already been used'),
    );
    assert.equal((await stored('rides', res.json().id)).quote_id, q.id);
    await post(t, `/api/rides/${res.json().id}/cancel`, customer.headers, {});

    const late = await quote(customer, { kind: 'RIDE', vehicleType: 'CAR' });
    t.clock.advance(10 * 60_000 + 1);
    assert.deepEqual(
      (await post(t, '/api/rides', customer.headers, body({ quoteId: late.id }))).json(),
      error(409, 'QUOTE_EXPIRED', 'The quote has expired: ask for a new one'),
    );
  });

  /** Requests a ride, and the car driver takes it to IN_PROGRESS. */
  const rideInProgress = async () => {
    const q = await quote(customer, { kind: 'RIDE', vehicleType: 'CAR' });
    const ride = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: PICKUP, destinationLocation: DROPOFF, quoteId: q.id }),
      )
    ).json();
    await setDriverPosition(t, carDriver.id, PICKUP.lat, PICKUP.lng);
    for (const step of ['accept', 'arrive', 'start'])
      assert.equal((await post(t, `/api/rides/${ride.id}/${step}`, carDriver.headers)).statusCode, 200, step);
    return { ride, q };
  };
  /** The driver reports each point `everySeconds` apart; the write-behind runs after each, as it does every second. */
  const drive = async (points: { lat: number; lng: number }[], everySeconds: number) => {
    for (const p of points) {
      t.clock.advance(everySeconds * 1000);
      assert.equal((await post(t, '/api/drivers/me/location', carDriver.headers, p)).statusCode, 204);
      await t.services.live.flush();
    }
  };

  test("a completed ride's fare: the price's tariff and surge over the reported positions and their time, even after a tariff change", async () => {
    const { ride, q } = await rideInProgress();
    // The tariff changes mid-ride: the fare keeps the one the price came from.
    const ke = customer.countryId;
    const doubled = Object.fromEntries(Object.entries(KE_CAR).map(([k, v]) => [k, v * 2]));
    assert.equal(
      (
        await t.app.inject({
          method: 'PUT',
          url: `/api/admin/tariffs/${ke}/CAR`,
          headers: admin.headers,
          payload: doubled,
        })
      ).statusCode,
      200,
    );
    try {
      const path = [PICKUP, { lat: -1.27, lng: 36.835 }, { lat: -1.255, lng: 36.855 }, DROPOFF];
      // Four positions 150 s apart: 450 s from the first to the last.
      await drive(path, 150);
      const done = await post(t, `/api/rides/${ride.id}/complete`, carDriver.headers);
      assert.equal(done.statusCode, 200, done.body);
      const expected = finalFare(
        KE_CAR,
        { amount: q.amount, surgeTenths: 10 },
        { distanceMeters: pathDistanceMeters(path), durationSeconds: 450 },
      );
      assert.equal(expected.capped, false);
      assert.notEqual(expected.amount, q.amount, 'the actual trip differs from the quoted one');
      assert.deepEqual(done.json().fare, { amount: expected.amount, currency: 'KES' });
      assert.deepEqual(done.json().price, { amount: q.amount, currency: 'KES' });
      assert.deepEqual((await get(t, `/api/rides/${ride.id}`, customer.headers)).json().fare, done.json().fare);
    } finally {
      await t.app.inject({
        method: 'PUT',
        url: `/api/admin/tariffs/${ke}/CAR`,
        headers: admin.headers,
        payload: KE_CAR,
      });
    }
  });

  test('a long detour is capped at 1.25 × the price; positions reported before the start do not count', async () => {
    const q0 = await quote(customer, { kind: 'RIDE', vehicleType: 'CAR' });
    const ride = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: PICKUP, destinationLocation: DROPOFF, quoteId: q0.id }),
      )
    ).json();
    await setDriverPosition(t, carDriver.id, PICKUP.lat, PICKUP.lng);
    await post(t, `/api/rides/${ride.id}/accept`, carDriver.headers);
    // On the way to the pickup (ACCEPTED): not part of the trip.
    await drive([{ lat: -1.35, lng: 36.7 }, PICKUP], 300);
    await post(t, `/api/rides/${ride.id}/arrive`, carDriver.headers);
    await post(t, `/api/rides/${ride.id}/start`, carDriver.headers);
    await drive([{ lat: -1.15, lng: 36.95 }, { lat: -1.1, lng: 37.05 }, DROPOFF], 900);
    const done = (await post(t, `/api/rides/${ride.id}/complete`, carDriver.headers)).json();
    assert.deepEqual(done.fare, { amount: fareCap(q0.amount), currency: 'KES' });
    const detail = (
      await sql<{
        fare_detail: { capped: boolean; uncappedAmount: number; positions: number };
      }>`select fare_detail from rides where id = ${ride.id}`.execute(t.db)
    ).rows[0]!.fare_detail;
    assert.equal(detail.capped, true);
    assert.equal(detail.positions, 3);
    assert.ok(detail.uncappedAmount > fareCap(q0.amount));
  });

  test('cancellation fees: the creator after assignment pays the tariff fee; before assignment, a driver or an admin: none', async () => {
    const assigned = async () => {
      const pkg = (await createPackage(business)).json();
      await setDriverPosition(t, bikeDriver.id, PICKUP.lat, PICKUP.lng);
      assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, bikeDriver.headers)).statusCode, 200);
      return pkg;
    };
    const byCreator = await assigned();
    const cancelled = await post(t, `/api/packages/${byCreator.id}/cancel`, business.headers, {
      reason: 'No longer needed',
    });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    // The seeded Kenyan bike fee: 60 % of the car's KES 100.
    assert.deepEqual(cancelled.json().cancellationFee, { amount: 6_000, currency: 'KES' });
    assert.deepEqual((await get(t, `/api/packages/${byCreator.id}`, business.headers)).json().cancellationFee, {
      amount: 6_000,
      currency: 'KES',
    });

    const pending = (await createPackage(business)).json();
    assert.equal(
      (await post(t, `/api/packages/${pending.id}/cancel`, business.headers, {})).json().cancellationFee,
      null,
    );
    const byAdmin = await assigned();
    assert.equal((await post(t, `/api/packages/${byAdmin.id}/cancel`, admin.headers, {})).json().cancellationFee, null);

    const { ride: customerCancels } = await rideInProgressUntil('accept');
    assert.deepEqual(
      (await post(t, `/api/rides/${customerCancels.id}/cancel`, customer.headers, {})).json().cancellationFee,
      { amount: 10_000, currency: 'KES' },
    );
    const { ride: driverCancels } = await rideInProgressUntil('arrive');
    assert.equal(
      (await post(t, `/api/rides/${driverCancels.id}/cancel`, carDriver.headers, {})).json().cancellationFee,
      null,
    );
    const requested = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: PICKUP, destinationLocation: DROPOFF }),
      )
    ).json();
    assert.equal(
      (await post(t, `/api/rides/${requested.id}/cancel`, customer.headers, {})).json().cancellationFee,
      null,
    );
  });

  const rideInProgressUntil = async (last: 'accept' | 'arrive') => {
    const ride = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: PICKUP, destinationLocation: DROPOFF }),
      )
    ).json();
    await setDriverPosition(t, carDriver.id, PICKUP.lat, PICKUP.lng);
    for (const step of last === 'accept' ? ['accept'] : ['accept', 'arrive'])
      assert.equal((await post(t, `/api/rides/${ride.id}/${step}`, carDriver.headers)).statusCode, 200);
    return { ride };
  };

  test('the OpenAPI document names the new fields, quoteId and the statement in both media types', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const statement = doc.paths['/api/businesses/me/statement'].get;
    assert.deepEqual(Object.keys(statement.responses['200'].content).sort(), ['application/json', 'text/csv']);
    const created = doc.paths['/api/packages'].post;
    assert.ok(created.requestBody.content['application/json'].schema.properties.quoteId);
    assert.ok(created.responses['201'].content['application/json'].schema.properties.price);
    const ride = doc.paths['/api/rides/{id}'].get.responses['200'].content['application/json'].schema.properties;
    assert.ok(ride.price && ride.fare && ride.cancellationFee);
    assert.ok(
      doc.paths['/api/drivers/me/offers'].get.responses['200'].content['application/json'].schema.properties.offers
        .items.properties.price,
    );
  });

  describe('statements', () => {
    let from: string;
    let to: string;
    const expected = new Map<string, { status: string; price: number; amount: number }>();
    let outside: string;

    before(async () => {
      const s = await createUser(t, { role: 'BUSINESS' });
      business = s;
      t.clock.advance(3_600_000);
      from = t.clock.now().toISOString();
      const deliver = async (reference: string) => {
        const pkg = (await createPackage(business, { reference })).json();
        await setDriverPosition(t, bikeDriver.id, PICKUP.lat, PICKUP.lng);
        for (const step of ['accept', 'pickup', 'start', 'deliver'])
          assert.equal(
            (await post(t, `/api/packages/${pkg.id}/${step}`, bikeDriver.headers, step === 'deliver' ? {} : undefined))
              .statusCode,
            200,
            step,
          );
        return pkg;
      };
      const delivered = await deliver('=HYPERLINK("http://evil.example","x")');
      expected.set(delivered.id, {
        status: 'DELIVERED',
        price: delivered.price.amount,
        amount: delivered.price.amount,
      });
      const second = await deliver('Order "42", Westlands');
      expected.set(second.id, { status: 'DELIVERED', price: second.price.amount, amount: second.price.amount });
      const cancelled = (await createPackage(business, { reference: '+cancelled' })).json();
      await setDriverPosition(t, bikeDriver.id, PICKUP.lat, PICKUP.lng);
      await post(t, `/api/packages/${cancelled.id}/accept`, bikeDriver.headers);
      await post(t, `/api/packages/${cancelled.id}/cancel`, business.headers, {});
      expected.set(cancelled.id, { status: 'CANCELLED', price: cancelled.price.amount, amount: 6_000 });
      const failed = (await createPackage(business)).json();
      await post(t, `/api/packages/${failed.id}/accept`, bikeDriver.headers);
      await post(t, `/api/packages/${failed.id}/fail`, bikeDriver.headers, { reason: 'Nobody home' });
      expected.set(failed.id, { status: 'FAILED', price: failed.price.amount, amount: 0 });
      // Still open, and another business's delivered package: in nobody's statement here.
      await createPackage(business);
      const others = (await createPackage(otherBusiness)).json();
      await post(t, `/api/packages/${others.id}/cancel`, otherBusiness.headers, {});
      t.clock.advance(60_000);
      to = t.clock.now().toISOString();
      // Finished after `to`: outside the period.
      const late = (await createPackage(business)).json();
      await post(t, `/api/packages/${late.id}/cancel`, business.headers, {});
      outside = late.id;
    });

    const statement = (by: TestUser, query: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'GET',
        url: `/api/businesses/me/statement?${query}`,
        headers: { ...by.headers, ...headers },
      });

    test('JSON: the packages that reached a final status in [from, to), what each was charged, and totals equal to the sum of the rows', async () => {
      const res = await statement(business, `from=${from}&to=${to}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.businessId, business.id);
      assert.equal(body.from, from);
      assert.deepEqual(new Set(body.items.map((i: { packageId: string }) => i.packageId)), new Set(expected.keys()));
      assert.ok(!body.items.some((i: { packageId: string }) => i.packageId === outside));
      for (const item of body.items) {
        const want = expected.get(item.packageId)!;
        assert.equal(item.status, want.status);
        assert.equal(item.price, want.price);
        assert.equal(item.amount, want.amount);
        assert.equal(item.amount, item.deliveryCharge + item.cancellationFee);
        assert.equal(item.currency, 'KES');
      }
      const sum = (k: string) => body.items.reduce((n: number, i: Record<string, number>) => n + i[k], 0);
      assert.deepEqual(body.totals, [
        {
          currency: 'KES',
          packages: 4,
          deliveryCharges: sum('deliveryCharge'),
          cancellationFees: sum('cancellationFee'),
          amount: sum('amount'),
        },
      ]);
      assert.equal(
        body.totals[0].amount,
        [...expected.values()].reduce((n, e) => n + e.amount, 0),
      );
      // Dates work as bounds too (midnight UTC; `to` exclusive).
      const day = from.slice(0, 10);
      const byDates = (
        await statement(business, `from=${day}&to=${new Date(Date.parse(to) + 86_400_000).toISOString().slice(0, 10)}`)
      ).json();
      assert.ok(byDates.items.length >= 4);
    });

    test('CSV (Accept: text/csv or format=csv): it parses, a row per package and a TOTAL row equal to their sum, formulas neutralized', async () => {
      const res = await statement(business, `from=${from}&to=${to}`, { accept: 'text/csv' });
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /^text\/csv; charset=utf-8/);
      assert.match(
        res.headers['content-disposition'] as string,
        /^attachment; filename="statement-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/,
      );
      const records: Record<string, string>[] = parse(res.body, { columns: true, bom: true, skip_empty_lines: true });
      const rows = records.filter((r) => r.type === 'PACKAGE');
      const totals = records.filter((r) => r.type === 'TOTAL');
      assert.equal(rows.length, 4);
      assert.equal(totals.length, 1);
      assert.equal(
        Number(totals[0]!.amount),
        rows.reduce((n, r) => n + Number(r.amount), 0),
      );
      assert.equal(
        Number(totals[0]!.cancellationFee),
        rows.reduce((n, r) => n + Number(r.cancellationFee), 0),
      );
      for (const r of rows) assert.equal(Number(r.amount), expected.get(r.packageId!)!.amount);
      const refs = rows.map((r) => r.reference);
      assert.ok(refs.includes(`'=HYPERLINK("http://evil.example","x")`), 'a formula is prefixed with an apostrophe');
      assert.ok(refs.includes("'+cancelled"));
      assert.ok(refs.includes('Order "42", Westlands'), 'quotes and commas survive');
      assert.equal((await statement(business, `from=${from}&to=${to}&format=csv`)).body, res.body);
      assert.equal(
        (await statement(business, `from=${from}&to=${to}&format=json`, { accept: 'text/csv' })).json().items.length,
        4,
      );
    });

    test('CSV: a reference that would start a formula in any piece a spreadsheet may split it into comes out neutralized', async () => {
      const hostile = await createUser(t, { role: 'BUSINESS' });
      const references = [
        'x;=1+1;y',
        ' =1+1',
        'a,@SUM(A1:A9)',
        'Plot 7; -2+3',
        '-cmd',
        '@x',
        '+1',
        'Box 4,+254 700',
        '=1+1',
        'ORD-1',
        'Flat 2, Block B; Moi Avenue',
      ];
      const start = t.clock.now().toISOString();
      const ids = new Map<string, string>();
      for (const reference of references) {
        const pkg = (await createPackage(hostile, { reference })).json();
        assert.equal((await post(t, `/api/packages/${pkg.id}/cancel`, hostile.headers, {})).statusCode, 200);
        ids.set(pkg.id, reference);
      }
      t.clock.advance(1000);
      const res = await statement(hostile, `from=${start}&to=${t.clock.now().toISOString()}&format=csv`);
      assert.equal(res.statusCode, 200, res.body);
      const rows = (
        parse(res.body, { columns: true, bom: true, skip_empty_lines: true }) as Record<string, string>[]
      ).filter((r) => r.type === 'PACKAGE');
      const got = Object.fromEntries(rows.map((r) => [ids.get(r.packageId!)!, r.reference]));
      assert.deepEqual(got, {
        'x;=1+1;y': "x;'=1+1;y",
        ' =1+1': "' =1+1",
        'a,@SUM(A1:A9)': "a,'@SUM(A1:A9)",
        'Plot 7; -2+3': "Plot 7;' -2+3",
        '-cmd': "'-cmd",
        '@x': "'@x",
        '+1': "'+1",
        'Box 4,+254 700': "Box 4,'+254 700",
        '=1+1': "'=1+1",
        'ORD-1': 'ORD-1',
        'Flat 2, Block B; Moi Avenue': 'Flat 2, Block B; Moi Avenue',
      });
      // Whatever a spreadsheet splits on, no piece starts a formula.
      for (const reference of Object.values(got)) {
        for (const piece of reference!.split(/[,;]/)) assert.doesNotMatch(piece, /^\s*[=+\-@]/, reference);
      }
      // The JSON statement keeps the references as they were written.
      const json = (await statement(hostile, `from=${start}&to=${t.clock.now().toISOString()}`)).json();
      assert.deepEqual(new Set(json.items.map((i: { reference: string }) => i.reference)), new Set(references));
    });

    test('another business sees none of these rows; customers and drivers get 403; bad periods get 400', async () => {
      const theirs = (await statement(otherBusiness, `from=${from}&to=${to}`)).json();
      assert.ok(theirs.items.every((i: { packageId: string }) => !expected.has(i.packageId)));
      assert.equal(theirs.items.length, 1);
      assert.equal((await statement(customer, `from=${from}&to=${to}`)).statusCode, 403);
      assert.equal((await statement(bikeDriver, `from=${from}&to=${to}`)).statusCode, 403);
      const bad = async (query: string, message: string, code = 'VALIDATION_FAILED') => {
        const res = await statement(business, query);
        assert.equal(res.statusCode, 400, query);
        assert.deepEqual(res.json(), { statusCode: 400, error: 'Bad Request', code, message });
      };
      await bad(`from=${from}`, 'querystring.to is required');
      await bad(
        `from=last-month&to=${to}`,
        'querystring.from must be a date (2026-11-01) or an ISO 8601 instant with its zone (2026-11-01T00:00:00Z)',
      );
      await bad(
        `from=2026-02-30&to=2026-03-10`,
        'querystring.from must be a date (2026-11-01) or an ISO 8601 instant with its zone (2026-11-01T00:00:00Z)',
      );
      await bad(
        `from=2026-03-01T00:00:00&to=2026-03-10`,
        'querystring.from must be a date (2026-11-01) or an ISO 8601 instant with its zone (2026-11-01T00:00:00Z)',
      );
      await bad(`from=${to}&to=${from}`, 'querystring.to must be after querystring.from');
      await bad('from=2024-01-01&to=2026-01-01', 'A statement covers at most 366 days', 'STATEMENT_PERIOD_TOO_LONG');
      await bad(`from=${from}&to=${to}&extra=1`, 'querystring has an unknown property "extra"');
    });
  });
});
