// Idempotency-Key on the job steps, offers and tips (contract section 1): a step whose answer was
// lost is replayed from its stored answer, even after a later step moved the job on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, setDriverPosition, stop } from './packages-helpers.js';

describe('Idempotency-Key on job steps', () => {
  let t: TestApp;
  let business: TestUser;
  let customer: TestUser;
  // Each test works in its own area, a degree from the others (beyond the dispatch radius).
  let area = 0;
  const nextArea = () => {
    area += 1;
    return { lat: -4 + area, lng: 38 };
  };
  const keyed = (user: TestUser, key: string) => ({ ...user.headers, 'idempotency-key': key });

  before(async () => {
    t = await buildTestApp();
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
  });
  after(async () => t.close());

  const driverAt = async (lat: number, lng: number, vehicleType: 'BIKE' | 'CAR' = 'BIKE') => {
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType } });
    await setDriverPosition(t, driver.id, lat, lng);
    return driver;
  };
  const acceptedPackage = async (at = nextArea()) => {
    const driver = await driverAt(at.lat, at.lng);
    const created = (
      await post(
        t,
        '/api/packages',
        business.headers,
        packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng) }),
      )
    ).json();
    const accepted = await post(t, `/api/packages/${created.id}/accept`, keyed(driver, 'accept-1'));
    assert.equal(accepted.statusCode, 200);
    return { driver, id: created.id as string, accepted };
  };
  const historyOf = async (id: string) =>
    (await get(t, `/api/packages/${id}`, business.headers))
      .json()
      .statusHistory.map((h: { status: string }) => h.status);

  test('two steps with lost answers: the replayed pickup and start get their stored answers, the job moved once', async () => {
    const { driver, id, accepted } = await acceptedPackage();
    const pickup = await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'K1'));
    assert.equal(pickup.statusCode, 200);
    assert.equal(pickup.headers['idempotent-replayed'], undefined);
    assert.equal(pickup.json().status, 'PICKED_UP');
    const start = await post(t, `/api/packages/${id}/start`, keyed(driver, 'K2'));
    assert.equal(start.json().status, 'IN_TRANSIT');

    // The phone never saw either answer and sends both again, in order.
    const pickupAgain = await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'K1'));
    assert.equal(pickupAgain.statusCode, 200, pickupAgain.body);
    assert.equal(pickupAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(pickupAgain.json(), pickup.json());
    const startAgain = await post(t, `/api/packages/${id}/start`, keyed(driver, 'K2'));
    assert.equal(startAgain.statusCode, 200);
    assert.equal(startAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(startAgain.json(), start.json());
    const acceptAgain = await post(t, `/api/packages/${id}/accept`, keyed(driver, 'accept-1'));
    assert.equal(acceptAgain.statusCode, 200);
    assert.deepEqual(acceptAgain.json(), accepted.json());
    assert.deepEqual(await historyOf(id), ['PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT']);

    // The same key on another step or another job is another request: 422, nothing applied.
    const reused = await post(t, `/api/packages/${id}/deliver`, keyed(driver, 'K1'), {});
    assert.deepEqual(reused.json(), {
      statusCode: 422,
      message: 'Idempotency-Key was already used with a different request',
      error: 'Unprocessable Entity',
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
    assert.deepEqual(await historyOf(id), ['PENDING', 'ASSIGNED', 'PICKED_UP', 'IN_TRANSIT']);
    // Without a key a step is what it always was.
    const unkeyed = await post(t, `/api/packages/${id}/pickup`, driver.headers);
    assert.equal(unkeyed.json().code, 'INVALID_STATUS_TRANSITION');
  });

  test('a step with another body under the same key gets 422; a failed step stores nothing', async () => {
    const { driver, id } = await acceptedPackage();
    await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'p'));
    const failed = await post(t, `/api/packages/${id}/fail`, keyed(driver, 'F'), { reason: 'Gate locked' });
    assert.equal(failed.statusCode, 200);
    const other = await post(t, `/api/packages/${id}/fail`, keyed(driver, 'F'), { reason: 'Nobody home' });
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED');
    // A step that failed (409 here) leaves its key free for the same request once it can succeed.
    const second = await acceptedPackage();
    const early = await post(t, `/api/packages/${second.id}/start`, keyed(second.driver, 'S'));
    assert.equal(early.json().code, 'INVALID_STATUS_TRANSITION');
    assert.equal(
      (
        await t.db
          .selectFrom('idempotency_keys')
          .select('key')
          .where('account_id', '=', second.driver.id)
          .where('key', '=', 'S')
          .execute()
      ).length,
      0,
    );
    await post(t, `/api/packages/${second.id}/pickup`, second.driver.headers);
    const later = await post(t, `/api/packages/${second.id}/start`, keyed(second.driver, 'S'));
    assert.equal(later.statusCode, 200);
    assert.equal(later.headers['idempotent-replayed'], undefined);
  });

  test('the same key twice at once: one runs, the other gets 409 IDEMPOTENCY_KEY_IN_FLIGHT or the stored answer; never applied twice', async () => {
    const { driver, id } = await acceptedPackage();
    const [a, b] = await Promise.all([
      post(t, `/api/packages/${id}/pickup`, keyed(driver, 'twice')),
      post(t, `/api/packages/${id}/pickup`, keyed(driver, 'twice')),
    ]);
    const answers = [a, b].map((r) => [r.statusCode, r.json().code ?? r.headers['idempotent-replayed'] ?? 'first']);
    assert.ok(
      answers.some(([s, c]) => s === 200 && c === 'first'),
      JSON.stringify(answers),
    );
    assert.ok(
      answers.every(
        ([s, c]) => (s === 200 && (c === 'first' || c === 'true')) || (s === 409 && c === 'IDEMPOTENCY_KEY_IN_FLIGHT'),
      ),
      JSON.stringify(answers),
    );
    assert.deepEqual(await historyOf(id), ['PENDING', 'ASSIGNED', 'PICKED_UP']);
  });

  test('a key claimed by a request still in flight: 409 IDEMPOTENCY_KEY_IN_FLIGHT', async () => {
    const { driver, id } = await acceptedPackage();
    const { requestHash } = await import('../src/http/idempotency.js');
    await t.db
      .insertInto('idempotency_keys')
      .values({
        account_id: driver.id,
        key: 'busy',
        request_hash: requestHash(`POST /packages/${id}/pickup`, {}),
        state: 'IN_FLIGHT',
        response_status: null,
        response_body: null,
        created_at: t.clock.now(),
      })
      .execute();
    const res = await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'busy'));
    assert.deepEqual(res.json(), {
      statusCode: 409,
      message: 'A request with this Idempotency-Key is still in progress',
      error: 'Conflict',
      code: 'IDEMPOTENCY_KEY_IN_FLIGHT',
    });
    assert.deepEqual(await historyOf(id), ['PENDING', 'ASSIGNED']);
  });

  test('rides: arrive, start, complete and cancel replay their stored answers; keys are per account', async () => {
    const at = nextArea();
    const driver = await driverAt(at.lat, at.lng, 'CAR');
    const ride = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: at, destinationLocation: { lat: at.lat + 0.02, lng: at.lng } }),
      )
    ).json();
    assert.equal((await post(t, `/api/rides/${ride.id}/accept`, keyed(driver, 'R0'))).statusCode, 200);
    const arrive = await post(t, `/api/rides/${ride.id}/arrive`, keyed(driver, 'R1'));
    const start = await post(t, `/api/rides/${ride.id}/start`, keyed(driver, 'R2'));
    const complete = await post(t, `/api/rides/${ride.id}/complete`, keyed(driver, 'R3'));
    assert.equal(complete.json().status, 'COMPLETED');
    for (const [step, key, first] of [
      ['arrive', 'R1', arrive],
      ['start', 'R2', start],
      ['complete', 'R3', complete],
    ] as const) {
      const again = await post(t, `/api/rides/${ride.id}/${step}`, keyed(driver, key));
      assert.equal(again.statusCode, 200, `${step}: ${again.body}`);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
    }
    // The customer's own key 'R1' is another key: its cancel runs (and fails: the ride is over).
    assert.equal(
      (await post(t, `/api/rides/${ride.id}/cancel`, keyed(customer, 'R1'))).json().code,
      'INVALID_STATUS_TRANSITION',
    );

    const other = (
      await post(
        t,
        '/api/rides',
        customer.headers,
        rideBody(customer.countryId, { pickupLocation: at, destinationLocation: { lat: at.lat + 0.02, lng: at.lng } }),
      )
    ).json();
    const cancel = await post(t, `/api/rides/${other.id}/cancel`, keyed(customer, 'C1'), { reason: 'Plans changed' });
    assert.equal(cancel.json().status, 'CANCELLED');
    const cancelAgain = await post(t, `/api/rides/${other.id}/cancel`, keyed(customer, 'C1'), {
      reason: 'Plans changed',
    });
    assert.equal(cancelAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(cancelAgain.json(), cancel.json());
  });

  test('packages: deliver, release and cancel replay their stored answers', async () => {
    const { driver, id } = await acceptedPackage();
    const released = await post(t, `/api/packages/${id}/release`, keyed(driver, 'rel'), { reason: 'Flat tyre' });
    assert.equal(released.json().status, 'PENDING');
    const releasedAgain = await post(t, `/api/packages/${id}/release`, keyed(driver, 'rel'), { reason: 'Flat tyre' });
    assert.equal(releasedAgain.statusCode, 200, releasedAgain.body);
    assert.deepEqual(releasedAgain.json(), released.json());
    const cancelled = await post(t, `/api/packages/${id}/cancel`, keyed(business, 'can'), { reason: 'Not needed' });
    assert.equal(cancelled.json().status, 'CANCELLED');
    const cancelledAgain = await post(t, `/api/packages/${id}/cancel`, keyed(business, 'can'), {
      reason: 'Not needed',
    });
    assert.equal(cancelledAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(cancelledAgain.json(), cancelled.json());

    const next = await acceptedPackage();
    await post(t, `/api/packages/${next.id}/pickup`, next.driver.headers);
    await post(t, `/api/packages/${next.id}/start`, next.driver.headers);
    const delivered = await post(t, `/api/packages/${next.id}/deliver`, keyed(next.driver, 'D'), {
      recipientName: 'Otieno',
    });
    assert.equal(delivered.json().status, 'DELIVERED', delivered.body);
    const deliveredAgain = await post(t, `/api/packages/${next.id}/deliver`, keyed(next.driver, 'D'), {
      recipientName: 'Otieno',
    });
    assert.equal(deliveredAgain.statusCode, 200, deliveredAgain.body);
    assert.deepEqual(deliveredAgain.json(), delivered.json());

    // A tip: once, and its replay is the stored 201, not 409 ALREADY_TIPPED.
    const tip = await post(t, `/api/packages/${next.id}/tip`, keyed(business, 'tip'), { amount: 10 });
    assert.equal(tip.statusCode, 201, tip.body);
    const tipAgain = await post(t, `/api/packages/${next.id}/tip`, keyed(business, 'tip'), { amount: 10 });
    assert.equal(tipAgain.statusCode, 201, tipAgain.body);
    assert.equal(tipAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(tipAgain.json(), tip.json());
    assert.equal(
      (await post(t, `/api/packages/${next.id}/tip`, keyed(business, 'tip'), { amount: 11 })).statusCode,
      422,
    );
  });

  test('offers: a replayed accept or decline gets its stored answer', async () => {
    const offerOf = async (driver: TestUser) => {
      for (let i = 0; i < 50; i += 1) {
        const offers = (await get(t, '/api/drivers/me/offers', driver.headers)).json().offers;
        if (offers.length) return offers[0];
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error('no offer');
    };
    const at = nextArea();
    const near = await driverAt(at.lat + 0.004, at.lng);
    const far = await driverAt(at.lat + 0.02, at.lng);
    await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng) }),
    );
    const first = await offerOf(near);
    assert.equal((await post(t, `/api/offers/${first.id}/decline`, keyed(near, 'no'))).statusCode, 204);
    const declinedAgain = await post(t, `/api/offers/${first.id}/decline`, keyed(near, 'no'));
    assert.equal(declinedAgain.statusCode, 204, declinedAgain.body);
    assert.equal(declinedAgain.headers['idempotent-replayed'], 'true');
    const second = await offerOf(far);
    const accepted = await post(t, `/api/offers/${second.id}/accept`, keyed(far, 'yes'));
    assert.equal(accepted.json().status, 'ASSIGNED');
    const acceptedAgain = await post(t, `/api/offers/${second.id}/accept`, keyed(far, 'yes'));
    assert.equal(acceptedAgain.statusCode, 200, acceptedAgain.body);
    assert.equal(acceptedAgain.headers['idempotent-replayed'], 'true');
    assert.deepEqual(acceptedAgain.json(), accepted.json());
  });
  test("a driver's step takes over an abandoned claim of its key in its own statement, and replays from it", async () => {
    // Half a degree off the other tests' areas (the areas beyond the sixth are outside the country).
    const { driver, id } = await acceptedPackage({ lat: -3.5, lng: 37.5 });
    const { requestHash } = await import('../src/http/idempotency.js');
    // A claim left IN_FLIGHT by a crashed instance two minutes ago (older than ABANDONED_CLAIM_MS).
    await t.db
      .insertInto('idempotency_keys')
      .values({
        account_id: driver.id,
        key: 'crashed',
        request_hash: requestHash(`POST /packages/${id}/pickup`, {}),
        state: 'IN_FLIGHT',
        response_status: null,
        response_body: null,
        created_at: new Date(t.clock.now().getTime() - 120_000),
      })
      .execute();
    const res = await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'crashed'));
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    const stored = await t.db
      .selectFrom('idempotency_keys')
      .select(['state', 'response_status'])
      .where('account_id', '=', driver.id)
      .where('key', '=', 'crashed')
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { state: 'DONE', response_status: 200 });
    const again = await post(t, `/api/packages/${id}/pickup`, keyed(driver, 'crashed'));
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), res.json());
    assert.deepEqual(await historyOf(id), ['PENDING', 'ASSIGNED', 'PICKED_UP']);
  });
});

