// What a company reads of packages (contract section 9): the PENDING packages of its country with only
// what deciding to take one needs, its drivers' packages in full but for the tracking link, and
// nothing of the packages other companies' drivers took.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';
import { get, notFoundBody, packageBody, post } from './packages-helpers.js';

describe("a company's view of packages", () => {
  let t: TestApp;
  let base: string;
  let business: TestUser;
  let customer: TestUser;
  let company: TestUser;
  let otherCompany: TestUser;
  let driver: TestUser;
  let otherDriver: TestUser;
  let admin: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    business = await createUser(t, { role: 'BUSINESS' });
    customer = await createUser(t, { role: 'CUSTOMER' });
    company = await createUser(t, { role: 'COMPANY' });
    otherCompany = await createUser(t, { role: 'COMPANY' });
    driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', companyId: company.id } });
    otherDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: otherCompany.id },
    });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => t.close());

  const create = async () => {
    const body = packageBody(business.countryId, {
      customerId: customer.id,
      reference: 'ORD-77 for Jane Doe',
      requireDeliveryCode: true,
    });
    const res = await post(t, '/api/packages', business.headers, body);
    assert.equal(res.statusCode, 201);
    return res.json();
  };
  const listed = async (who: TestUser, query = '') =>
    (await get(t, `/api/packages?limit=100${query}`, who.headers)).json().items as Record<string, unknown>[];
  const byCreator = async (id: string) => (await get(t, `/api/packages/${id}`, business.headers)).json();

  test("someone else's PENDING package: listed with points, addresses, parcel, vehicle type and price only", async () => {
    const pkg = await create();
    // Released once, with a driver's reason in its history: not for the company either.
    const passer = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, passer.headers)).statusCode, 200);
    assert.equal(
      (
        await post(t, `/api/packages/${pkg.id}/release`, passer.headers, {
          reason: 'The customer Jane Doe called me names',
        })
      ).statusCode,
      200,
    );
    const full = await byCreator(pkg.id);
    assert.equal(full.statusHistory.at(-1).reason, 'The customer Jane Doe called me names');

    const expected = {
      id: pkg.id,
      status: 'PENDING',
      orderType: 'PACKAGE_DELIVERY',
      vehicleType: 'BIKE',
      countryId: business.countryId,
      businessId: business.id,
      pickup: { location: { lat: -1.2864, lng: 36.8172 }, address: 'Moi Avenue 1, Nairobi' },
      dropoff: { location: { lat: -1.3, lng: 36.8 }, address: 'Moi Avenue 1, Nairobi' },
      parcel: { description: 'Documents', weightKg: 1.5, size: 'SMALL' },
      driver: null,
      statusHistory: full.statusHistory.map((h: { status: string; at: string }) => ({ status: h.status, at: h.at })),
      createdAt: full.createdAt,
      updatedAt: full.updatedAt,
      dispatch: { state: 'OFF', attempts: 0 },
      // The promise (section 22) is part of deciding to take it.
      pickupWindow: null,
      dropoffWindow: null,
      timeZone: 'Africa/Nairobi',
      // Its promise and risk (section 23): part of deciding to take it too.
      sla: full.sla,
      price: full.price,
      cancellationFee: null,
      // What delivering will need (part of deciding to take it); no proof before pickup.
      proofRequired: [],
      proof: null,
    };
    for (const query of ['', '&status=PENDING']) {
      assert.deepEqual(
        (await listed(company, query)).find((p) => p.id === pkg.id),
        expected,
        query,
      );
    }
    // Nor by id, nor its live events: a company follows only its own drivers' jobs.
    assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, company.headers)).json(), notFoundBody('Package'));
    assert.equal((await get(t, `/api/packages/${pkg.id}/track`, company.headers)).statusCode, 404);
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test("once one of its drivers is assigned: everything but the tracking link, by id, in the list and in the assignment's answer", async () => {
    const pkg = await create();
    const assigned = await post(t, `/api/packages/${pkg.id}/assign`, company.headers, { driverId: driver.id });
    assert.equal(assigned.statusCode, 200);
    // The creator's copy read first, so that the company's read comes from the read cache too.
    const { trackingUrl, cancellationFeeNow: _creatorsFee, ...creatorsCopy } = await byCreator(pkg.id);
    // ... plus its driver's earnings, which the company sees and the creator does not (section 21).
    const withoutLink = {
      ...creatorsCopy,
      earnings: (await get(t, `/api/packages/${pkg.id}`, driver.headers)).json().earnings,
    };
    assert.equal(withoutLink.earnings.currency, 'KES');
    assert.match(trackingUrl, /\/t\//);
    assert.equal(withoutLink.pickup.contactName, 'Wanjiru');
    assert.equal(withoutLink.dropoff.notes, 'Gate B');
    assert.equal(withoutLink.reference, 'ORD-77 for Jane Doe');
    assert.deepEqual(assigned.json(), withoutLink);
    for (let read = 0; read < 2; read += 1)
      assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, company.headers)).json(), withoutLink, `read ${read}`);
    assert.deepEqual(
      (await listed(company, '&status=ASSIGNED')).find((p) => p.id === pkg.id),
      withoutLink,
    );
    assert.ok(!JSON.stringify(await listed(company)).includes(trackingUrl), 'the link is in no list item');
    // Its driver sees the package as before (the link included).
    assert.equal((await get(t, `/api/packages/${pkg.id}`, driver.headers)).json().trackingUrl, trackingUrl);
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test("a package another company's driver took: 404 by id and on its stream, absent from every list", async () => {
    const pkg = await create();
    assert.equal((await post(t, `/api/packages/${pkg.id}/accept`, otherDriver.headers)).statusCode, 200);
    assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, company.headers)).json(), notFoundBody('Package'));
    assert.equal((await get(t, `/api/packages/${pkg.id}/track`, company.headers)).statusCode, 404);
    for (const query of ['', '&status=ASSIGNED', '&status=PENDING'])
      assert.equal(
        (await listed(company, query)).some((p) => p.id === pkg.id),
        false,
        query,
      );
    assert.deepEqual(
      (await post(t, `/api/packages/${pkg.id}/assign`, company.headers, { driverId: driver.id })).json(),
      notFoundBody('Package'),
    );
    // The other company sees it whole, but for the link.
    const { trackingUrl: _link, cancellationFeeNow: _creatorsFee, ...withoutLink } = await byCreator(pkg.id);
    const earnings = (await get(t, `/api/packages/${pkg.id}`, otherDriver.headers)).json().earnings;
    assert.deepEqual((await get(t, `/api/packages/${pkg.id}`, otherCompany.headers)).json(), {
      ...withoutLink,
      earnings,
    });
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });

  test("the account stream tells a company of its drivers' packages only", async () => {
    t.clock.advance(5000);
    const ourDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: company.id },
    });
    const theirDriver = await createUser(t, {
      role: 'DRIVER',
      driver: { availability: 'ONLINE', companyId: otherCompany.id },
    });
    const stream = await SseClient.open(`${base}/api/events/stream`, company.headers);
    assert.equal(stream.status, 200);
    const open = await create();
    const theirs = await create();
    assert.equal((await post(t, `/api/packages/${theirs.id}/accept`, theirDriver.headers)).statusCode, 200);
    const ours = await create();
    assert.equal((await post(t, `/api/packages/${ours.id}/accept`, ourDriver.headers)).statusCode, 200);
    await stream.until((c) => c.of('status').length >= 1);
    await post(t, `/api/packages/${ours.id}/cancel`, business.headers, { reason: 'Not needed' });
    await stream.until((c) => c.of('status').length >= 2);
    assert.deepEqual(
      stream.json('status').map((s) => [s.jobId, s.status]),
      [
        [ours.id, 'ASSIGNED'],
        [ours.id, 'CANCELLED'],
      ],
    );
    assert.ok(!stream.events.some((e) => e.data.includes(open.id) || e.data.includes(theirs.id)));
    stream.close();
    for (const p of [open, theirs]) await post(t, `/api/packages/${p.id}/cancel`, business.headers);
  });

  test('the OpenAPI document says which fields a company may not see', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const schema = doc.paths['/api/packages/{id}'].get.responses['200'].content['application/json'].schema;
    const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)] : schema;
    for (const field of ['trackingUrl', 'reference', 'customerId']) {
      assert.ok(!resolved.required.includes(field), field);
      assert.match(resolved.properties[field].description, /compan/i, field);
    }
    const stop = resolved.properties.pickup.$ref
      ? doc.components.schemas[resolved.properties.pickup.$ref.split('/').at(-1)]
      : resolved.properties.pickup;
    assert.deepEqual(stop.required.sort(), ['address', 'location']);
    // The statement is the business's own: no company reads it.
    assert.equal(
      (await get(t, '/api/businesses/me/statement?from=2026-01-01&to=2026-02-01', company.headers)).statusCode,
      403,
    );
    assert.equal((await get(t, '/api/packages', admin.headers)).statusCode, 200);
  });
});
