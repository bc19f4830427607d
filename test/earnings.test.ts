// Money booked when jobs end (contract section 21), through HTTP: CASH and ACCOUNT packages, a cash
// ride, cancellation fees, a replayed completion, `earnings` per viewer, and the earnings reports; a
// company's report per driver equal to each driver's own, in statements that do not grow with drivers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, setDriverPosition } from './packages-helpers.js';
import { assertBooks, balanceOf, cashOnDelivery, collectCash, earn } from './payouts-helpers.js';
import { jobTransactions } from '../src/modules/jobs/job-money-hook.js';
import { moneyFacts } from '../src/modules/jobs/job-money.js';

/** A flat tariff: every job costs base + booking fee = 12,000 whatever the distance; 15 % commission. */
const TARIFF = {
  base: 10_000,
  perKm: 0,
  perMinute: 0,
  minimum: 0,
  bookingFee: 2_000,
  cancellationFee: 5_000,
  commissionRate: 1500,
};
const PRICE = 12_000;
const SPLIT = { driver: 8_500, commission: 1_500, bookingFee: 2_000 };

type Entry = { code: string; amount: number; kind: string; party_id: string | null };

describe('earnings: money booked when jobs end', () => {
  let t: TestApp;
  let admin: TestUser;
  let business: TestUser;
  let customer: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let bikeDriver: TestUser;
  let carDriver: TestUser;
  let otherDriver: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    bikeDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'BIKE', companyId: company.id },
    });
    carDriver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
    otherDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', vehicleType: 'BIKE', companyId: otherCompany.id },
    });
    for (const d of [bikeDriver, carDriver, otherDriver]) await setDriverPosition(t, d.id, -1.2864, 36.8172);
    for (const vehicleType of ['BIKE', 'CAR']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/admin/tariffs/${business.countryId}/${vehicleType}`,
        headers: admin.headers,
        payload: TARIFF,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().commissionRate, 1500);
    }
  });
  after(async () => t.close());

  /** The entries booked under a source key, by account kind. */
  const entriesOf = async (sourceKey: string): Promise<Entry[]> =>
    (
      await sql<Entry>`select e.code, e.amount::int as amount, a.kind, a.party_id from ledger_entries e
        join ledger_transactions x on x.id = e.transaction_id join ledger_accounts a on a.id = e.account_id
        where x.source_key = ${sourceKey} order by a.kind, e.code`.execute(t.db)
    ).rows;
  const transactions = async () =>
    Number((await sql<{ n: number }>`select count(*)::int as n from ledger_transactions`.execute(t.db)).rows[0]!.n);

  const createPackage = async (by: TestUser, overrides: Record<string, unknown> = {}) => {
    const res = await post(t, '/api/packages', by.headers, packageBody(by.countryId, overrides));
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };
  const step = async (id: string, action: string, by: TestUser, body?: object) => {
    const res = await post(t, `/api/packages/${id}/${action}`, by.headers, body);
    assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    return res.json();
  };
  const toInTransit = async (id: string, driver = bikeDriver) => {
    await step(id, 'accept', driver);
    await step(id, 'pickup', driver);
    return step(id, 'start', driver);
  };

  test('a CASH package delivered: the driver is charged the price and credited the earnings; commission and booking fee to the operator', async () => {
    const pkg = await createPackage(business, { paymentMethod: 'CASH', customerId: customer.id });
    assert.equal(pkg.paymentMethod, 'CASH');
    assert.deepEqual(pkg.price, { amount: PRICE, currency: 'KES' });
    assert.equal(pkg.earnings, undefined, 'the business never sees earnings');
    const started = await toInTransit(pkg.id);
    // Before delivery: the expected earnings from the price.
    assert.deepEqual(started.earnings, { ...SPLIT, tip: 0, currency: 'KES' });
    const before = await balanceOf(t, 'DRIVER', bikeDriver.id);
    const delivered = await step(pkg.id, 'deliver', bikeDriver);
    assert.deepEqual(delivered.earnings, { ...SPLIT, tip: 0, currency: 'KES' });
    assert.deepEqual(
      (await entriesOf(`job:PACKAGE:${pkg.id}:completed`)).map(({ kind, code, amount }) => [kind, code, amount]),
      [
        ['DRIVER', 'CASH_COLLECTED', -PRICE],
        ['DRIVER', 'EARNINGS', 8_500],
        ['OPERATOR_BOOKING_FEES', 'BOOKING_FEE', 2_000],
        ['OPERATOR_COMMISSION', 'COMMISSION', 1_500],
      ],
    );
    assert.equal(
      (await balanceOf(t, 'DRIVER', bikeDriver.id)) - before,
      -3_500,
      'the driver owes the commission and the booking fee',
    );
    assert.equal(await balanceOf(t, 'BUSINESS', business.id), 0, 'a CASH job charges no account');

    // Who sees `earnings`: the driver, its company and admins; never the business or the customer.
    for (const viewer of [bikeDriver, company, admin]) {
      const res = await get(t, `/api/packages/${pkg.id}`, viewer.headers);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json().earnings, { ...SPLIT, tip: 0, currency: 'KES' }, viewer.role);
    }
    for (const viewer of [business, customer]) {
      const res = await get(t, `/api/packages/${pkg.id}`, viewer.headers);
      assert.equal(res.statusCode, 200);
      assert.equal('earnings' in res.json(), false, viewer.role);
      const listed = (await get(t, '/api/packages?limit=100', viewer.headers))
        .json()
        .items.find((p: { id: string }) => p.id === pkg.id);
      assert.equal('earnings' in listed, false, `${viewer.role} (list)`);
    }
    assert.equal(
      'cashOnDelivery' in (await get(t, `/api/packages/${pkg.id}`, customer.headers)).json(),
      false,
      'the customer named sees no cash on delivery field',
    );
    assert.equal((await get(t, `/api/packages/${pkg.id}`, business.headers)).json().cashOnDelivery, null);
    // Another company and another driver: 404, as for everything else of the package.
    for (const stranger of [otherCompany, otherDriver])
      assert.equal((await get(t, `/api/packages/${pkg.id}`, stranger.headers)).statusCode, 404);
    const listedByDriver = (await get(t, '/api/packages?limit=100', bikeDriver.headers))
      .json()
      .items.find((p: { id: string }) => p.id === pkg.id);
    assert.deepEqual(listedByDriver.earnings, { ...SPLIT, tip: 0, currency: 'KES' });
    await assertBooks(t);
  });

  test('an ACCOUNT package delivered: the business is charged, the driver credited; a replay books nothing twice', async () => {
    const pkg = await createPackage(business);
    assert.equal(pkg.paymentMethod, 'ACCOUNT', 'a business pays on account by default');
    await toInTransit(pkg.id);
    const businessBefore = await balanceOf(t, 'BUSINESS', business.id);
    const driverBefore = await balanceOf(t, 'DRIVER', bikeDriver.id);
    await step(pkg.id, 'deliver', bikeDriver);
    const key = `job:PACKAGE:${pkg.id}:completed`;
    assert.deepEqual(
      (await entriesOf(key)).map(({ kind, code, amount, party_id }) => [kind, code, amount, party_id]),
      [
        ['BUSINESS', 'JOB_CHARGE', -PRICE, business.id],
        ['DRIVER', 'EARNINGS', 8_500, bikeDriver.id],
        ['OPERATOR_BOOKING_FEES', 'BOOKING_FEE', 2_000, null],
        ['OPERATOR_COMMISSION', 'COMMISSION', 1_500, null],
      ],
    );
    assert.equal((await balanceOf(t, 'BUSINESS', business.id)) - businessBefore, -PRICE);
    assert.equal((await balanceOf(t, 'DRIVER', bikeDriver.id)) - driverBefore, 8_500);

    // Delivered again (a retry): 409, nothing booked.
    const count = await transactions();
    const again = await post(t, `/api/packages/${pkg.id}/deliver`, bikeDriver.headers, {});
    assert.equal(again.statusCode, 409);
    // The money step replayed as a whole in a transaction of its own: the source keys book nothing new.
    const row = (await t.services.packages['repo'].load(pkg.id))!;
    const facts = moneyFacts('PACKAGE', row, {
      payer: { kind: 'BUSINESS', partyId: business.id },
      amount: row.price_amount,
      cashOnDelivery: null,
    });
    const replayed = await t.db.transaction().execute((trx) => t.services.ledger.postMany(trx, jobTransactions(facts)));
    assert.deepEqual(
      replayed.map((p) => p.replayed),
      [true],
    );
    assert.equal(await transactions(), count);
    assert.equal((await balanceOf(t, 'BUSINESS', business.id)) - businessBefore, -PRICE, 'charged once');
    await assertBooks(t);
  });

  test('a ride completed (CASH, the fare): the driver is charged the fare and credited the earnings', async () => {
    const created = await post(t, '/api/rides', customer.headers, rideBody(customer.countryId));
    assert.equal(created.statusCode, 201, created.body);
    const ride = created.json();
    assert.equal(ride.paymentMethod, 'CASH');
    assert.equal(ride.earnings, undefined);
    for (const action of ['accept', 'arrive', 'start'])
      assert.equal((await post(t, `/api/rides/${ride.id}/${action}`, carDriver.headers)).statusCode, 200);
    const completed = await post(t, `/api/rides/${ride.id}/complete`, carDriver.headers);
    assert.equal(completed.statusCode, 200, completed.body);
    // No positions reported: the fare is the base and the booking fee, the same as the price here.
    assert.deepEqual(completed.json().fare, { amount: PRICE, currency: 'KES' });
    assert.deepEqual(completed.json().earnings, { ...SPLIT, tip: 0, currency: 'KES' });
    assert.deepEqual(
      (await entriesOf(`job:RIDE:${ride.id}:completed`)).map(({ kind, code, amount }) => [kind, code, amount]),
      [
        ['DRIVER', 'CASH_COLLECTED', -PRICE],
        ['DRIVER', 'EARNINGS', 8_500],
        ['OPERATOR_BOOKING_FEES', 'BOOKING_FEE', 2_000],
        ['OPERATOR_COMMISSION', 'COMMISSION', 1_500],
      ],
    );
    assert.equal(await balanceOf(t, 'DRIVER', carDriver.id), -3_500);
    assert.equal(
      'earnings' in (await get(t, `/api/rides/${ride.id}`, customer.headers)).json(),
      false,
      'the customer never sees earnings',
    );
    assert.deepEqual((await get(t, `/api/rides/${ride.id}`, carDriver.headers)).json().earnings, {
      ...SPLIT,
      tip: 0,
      currency: 'KES',
    });
    assert.equal((await get(t, `/api/rides/${ride.id}`, otherDriver.headers)).statusCode, 404);
    await assertBooks(t);
  });

  test('a cancellation fee is split like an amount, charged to the creator; none when nobody was assigned', async () => {
    const pkg = await createPackage(business);
    await step(pkg.id, 'accept', bikeDriver);
    const businessBefore = await balanceOf(t, 'BUSINESS', business.id);
    const driverBefore = await balanceOf(t, 'DRIVER', bikeDriver.id);
    const cancelled = await step(pkg.id, 'cancel', business, { reason: 'Changed my mind' });
    assert.deepEqual(cancelled.cancellationFee, { amount: 5_000, currency: 'KES' });
    assert.deepEqual(
      (await entriesOf(`job:PACKAGE:${pkg.id}:cancellation-fee`)).map(({ kind, code, amount }) => [kind, code, amount]),
      [
        ['BUSINESS', 'CANCELLATION_FEE', -5_000],
        ['DRIVER', 'EARNINGS', 4_250],
        ['OPERATOR_COMMISSION', 'COMMISSION', 750],
      ],
    );
    assert.equal((await balanceOf(t, 'BUSINESS', business.id)) - businessBefore, -5_000);
    assert.equal((await balanceOf(t, 'DRIVER', bikeDriver.id)) - driverBefore, 4_250);
    assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, bikeDriver.headers)).json().earnings, {
      driver: 4_250,
      commission: 750,
      bookingFee: 0,
      tip: 0,
      currency: 'KES',
    });

    const early = await createPackage(business);
    const count = await transactions();
    await step(early.id, 'cancel', business);
    assert.equal(await transactions(), count, 'a PENDING cancellation books nothing');
    await assertBooks(t);
  });

  test('payment methods: a customer pays cash only (400 otherwise), a ride too', async () => {
    const bad = await post(
      t,
      '/api/packages',
      customer.headers,
      packageBody(customer.countryId, { paymentMethod: 'ACCOUNT' }),
    );
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'PAYMENT_METHOD_NOT_ALLOWED');
    const ok = await post(t, '/api/packages', customer.headers, packageBody(customer.countryId));
    assert.equal(ok.json().paymentMethod, 'CASH');
    await post(t, `/api/packages/${ok.json().id}/cancel`, customer.headers);
    const ride = await post(
      t,
      '/api/rides',
      customer.headers,
      rideBody(customer.countryId, { paymentMethod: 'ACCOUNT' }),
    );
    assert.equal(ride.statusCode, 400);
    assert.equal(ride.json().code, 'PAYMENT_METHOD_NOT_ALLOWED');
    const other = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { paymentMethod: 'CARD' }),
    );
    assert.equal(other.statusCode, 400);
  });

  test('the earnings report: JSON and CSV, totals and the balance; 400 for a range of more than 92 days', async () => {
    const res = await get(t, '/api/drivers/me/earnings', bikeDriver.headers);
    assert.equal(res.statusCode, 200, res.body);
    const report = res.json();
    // Two deliveries (CASH, ACCOUNT) and one cancellation fee so far.
    assert.deepEqual(
      report.jobs.map((j: { kind: string; amount: number; earnings: number; cashCollected: number }) => [
        j.kind,
        j.amount,
        j.earnings,
        j.cashCollected,
      ]),
      [
        ['COMPLETED', PRICE, 8_500, PRICE],
        ['COMPLETED', PRICE, 8_500, 0],
        ['CANCELLATION_FEE', 5_000, 4_250, 0],
      ],
    );
    assert.deepEqual(report.totals, [
      { currency: 'KES', jobs: 3, amount: 29_000, earnings: 21_250, tips: 0, cashCollected: PRICE },
    ]);
    assert.deepEqual(report.balances, [{ currency: 'KES', balance: await balanceOf(t, 'DRIVER', bikeDriver.id) }]);
    assert.equal(report.balances[0].balance, -3_500 + 8_500 + 4_250);

    const csv = await t.app.inject({
      method: 'GET',
      url: '/api/drivers/me/earnings',
      headers: { ...bikeDriver.headers, accept: 'text/csv' },
    });
    assert.equal(csv.statusCode, 200);
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    const rows: Record<string, string>[] = parse(csv.body, { columns: true });
    assert.deepEqual(
      rows.map((r) => r.type),
      ['JOB', 'JOB', 'JOB', 'TOTAL', 'BALANCE'],
    );
    assert.equal(rows[3]!.earnings, '21250');
    assert.equal(rows[4]!.balance, String(report.balances[0].balance));
    assert.ok(csv.body.includes('\r\n'));

    const from = new Date(t.clock.now().getTime() - 93 * 86_400_000).toISOString();
    const long = await get(t, `/api/drivers/me/earnings?from=${encodeURIComponent(from)}`, bikeDriver.headers);
    assert.equal(long.statusCode, 400);
    assert.equal(long.json().code, 'EARNINGS_PERIOD_TOO_LONG');
    assert.equal((await get(t, '/api/drivers/me/earnings?from=2026-02-30', bikeDriver.headers)).statusCode, 400);
    // An earlier period: nothing.
    const empty = (await get(t, '/api/drivers/me/earnings?from=2020-01-01&to=2020-01-02', bikeDriver.headers)).json();
    assert.deepEqual([empty.jobs, empty.totals], [[], []]);
    assert.equal((await get(t, '/api/drivers/me/earnings', business.headers)).statusCode, 403);

    // The company: its drivers each with totals and balance; not another company's.
    const mine = (await get(t, '/api/companies/me/earnings', company.headers)).json();
    assert.deepEqual(
      mine.drivers.map((d: { driverId: string }) => d.driverId),
      [bikeDriver.id],
    );
    assert.deepEqual(mine.drivers[0].totals, report.totals);
    assert.deepEqual(mine.drivers[0].balances, report.balances);
    const theirs = (await get(t, '/api/companies/me/earnings', otherCompany.headers)).json();
    assert.deepEqual(
      theirs.drivers.map((d: { driverId: string; totals: unknown[] }) => [d.driverId, d.totals]),
      [[otherDriver.id, []]],
    );
    await assertBooks(t);
  });
});

describe("a company's earnings: every driver's figures in a fixed number of statements", () => {
  let t: TestApp;
  let database: TestDatabase;
  /** Statements the database ran while `counting` (Kysely's log hook sees every one, begin and commit included). */
  let counting = false;
  let statements = 0;
  let admin: TestUser;
  let business: TestUser;
  let customer: TestUser;

  before(async () => {
    database = await createTestDatabase({ log: () => void (counting && (statements += 1)) });
    t = await buildTestApp({ database, env: { DISPATCH_MODE: 'broadcast' } });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    for (const vehicleType of ['BIKE', 'CAR']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/admin/tariffs/${business.countryId}/${vehicleType}`,
        headers: admin.headers,
        payload: TARIFF,
      });
      assert.equal(res.statusCode, 200, res.body);
    }
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  const online = async (companyId: string, firstName: string, vehicleType: 'BIKE' | 'CAR' = 'BIKE') => {
    const d = await createUser(t, {
      role: 'DRIVER',
      firstName,
      lastName: 'Driver',
      driver: { availability: 'ONLINE', vehicleType, companyId },
    });
    await setDriverPosition(t, d.id, -1.2864, 36.8172);
    return d;
  };
  const ok = async (res: Awaited<ReturnType<typeof post>>, what: string) => {
    assert.ok(res.statusCode === 200 || res.statusCode === 201, `${what}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  /** A package of the business taken to IN_TRANSIT by `driver`. */
  const packageInTransit = async (driver: TestUser, overrides: Record<string, unknown> = {}) => {
    const pkg = await ok(
      await post(t, '/api/packages', business.headers, packageBody(business.countryId, overrides)),
      'create package',
    );
    for (const action of ['accept', 'pickup', 'start'])
      await ok(await post(t, `/api/packages/${pkg.id}/${action}`, driver.headers), action);
    return pkg.id as string;
  };
  /** A CASH ride of the customer completed by `driver`. */
  const rideCompleted = async (driver: TestUser) => {
    const ride = await ok(await post(t, '/api/rides', customer.headers, rideBody(customer.countryId)), 'create ride');
    for (const action of ['accept', 'arrive', 'start', 'complete'])
      await ok(await post(t, `/api/rides/${ride.id}/${action}`, driver.headers), action);
    return ride.id as string;
  };
  const window = () => {
    const now = t.clock.now().getTime();
    return { from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 3_600_000).toISOString() };
  };
  const query = (w: { from: string; to: string }) =>
    `from=${encodeURIComponent(w.from)}&to=${encodeURIComponent(w.to)}`;

  test("each driver's totals and balances are what /drivers/me/earnings gives that driver for the same window", async () => {
    const company = await createUser(t, { role: 'COMPANY' });
    const otherCompany = await createUser(t, { role: 'COMPANY' });
    // Named so that the company's order (first name, last name, id) is known.
    const [ana, bea, cyd, dan] = [
      await online(company.id, 'Ana'),
      await online(company.id, 'Bea', 'CAR'),
      await online(company.id, 'Cyd'),
      await online(company.id, 'Dan'),
    ];
    const stranger = await online(otherCompany.id, 'Eve');

    // Ana: an ACCOUNT package with cash on delivery, tipped by the business (on account), and a CASH package.
    const withCod = await packageInTransit(ana!, { cashOnDelivery: { amount: 40_000 } });
    await ok(await post(t, `/api/packages/${withCod}/deliver`, ana!.headers, { cashCollected: 40_000 }), 'deliver');
    await ok(await post(t, `/api/packages/${withCod}/tip`, business.headers, { amount: 1_000 }), 'tip package');
    const cashPackage = await packageInTransit(ana!, { paymentMethod: 'CASH' });
    await ok(await post(t, `/api/packages/${cashPackage}/deliver`, ana!.headers, {}), 'deliver');
    // Bea (a car): a CASH ride tipped in cash.
    const ride = await rideCompleted(bea!);
    await ok(await post(t, `/api/rides/${ride}/tip`, customer.headers, { amount: 700 }), 'tip ride');
    // Cyd: a cancellation fee and an ACCOUNT package. Dan: nothing. Eve (another company): a package.
    const cancelled = await ok(
      await post(t, '/api/packages', business.headers, packageBody(business.countryId)),
      'create',
    );
    await ok(await post(t, `/api/packages/${cancelled.id}/accept`, cyd!.headers), 'accept');
    await ok(
      await post(t, `/api/packages/${cancelled.id}/cancel`, business.headers, { reason: 'Changed my mind' }),
      'cancel',
    );
    await ok(await post(t, `/api/packages/${await packageInTransit(cyd!)}/deliver`, cyd!.headers, {}), 'deliver');
    await ok(
      await post(t, `/api/packages/${await packageInTransit(stranger)}/deliver`, stranger.headers, {}),
      'deliver',
    );

    for (const w of [window(), { from: '2020-01-01', to: '2020-01-02' }]) {
      const res = await get(t, `/api/companies/me/earnings?${query(w)}`, company.headers);
      assert.equal(res.statusCode, 200, res.body);
      const report = res.json();
      assert.deepEqual(
        [report.companyId, report.from, report.to],
        [company.id, new Date(w.from).toISOString(), new Date(w.to).toISOString()],
      );
      assert.deepEqual(
        report.drivers.map((d: { driverId: string; firstName: string; lastName: string }) => [
          d.driverId,
          d.firstName,
          d.lastName,
        ]),
        [ana, bea, cyd, dan].map((d, i) => [d!.id, ['Ana', 'Bea', 'Cyd', 'Dan'][i], 'Driver']),
        "the company's drivers by name, not another company's",
      );
      for (const [i, driver] of [ana, bea, cyd, dan].entries()) {
        const own = await get(t, `/api/drivers/me/earnings?${query(w)}`, driver!.headers);
        assert.equal(own.statusCode, 200, own.body);
        const { totals, balances } = own.json();
        assert.deepEqual(
          report.drivers[i],
          { driverId: driver!.id, firstName: report.drivers[i].firstName, lastName: 'Driver', totals, balances },
          `driver ${i}`,
        );
      }
    }

    // The figures themselves (the window with the jobs): tips, cash on delivery, cash tips, the fee.
    const report = (await get(t, `/api/companies/me/earnings?${query(window())}`, company.headers)).json();
    const totalsOf = (i: number) =>
      report.drivers[i].totals.map(
        ({ currency, jobs, amount, earnings, tips, cashCollected }: Record<string, unknown>) => [
          currency,
          jobs,
          amount,
          earnings,
          tips,
          cashCollected,
        ],
      );
    assert.deepEqual(totalsOf(0), [['KES', 2, 2 * PRICE, 2 * 8_500, 1_000, 40_000 + PRICE]]);
    assert.deepEqual(totalsOf(1), [['KES', 1, PRICE, 8_500, 700, PRICE + 700]]);
    assert.deepEqual(totalsOf(2), [['KES', 2, 5_000 + PRICE, 4_250 + 8_500, 0, 0]]);
    assert.deepEqual(report.drivers[3].totals, []);
    assert.deepEqual(report.drivers[3].balances, [], 'a driver with no account has no balance');
    for (const [i, d] of [ana, bea, cyd].entries())
      assert.deepEqual(report.drivers[i].balances, [{ currency: 'KES', balance: await balanceOf(t, 'DRIVER', d!.id) }]);
    await assertBooks(t);
  });

  test('the statements a request runs do not depend on the number of drivers (2 and 20)', async (ctx) => {
    const companyOf = async (drivers: number) => {
      const company = await createUser(t, { role: 'COMPANY' });
      for (let i = 0; i < drivers; i++) {
        const d = await createUser(t, { role: 'DRIVER', session: false, driver: { companyId: company.id } });
        await earn(t, d.id, business.id, 8_000 + i);
        await collectCash(t, d.id, 12_000);
        await cashOnDelivery(t, d.id, business.id, 3_000);
      }
      return company;
    };
    const small = await companyOf(2);
    const large = await companyOf(20);
    /** The fewest statements of three requests (work in the background can only add to a count). */
    const statementsOf = async (company: TestUser) => {
      const counts: number[] = [];
      for (let i = 0; i < 3; i++) {
        statements = 0;
        counting = true;
        const res = await get(t, `/api/companies/me/earnings?${query(window())}`, company.headers);
        counting = false;
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(
          res.json().drivers.every((d: { totals: unknown[] }) => d.totals.length === 1),
          true,
        );
        counts.push(statements);
      }
      return Math.min(...counts);
    };
    const forSmall = await statementsOf(small);
    const forLarge = await statementsOf(large);
    ctx.diagnostic(`statements per request: ${forSmall} for 2 drivers, ${forLarge} for 20`);
    assert.equal(forLarge, forSmall, `2 drivers: ${forSmall} statements, 20 drivers: ${forLarge}`);
    assert.ok(forSmall <= 4, `a handful of statements (${forSmall})`);
  });
});
