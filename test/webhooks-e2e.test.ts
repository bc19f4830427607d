// End to end through the HTTP API: a business registers an endpoint, a driver takes its package through
// the lifecycle, and the in-process worker delivers every event, signed, in order.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signHex, verifyStandard } from '../src/modules/webhooks/webhook-signature.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';
import { packageBody, post, setDriverPosition } from './packages-helpers.js';
import { startReceiver, type TestReceiver } from './webhooks-receiver.js';

describe('webhooks end to end', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    t = await buildTestApp({ env: { WEBHOOK_WORKER_IN_PROCESS: 'true' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('a package lifecycle through the API reaches the business endpoint in order, signed both ways', async () => {
    const business = await createUser(t, { role: 'BUSINESS' });
    const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'BIKE', availability: 'ONLINE' } });
    await setDriverPosition(t, driver.id, -1.2864, 36.8172);
    const created = await post(t, '/api/webhooks', business.headers, { url: receiver.url });
    assert.equal(created.statusCode, 201, created.body);
    const { secret } = created.json() as { secret: string };

    const pkg = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(pkg.statusCode, 201, pkg.body);
    const packageId = pkg.json().id as string;
    for (const action of ['accept', 'pickup', 'start', 'deliver']) {
      const res = await post(t, `/api/packages/${packageId}/${action}`, driver.headers);
      assert.equal(res.statusCode, 200, `${action}: ${res.body}`);
    }
    await receiver.waitFor(4, 5000);
    const bodies = receiver.received.map((r) => JSON.parse(r.body));
    assert.deepEqual(
      bodies.map((b) => [b.event, b.delivery_id, b.status]),
      [
        ['delivery.assigned', packageId, 'ASSIGNED'],
        ['delivery.picked_up', packageId, 'PICKED_UP'],
        ['delivery.in_transit', packageId, 'IN_TRANSIT'],
        ['delivery.delivered', packageId, 'DELIVERED'],
      ],
    );
    const history = (
      await t.app.inject({ method: 'GET', url: `/api/packages/${packageId}`, headers: business.headers })
    ).json().statusHistory as { status: string; at: string }[];
    for (const [i, r] of receiver.received.entries()) {
      assert.equal(
        bodies[i].timestamp,
        history.find((h) => h.status === bodies[i].status)?.at,
        'timestamp is the time of the change',
      );
      assert.equal(r.headers['x-service-signature'], signHex(secret, r.body));
      const now = Number(r.headers['webhook-timestamp']);
      assert.ok(
        verifyStandard(
          secret,
          {
            id: r.headers['webhook-id'] as string,
            timestamp: r.headers['webhook-timestamp'] as string,
            signature: r.headers['webhook-signature'] as string,
          },
          r.body,
          now,
        ),
      );
    }
    assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 4);
  });
});
