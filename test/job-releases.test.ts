// Releases (contract section 13, "Releases"): a driver who handed a job back (or had it taken back by
// an admin) never takes it again; a job released more than DISPATCH_MAX_RELEASES times is flagged.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post, rideBody, setDriverPosition } from './packages-helpers.js';

const releasedByYou = (noun: 'package' | 'ride') => ({
  statusCode: 409,
  message: `You released this ${noun}: it cannot be yours again`,
  error: 'Conflict',
  code: 'JOB_RELEASED_BY_YOU',
});

describe('releases: never to the same driver again, flagged after DISPATCH_MAX_RELEASES', () => {
  let t: TestApp;
  let business: TestUser;
  let customer: TestUser;
  let company: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MAX_RELEASES: '2' } });
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const bikeDriver = (companyId: string | null = null) =>
    createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', companyId } });
  const carDriver = () => createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType: 'CAR' } });
  const newPackage = async () => {
    const res = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(res.statusCode, 201);
    return res.json() as { id: string };
  };
  const newRide = async () => {
    const res = await post(t, '/api/rides', customer.headers, rideBody(customer.countryId));
    assert.equal(res.statusCode, 201);
    return res.json() as { id: string };
  };
  const activeJob = async (driverId: string) =>
    (
      await t.db
        .selectFrom('driver_profiles')
        .select('active_job_id')
        .where('user_id', '=', driverId)
        .executeTakeFirstOrThrow()
    ).active_job_id;
  const statuses = async (id: string) =>
    (await get(t, `/api/packages/${id}`, admin.headers)).json().statusHistory.map((h: { status: string }) => h.status);

  test('a driver who released a package cannot take it back: direct accept, an offer, or its company assigning it', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver(company.id);
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/release`, driver.headers, { reason: 'Flat tyre' })).statusCode,
      200,
    );

    const again = await post(t, `/api/packages/${pkg.id}/accept`, driver.headers);
    assert.deepEqual(again.json(), releasedByYou('package'));
    // Nothing moved: no history entry, no delivery.assigned, the driver free.
    assert.deepEqual(await statuses(pkg.id), ['PENDING', 'ASSIGNED', 'PENDING']);
    assert.equal(await activeJob(driver.id), null);

    // An offer to that driver (say, one made by an older version) is refused the same way on accept.
    const offerId = randomUUID();
    const now = t.clock.now();
    await t.db
      .insertInto('dispatch_offers')
      .values({
        id: offerId,
        job_type: 'PACKAGE',
        job_id: pkg.id,
        driver_id: driver.id,
        state: 'OPEN',
        offer: JSON.stringify({ id: offerId }),
        choice: JSON.stringify({ etaSeconds: 1, distanceMeters: 1, radiusMeters: 5000, candidates: 1, skipped: [] }),
        created_at: now,
        expires_at: new Date(now.getTime() + 20_000),
        answered_at: null,
      })
      .execute();
    assert.deepEqual((await post(t, `/api/offers/${offerId}/accept`, driver.headers)).json(), releasedByYou('package'));

    // Its company cannot hand it back to that driver either; another of its drivers may take it.
    const byCompany = await post(t, `/api/packages/${pkg.id}/assign`, company.headers, { driverId: driver.id });
    assert.deepEqual(byCompany.json(), {
      statusCode: 409,
      message: 'This driver released this package: it cannot be theirs again',
      error: 'Conflict',
      code: 'JOB_RELEASED_BY_DRIVER',
    });
    assert.deepEqual(await statuses(pkg.id), ['PENDING', 'ASSIGNED', 'PENDING']);
    const colleague = await bikeDriver(company.id);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/assign`, company.headers, { driverId: colleague.id })).json().driver.id,
      colleague.id,
    );
  });

  test('a driver whose package an admin took back cannot take it again; an admin may still assign it to that driver', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver();
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    assert.equal(
      (await post(t, `/api/admin/jobs/PACKAGE/${pkg.id}/release`, admin.headers, { reason: 'Driver unreachable' }))
        .statusCode,
      200,
    );
    assert.deepEqual(
      (await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).json(),
      releasedByYou('package'),
    );
    const byAdmin = await post(t, `/api/packages/${pkg.id}/assign`, admin.headers, { driverId: driver.id });
    assert.equal(byAdmin.statusCode, 200);
    assert.equal(byAdmin.json().driver.id, driver.id);
  });

  test("rides too: released by the driver or by an admin, the ride is never that driver's again", async () => {
    for (const releasedBy of ['driver', 'admin'] as const) {
      const ride = await newRide();
      const driver = await carDriver();
      assert.equal((await post(t, `/api/rides/${ride.id}/accept`, driver.headers)).statusCode, 200);
      const release =
        releasedBy === 'driver'
          ? await post(t, `/api/rides/${ride.id}/release`, driver.headers, { reason: 'Too far' })
          : await post(t, `/api/admin/jobs/RIDE/${ride.id}/release`, admin.headers, { reason: 'Driver unreachable' });
      assert.equal(release.json().status, 'REQUESTED');
      assert.deepEqual(
        (await post(t, `/api/rides/${ride.id}/accept`, driver.headers)).json(),
        releasedByYou('ride'),
        releasedBy,
      );
      assert.equal((await get(t, `/api/rides/${ride.id}`, admin.headers)).json().status, 'REQUESTED');
      assert.equal(await activeJob(driver.id), null);
      assert.equal((await post(t, `/api/rides/${ride.id}/accept`, (await carDriver()).headers)).statusCode, 200);
    }
  });

  test('the nearby jobs list leaves out what the driver released', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver();
    await setDriverPosition(t, driver.id, -1.2864, 36.8172);
    const nearby = async () =>
      (await get(t, '/api/drivers/me/jobs/nearby?limit=100', driver.headers))
        .json()
        .items.map((j: { id: string }) => j.id);
    assert.ok((await nearby()).includes(pkg.id));
    await post(t, `/api/packages/${pkg.id}/accept`, driver.headers);
    await post(t, `/api/packages/${pkg.id}/release`, driver.headers, { reason: 'Flat tyre' });
    assert.equal((await nearby()).includes(pkg.id), false);
  });

  test('concurrent accepts by the driver who released the job, with another driver among them: only the other one wins', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver();
    const other = await bikeDriver();
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
    assert.equal(
      (await post(t, `/api/packages/${pkg.id}/release`, driver.headers, { reason: 'Flat tyre' })).statusCode,
      200,
    );
    const accepts = await Promise.all(
      [...Array.from({ length: 8 }, () => driver), other].map((d) =>
        post(t, `/api/packages/${pkg.id}/accept`, d.headers),
      ),
    );
    assert.deepEqual(
      accepts.map((a) => a.statusCode),
      [409, 409, 409, 409, 409, 409, 409, 409, 200],
    );
    assert.deepEqual(await statuses(pkg.id), ['PENDING', 'ASSIGNED', 'PENDING', 'ASSIGNED']);
    assert.equal(await activeJob(driver.id), null);
  });

  test('the refusal lives in the database: a release through one instance is refused on another', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver();
    const other = await buildTestApp({ database: t.database, clock: t.clock });
    try {
      assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
      assert.equal(
        (await post(t, `/api/packages/${pkg.id}/release`, driver.headers, { reason: 'Flat tyre' })).statusCode,
        200,
      );
      assert.deepEqual(
        (await post(other, `/api/packages/${pkg.id}/accept`, driver.headers)).json(),
        releasedByYou('package'),
      );
    } finally {
      await other.close();
    }
  });

  test('a job released more than DISPATCH_MAX_RELEASES times is flagged: the admin log, a metric and a log line', async () => {
    const flaggedMetric = async (jobType: string) => {
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      const line = metrics.split('\n').find((l) => l.startsWith(`dispatch_flagged_jobs_total{jobType="${jobType}"}`));
      return line ? Number(line.split(' ').at(-1)) : 0;
    };
    for (const kind of ['PACKAGE', 'RIDE'] as const) {
      const job = kind === 'PACKAGE' ? await newPackage() : await newRide();
      const collection = kind === 'PACKAGE' ? 'packages' : 'rides';
      const flaggedBefore = await flaggedMetric(kind);
      const log = async () => {
        const body = (await get(t, `/api/admin/dispatch/${job.id}`, admin.headers)).json();
        return { releaseCount: body.releaseCount, flagged: body.flagged, releases: body.releases.length };
      };
      assert.deepEqual(await log(), { releaseCount: 0, flagged: false, releases: 0 });
      for (let i = 1; i <= 3; i += 1) {
        const driver = kind === 'PACKAGE' ? await bikeDriver() : await carDriver();
        assert.equal((await post(t, `/api/${collection}/${job.id}/accept`, driver.headers)).statusCode, 200);
        assert.equal(
          (await post(t, `/api/${collection}/${job.id}/release`, driver.headers, { reason: `Release ${i}` }))
            .statusCode,
          200,
        );
        assert.deepEqual(await log(), { releaseCount: i, flagged: i > 2, releases: i }, `${kind} after ${i} releases`);
        const warnings = t.logLines
          .map((l) => JSON.parse(l))
          .filter((l) => l.jobId === job.id && l.msg?.includes('DISPATCH_MAX_RELEASES'));
        assert.equal(warnings.length, i > 2 ? 1 : 0);
        if (i > 2)
          assert.deepEqual(
            [warnings[0].level, warnings[0].jobType, warnings[0].releases, warnings[0].maxReleases],
            [40, kind, 3, 2],
          );
      }
      assert.equal(await flaggedMetric(kind), flaggedBefore + 1);
    }
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const schema = doc.paths['/api/admin/dispatch/{jobId}'].get.responses['200'].content['application/json'].schema;
    assert.ok(schema.required.includes('releaseCount') && schema.required.includes('flagged'));
  });

  test('releases counted across the history: a job released by the same driver before this rule existed counts each time', async () => {
    const pkg = await newPackage();
    const driver = await bikeDriver();
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, driver.headers)).statusCode, 200);
      assert.equal(
        (await post(t, `/api/packages/${pkg.id}/release`, driver.headers, { reason: 'again' })).statusCode,
        200,
      );
      // As the releases before this rule were recorded: the driver's row kept, its refusal forgotten.
      if (i < 2) await sql`delete from dispatch_releases where job_id = ${pkg.id}`.execute(t.db);
    }
    const body = (await get(t, `/api/admin/dispatch/${pkg.id}`, admin.headers)).json();
    assert.deepEqual([body.releaseCount, body.flagged], [3, true]);
  });
});