describe('Idempotency-Key on job steps: what a key costs in statements', () => {
  let database: TestDatabase;
  let t: TestApp;
  let counting = false;
  let statements = 0;

  before(async () => {
    database = await createTestDatabase({ log: () => void (counting && (statements += 1)) });
    t = await buildTestApp({ database, env: { DISPATCH_MODE: 'off' } });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  const counted = async (run: () => Promise<{ statusCode: number; body: string }>) => {
    statements = 0;
    counting = true;
    const res = await run();
    counting = false;
    assert.equal(res.statusCode, 200, res.body);
    return statements;
  };

  test('a keyed step costs no statement more than the same step without a key (its one statement claims the key with the answer); a replay three (the step that no longer applies, the claim, the stored answer)', async () => {
    const business = await createUser(t, { role: 'BUSINESS' });
    // A package picked up by a driver of its own (a driver has one active job), its session warm.
    const pickedUp = async () => {
      const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'BIKE' } });
      await setDriverPosition(t, driver.id, -1.2864, 36.8172);
      const created = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json();
      assert.equal((await post(t, `/api/packages/${created.id}/accept`, driver.headers)).statusCode, 200);
      assert.equal((await post(t, `/api/packages/${created.id}/pickup`, driver.headers)).statusCode, 200);
      return { id: created.id as string, driver };
    };
    const [a, b] = [await pickedUp(), await pickedUp()];
    const plain = await counted(() => post(t, `/api/packages/${a.id}/start`, a.driver.headers));
    const keyed = await counted(() =>
      post(t, `/api/packages/${b.id}/start`, { ...b.driver.headers, 'idempotency-key': 'count-me' }),
    );
    const replay = await counted(() =>
      post(t, `/api/packages/${b.id}/start`, { ...b.driver.headers, 'idempotency-key': 'count-me' }),
    );
    assert.equal(plain, 1, `without a key ${plain}`);
    assert.equal(keyed, plain, `without a key ${plain}, with one ${keyed}`);
    assert.equal(replay, 3, `a replay: ${replay}`);
  });
});
