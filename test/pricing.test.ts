// Quotes, locked prices and tariff administration (contract section 18), through HTTP and through
// the service the packages and rides modules call.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { AppError } from '../src/shared/errors.js';
import type { LockQuoteInput } from '../src/modules/pricing/pricing.service.js';
import { priceTrip } from '../src/modules/pricing/tariff.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { countryId, createUser, type TestUser } from './helpers/factories.js';
import { get, post, setDriverPosition } from './packages-helpers.js';

const NAIROBI = { lat: -1.2864, lng: 36.8172 };
const WESTLANDS = { lat: -1.2676, lng: 36.8108 };
const KAMPALA = { lat: 0.3476, lng: 32.5825 };
const MOMBASA = { lat: -4.0435, lng: 39.6682 };

const body = (country: string, overrides: Record<string, unknown> = {}) => ({
  kind: 'PACKAGE',
  pickup: { location: NAIROBI },
  dropoff: { location: WESTLANDS },
  vehicleType: 'CAR',
  countryId: country,
  ...overrides,
});

async function rejects(promise: Promise<unknown>, statusCode: number, code: string) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.statusCode, statusCode);
    assert.equal(err.code, code);
    return true;
  });
}

describe('quotes and tariffs', () => {
  let t: TestApp;
  let ke: string;
  let customer: TestUser;
  let business: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp();
    ke = await countryId(t, 'KE');
    customer = await createUser(t, { role: 'CUSTOMER' });
    business = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  test('POST /quotes: 201 with a breakdown that adds up, route, currency and expiry', async () => {
    const res = await post(t, '/api/quotes', customer.headers, body(ke));
    assert.equal(res.statusCode, 201, res.body);
    const q = res.json();
    assert.deepEqual(
      Object.keys(q).sort(),
      [
        'amount',
        'availability',
        'breakdown',
        'currency',
        'distanceMeters',
        'dropoffEta',
        'durationSeconds',
        'expiresAt',
        'id',
        'pickupEta',
        'pickupEtaSeconds',
      ].sort(),
    );
    assert.equal(q.currency, 'KES');
    const b = q.breakdown;
    assert.equal(b.base + b.distance + b.time + b.surgeAmount + b.minimumTopUp + b.bookingFee, q.amount);
    assert.equal(b.surge, 1);
    // Great-circle ≈ 2.2 km, × 1.3; a car at 30 km/h.
    assert.ok(q.distanceMeters > 2_700 && q.distanceMeters < 3_000, String(q.distanceMeters));
    assert.equal(q.durationSeconds, Math.round(q.distanceMeters / (30 / 3.6)));
    assert.equal(q.pickupEtaSeconds, null);
    assert.equal(q.expiresAt, new Date(t.clock.nowMs() + 600_000).toISOString());
    // The seeded Kenyan car tariff: KES 100 base, 40/km, 4/min, minimum 250, booking fee 20 (in cents).
    const expected = priceTrip(
      { base: 10_000, perKm: 4_000, perMinute: 400, minimum: 25_000, bookingFee: 2_000, cancellationFee: 10_000 },
      { distanceMeters: q.distanceMeters, durationSeconds: q.durationSeconds, surgeTenths: 10 },
    );
    assert.equal(q.amount, expected.amount);

    const business201 = await post(t, '/api/quotes', business.headers, body(ke, { kind: 'RIDE' }));
    assert.equal(business201.statusCode, 201);
  });

  test('POST /quotes: a currency without a minor unit (UGX), and the pickup ETA of the nearest eligible driver', async () => {
    const ug = await countryId(t, 'UG');
    const kampala2 = { lat: 0.3136, lng: 32.5811 };
    const res = await post(
      t,
      '/api/quotes',
      customer.headers,
      body(ug, { pickup: { location: KAMPALA }, dropoff: { location: kampala2 }, vehicleType: 'BIKE' }),
    );
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().currency, 'UGX');
    assert.ok(Number.isInteger(res.json().amount));

    const driver = await createUser(t, {
      role: 'DRIVER',
      driver: { vehicleType: 'CAR', serviceTypes: ['PACKAGE_DELIVERY'] },
    });
    await setDriverPosition(t, driver.id, -1.29, 36.8172);
    const withDriver = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
    // 400 m away, × 1.3, at 30 km/h.
    assert.ok(
      withDriver.pickupEtaSeconds > 50 && withDriver.pickupEtaSeconds < 80,
      String(withDriver.pickupEtaSeconds),
    );
    // Not eligible for a ride, nor for a van.
    assert.equal(
      (await post(t, '/api/quotes', customer.headers, body(ke, { kind: 'RIDE' }))).json().pickupEtaSeconds,
      null,
    );
    assert.equal(
      (await post(t, '/api/quotes', customer.headers, body(ke, { vehicleType: 'VAN' }))).json().pickupEtaSeconds,
      null,
    );
  });

  test('POST /quotes: only ACTIVE customers and businesses', async () => {
    for (const role of ['DRIVER', 'COMPANY', 'ADMIN'] as const) {
      const user = role === 'ADMIN' ? admin : await createUser(t, { role });
      const res = await post(t, '/api/quotes', user.headers, body(ke));
      assert.equal(res.statusCode, 403, role);
      assert.equal(res.json().error, 'Forbidden');
    }
    const suspended = await createUser(t, { role: 'CUSTOMER', status: 'SUSPENDED' });
    assert.equal((await post(t, '/api/quotes', suspended.headers, body(ke))).statusCode, 403);
    assert.equal((await post(t, '/api/quotes', {}, body(ke))).statusCode, 401);
  });

  test('POST /quotes: bad input gets 400 or 404 in the error shape', async () => {
    const cases: [Record<string, unknown>, number, string | undefined][] = [
      [{ vehicleType: 'ROCKET' }, 400, undefined],
      [{ kind: 'FLIGHT' }, 400, undefined],
      [{ countryId: 'not-a-uuid' }, 400, undefined],
      [{ pickup: { location: { lat: 91, lng: 0 } } }, 400, undefined],
      [{ pickup: { location: NAIROBI, address: 'x' } }, 400, undefined],
      [{ price: 1 }, 400, undefined],
      [{ dropoff: { location: MOMBASA }, pickup: { location: { lat: 1.5, lng: 35.0 } } }, 400, 'TRIP_TOO_LONG'],
      [{ dropoff: { location: KAMPALA } }, 400, 'POINTS_IN_DIFFERENT_COUNTRIES'],
      [{ countryId: '00000000-0000-4000-8000-000000000000' }, 404, 'COUNTRY_NOT_FOUND'],
    ];
    for (const [overrides, status, code] of cases) {
      const res = await post(t, '/api/quotes', customer.headers, body(ke, overrides));
      assert.equal(res.statusCode, status, `${JSON.stringify(overrides)}: ${res.body}`);
      const err = res.json();
      assert.equal(typeof err.message, 'string');
      assert.equal(err.statusCode, status);
      assert.equal(err.error, status === 400 ? 'Bad Request' : 'Not Found');
      if (code) assert.equal(err.code, code);
    }
    // Both points in Kenya, but the tariff asked for is Britain's.
    const gb = await countryId(t, 'GB');
    const outside = await post(t, '/api/quotes', customer.headers, body(gb));
    assert.equal(outside.statusCode, 400);
    assert.equal(outside.json().code, 'POINT_OUTSIDE_COUNTRY');
    // 300 km is the default limit: Nairobi to Mombasa is ~440 km.
    const far = await post(t, '/api/quotes', customer.headers, body(ke, { dropoff: { location: MOMBASA } }));
    assert.equal(far.json().code, 'TRIP_TOO_LONG');
  });

  describe('locked prices', () => {
    const lockInput = (
      quoteId: string,
      accountId: string,
      overrides: Partial<LockQuoteInput> = {},
    ): LockQuoteInput => ({
      quoteId,
      accountId,
      kind: 'PACKAGE',
      pickup: NAIROBI,
      dropoff: WESTLANDS,
      vehicleType: 'CAR',
      countryId: ke,
      ...overrides,
    });

    test('a quote locks its price once; the inputs recompute it', async () => {
      const q = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
      const pricing = t.services.pricing;
      // 10 m off is the same point.
      const price = await pricing.lockQuote(
        lockInput(q.id, customer.id, { pickup: { lat: NAIROBI.lat + 0.00009, lng: NAIROBI.lng } }),
      );
      assert.equal(price.amount, q.amount);
      assert.equal(price.currency, 'KES');
      assert.equal(price.quoteId, q.id, 'the quote id, which the job keeps');
      assert.deepEqual(price.breakdown, q.breakdown);
      assert.equal(price.tariffVersion, 1);
      const { tariff, distanceMeters, durationSeconds, surge } = price.inputs;
      assert.equal(
        priceTrip(tariff, { distanceMeters, durationSeconds, surgeTenths: Math.round(surge * 10) }).amount,
        price.amount,
      );
      const row = await t.db
        .selectFrom('quotes')
        .select('consumed_at')
        .where('id', '=', q.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.consumed_at);
      await rejects(pricing.lockQuote(lockInput(q.id, customer.id)), 409, 'QUOTE_ALREADY_USED');
    });

    test('a quote is kept as given, under its id; a used quote leaves its row, the record of what it was', async () => {
      const pricing = t.services.pricing;
      const q = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
      const kept = (await pricing.quoteStore.get(q.id))!;
      assert.equal(kept.amount, q.amount);
      assert.equal(kept.accountId, customer.id);
      assert.deepEqual(kept.breakdown, q.breakdown);
      await pricing.lockQuote(lockInput(q.id, customer.id));
      const row = await t.db.selectFrom('quotes').selectAll().where('id', '=', q.id).executeTakeFirstOrThrow();
      assert.ok(row.consumed_at);
      assert.equal(row.amount, q.amount);
      assert.equal(row.account_id, customer.id);
      assert.deepEqual(row.breakdown, q.breakdown);
      assert.equal((row.inputs as { distanceMeters: number }).distanceMeters, q.distanceMeters);
      assert.equal(row.expires_at.toISOString(), q.expiresAt);
      const metrics = await t.deps.metrics.registry.getSingleMetricAsString('quotes_total');
      assert.match(metrics, /quotes_total\{kind="PACKAGE",vehicle_type="CAR"\} [1-9]/);
    });

    test('another account, kind, vehicle type, country or points: 400; expired: 409; unknown: 404', async () => {
      const pricing = t.services.pricing;
      const q = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
      const ug = await countryId(t, 'UG');
      for (const overrides of [
        { accountId: business.id },
        { kind: 'RIDE' as const },
        { vehicleType: 'BIKE' as const },
        { countryId: ug },
        { pickup: { lat: NAIROBI.lat + 0.001, lng: NAIROBI.lng } },
        { dropoff: NAIROBI },
      ]) {
        await rejects(pricing.lockQuote(lockInput(q.id, customer.id, overrides)), 400, 'QUOTE_MISMATCH');
      }
      await rejects(pricing.lockQuote(lockInput(randomUUID(), customer.id)), 404, 'QUOTE_NOT_FOUND');
      // Still usable after the refusals, until it expires.
      t.clock.advance(600_000);
      await rejects(pricing.lockQuote(lockInput(q.id, customer.id)), 409, 'QUOTE_EXPIRED');
    });

    test('two jobs using one quote at once: the first gets it, the other 409; a use rolled back leaves it to the other', async () => {
      const pricing = t.services.pricing;
      const pause = () => new Promise((resolve) => setTimeout(resolve, 100));
      for (const outcome of ['commit', 'rollback'] as const) {
        const q = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
        let finishFirst!: () => void;
        const held = new Promise<void>((resolve) => (finishFirst = resolve));
        const first = t.db.transaction().execute(async (trx) => {
          await pricing.lockQuote(lockInput(q.id, customer.id), trx);
          await held;
          if (outcome === 'rollback') throw new Error('creation failed');
        });
        await pause();
        // The second use waits for the first transaction (PostgreSQL: for its row; PGlite: one transaction at a time).
        const second = t.db.transaction().execute((trx) => pricing.lockQuote(lockInput(q.id, customer.id), trx));
        await pause();
        finishFirst();
        if (outcome === 'commit') {
          // Both are awaited together: the second's 409 may arrive before the first's COMMIT has answered.
          await Promise.all([first, rejects(second, 409, 'QUOTE_ALREADY_USED')]);
        } else {
          const [, used] = await Promise.all([assert.rejects(first, /creation failed/), second]);
          assert.equal(used.amount, q.amount);
        }
      }
    });

    test('unused quote rows are deleted once they expired more than QUOTE_TTL ago; used ones stay', async () => {
      const pricing = t.services.pricing;
      const now = t.clock.nowMs();
      const row = (expiresAgoMs: number, used: boolean) => ({
        id: randomUUID(),
        account_id: customer.id,
        kind: 'PACKAGE' as const,
        pickup_lat: NAIROBI.lat,
        pickup_lng: NAIROBI.lng,
        dropoff_lat: WESTLANDS.lat,
        dropoff_lng: WESTLANDS.lng,
        vehicle_type: 'CAR' as const,
        country_id: ke,
        amount: 1000,
        currency: 'KES',
        breakdown: '{}',
        tariff_version: 1,
        surge: 1,
        inputs: '{}',
        created_at: new Date(now - expiresAgoMs - 600_000),
        expires_at: new Date(now - expiresAgoMs),
        consumed_at: used ? new Date(now - expiresAgoMs - 300_000) : null,
      });
      const stale = row(600_001, false);
      const recent = row(540_000, false);
      const used = row(2 * 86_400_000, true);
      await t.db.insertInto('quotes').values([stale, recent, used]).execute();
      assert.ok((await pricing.deleteExpiredQuotes()) >= 1);
      const left = (
        await t.db.selectFrom('quotes').select('id').where('id', 'in', [stale.id, recent.id, used.id]).execute()
      ).map((r) => r.id);
      assert.deepEqual(left.sort(), [recent.id, used.id].sort());
    });

    test('a job created in a transaction that fails leaves the quote usable', async () => {
      const pricing = t.services.pricing;
      const q = (await post(t, '/api/quotes', customer.headers, body(ke))).json();
      await assert.rejects(
        t.db.transaction().execute(async (trx) => {
          await pricing.lockQuote(lockInput(q.id, customer.id), trx);
          throw new Error('creation failed');
        }),
        /creation failed/,
      );
      assert.equal((await pricing.lockQuote(lockInput(q.id, customer.id))).amount, q.amount);
    });

    test('without a quote: the same price computed at creation', async () => {
      const pricing = t.services.pricing;
      const q = (await post(t, '/api/quotes', business.headers, body(ke, { kind: 'RIDE' }))).json();
      const price = await pricing.priceWithoutQuote({
        kind: 'RIDE',
        pickup: NAIROBI,
        dropoff: WESTLANDS,
        vehicleType: 'CAR',
        countryId: ke,
      });
      assert.equal(price.amount, q.amount);
      assert.equal(price.quoteId, null);
      assert.equal(price.inputs.pricedAt, t.clock.now().toISOString());
      await rejects(
        pricing.priceWithoutQuote({
          kind: 'RIDE',
          pickup: NAIROBI,
          dropoff: KAMPALA,
          vehicleType: 'CAR',
          countryId: ke,
        }),
        400,
        'POINTS_IN_DIFFERENT_COUNTRIES',
      );
    });

    test('the final ride fare from the reported positions, capped at 1.25 × the price; the cancellation fee', async () => {
      const pricing = t.services.pricing;
      const price = await pricing.priceWithoutQuote({
        kind: 'RIDE',
        pickup: NAIROBI,
        dropoff: WESTLANDS,
        vehicleType: 'CAR',
        countryId: ke,
      });
      const start = Date.parse('2026-01-01T10:00:00Z');
      const positions = [NAIROBI, { lat: -1.277, lng: 36.814 }, WESTLANDS].map((p, i) => ({
        ...p,
        at: new Date(start + i * 240_000),
      }));
      const fare = pricing.finalRideFare(price, { positions });
      assert.equal(fare.durationSeconds, 480);
      assert.ok(fare.distanceMeters > 2_000 && fare.distanceMeters < 2_400, String(fare.distanceMeters));
      assert.equal(fare.capped, false);
      assert.equal(fare.currency, 'KES');
      const { tariff } = price.inputs;
      assert.equal(
        fare.amount,
        priceTrip(tariff, { distanceMeters: fare.distanceMeters, durationSeconds: 480, surgeTenths: 10 }).amount,
      );
      const detour = pricing.finalRideFare(price, { distanceMeters: 20_000, durationSeconds: 3_600 });
      assert.equal(detour.capped, true);
      assert.equal(detour.amount, Math.floor((price.amount * 5) / 4));

      assert.deepEqual(pricing.cancellationFee(price, { cancelledBy: 'CREATOR', afterAssignment: true }), {
        amount: 10_000,
        currency: 'KES',
      });
      assert.equal(pricing.cancellationFee(price, { cancelledBy: 'DRIVER', afterAssignment: true }), null);
      assert.equal(pricing.cancellationFee(price, { cancelledBy: 'ADMIN', afterAssignment: true }), null);
      assert.equal(pricing.cancellationFee(price, { cancelledBy: 'CREATOR', afterAssignment: false }), null);
    });
  });

  describe('tariff administration', () => {
    const put = (user: TestUser, url: string, payload: unknown) =>
      t.app.inject({ method: 'PUT', url, headers: user.headers, payload: payload as object });
    const values = {
      base: 20_000,
      perKm: 8_000,
      perMinute: 800,
      minimum: 50_000,
      bookingFee: 3_000,
      cancellationFee: 15_000,
    };

    test('list and get: every seeded country and vehicle type, in its currency', async () => {
      const list = await get(t, '/api/admin/tariffs', admin.headers);
      assert.equal(list.statusCode, 200);
      const countries = await t.db.selectFrom('countries').select('id').execute();
      assert.equal(list.json().items.length, countries.length * 4);
      for (const item of list.json().items) {
        for (const field of ['base', 'perKm', 'perMinute', 'minimum', 'bookingFee', 'cancellationFee'])
          assert.ok(Number.isInteger(item[field]) && item[field] >= 0);
      }
      const kenyan = await get(t, `/api/admin/tariffs?countryId=${ke}`, admin.headers);
      assert.deepEqual(
        kenyan.json().items.map((i: { vehicleType: string }) => i.vehicleType),
        ['BIKE', 'CAR', 'TRUCK', 'VAN'],
      );
      const one = await get(t, `/api/admin/tariffs/${ke}/BIKE`, admin.headers);
      assert.equal(one.statusCode, 200);
      assert.equal(one.json().currency, 'KES');
      assert.equal(one.json().countryCode, 'KE');
      assert.equal(one.json().version, 1);
    });

    test('only ADMIN; unknown country 404; unknown vehicle type, non-integer, negative or missing money 400', async () => {
      for (const user of [customer, business]) {
        assert.equal((await get(t, '/api/admin/tariffs', user.headers)).statusCode, 403);
        assert.equal((await get(t, `/api/admin/tariffs/${ke}/CAR`, user.headers)).statusCode, 403);
        assert.equal((await put(user, `/api/admin/tariffs/${ke}/CAR`, values)).statusCode, 403);
      }
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const res of [
        await get(t, `/api/admin/tariffs/${unknown}/CAR`, admin.headers),
        await put(admin, `/api/admin/tariffs/${unknown}/CAR`, values),
      ]) {
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().code, 'COUNTRY_NOT_FOUND');
      }
      assert.equal((await get(t, `/api/admin/tariffs/${ke}/ROCKET`, admin.headers)).statusCode, 400);
      assert.equal((await put(admin, `/api/admin/tariffs/${ke}/ROCKET`, values)).statusCode, 400);
      assert.equal((await get(t, '/api/admin/tariffs/not-a-uuid/CAR', admin.headers)).statusCode, 400);
      const { cancellationFee: _omitted, ...missing } = values;
      for (const bad of [
        { ...values, perKm: 12.5 },
        { ...values, base: -1 },
        { ...values, minimum: '100' },
        { ...values, bookingFee: 1e12 },
        missing,
        { ...values, surge: 2 },
      ]) {
        const res = await put(admin, `/api/admin/tariffs/${ke}/CAR`, bad);
        assert.equal(res.statusCode, 400, JSON.stringify(bad));
        assert.equal(res.json().error, 'Bad Request');
      }
      assert.equal((await get(t, `/api/admin/tariffs/${ke}/CAR`, admin.headers)).json().version, 1);
    });

    test('a change bumps the version and applies to new quotes only', async () => {
      const pricing = t.services.pricing;
      const old = (await post(t, '/api/quotes', customer.headers, body(ke, { vehicleType: 'TRUCK' }))).json();
      const res = await put(admin, `/api/admin/tariffs/${ke}/TRUCK`, values);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().version, 2);
      assert.equal(res.json().base, 20_000);
      const fresh = (await post(t, '/api/quotes', customer.headers, body(ke, { vehicleType: 'TRUCK' }))).json();
      assert.notEqual(fresh.amount, old.amount);
      assert.equal(fresh.breakdown.base, 20_000);
      const lockedOld = await pricing.lockQuote({
        quoteId: old.id,
        accountId: customer.id,
        kind: 'PACKAGE',
        pickup: NAIROBI,
        dropoff: WESTLANDS,
        vehicleType: 'TRUCK',
        countryId: ke,
      });
      assert.equal(lockedOld.amount, old.amount);
      assert.equal(lockedOld.tariffVersion, 1);
      const lockedNew = await pricing.lockQuote({
        quoteId: fresh.id,
        accountId: customer.id,
        kind: 'PACKAGE',
        pickup: NAIROBI,
        dropoff: WESTLANDS,
        vehicleType: 'TRUCK',
        countryId: ke,
      });
      assert.equal(lockedNew.tariffVersion, 2);
      assert.equal(lockedNew.inputs.tariff.base, 20_000);
      // A country without tariffs (added later) gets them through PUT, at version 1.
      const [{ id: newCountry }] = await t.db
        .insertInto('countries')
        .values({
          id: '11111111-1111-4111-8111-111111111111',
          code: 'ZM',
          name: 'Zambia',
          currency: 'ZMW',
          dial_code: '+260',
        })
        .returning('id')
        .execute();
      assert.equal(
        (await get(t, `/api/admin/tariffs/${newCountry}/CAR`, admin.headers)).json().code,
        'TARIFF_NOT_FOUND',
      );
      const created = await put(admin, `/api/admin/tariffs/${newCountry}/CAR`, values);
      assert.equal(created.statusCode, 200);
      assert.equal(created.json().version, 1);
      assert.equal(created.json().currency, 'ZMW');
    });

    test('the OpenAPI document describes the new routes', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
      assert.ok(doc.paths['/api/quotes'].post.responses['201']);
      assert.ok(doc.paths['/api/admin/tariffs/{countryId}/{vehicleType}'].put);
      assert.ok(doc.paths['/api/admin/tariffs'].get);
    });
  });
});
