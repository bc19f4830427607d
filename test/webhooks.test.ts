// Outbound webhooks: endpoint management, the outbox, signing, ordering, retries and URL safety.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { recordDeliveryEvent, type DeliveryEventName } from '../src/modules/webhooks/outbox.js';
import { signHex, verifyStandard } from '../src/modules/webhooks/webhook-signature.js';
import { OutboxRepository } from '../src/modules/webhooks/outbox.repository.js';
import { WebhookWorker } from '../src/modules/webhooks/webhook-worker.js';
import { startReceiver, type TestReceiver } from './webhooks-receiver.js';

const LIFECYCLE: [DeliveryEventName, string][] = [
  ['delivery.assigned', 'ASSIGNED'],
  ['delivery.picked_up', 'PICKED_UP'],
  ['delivery.in_transit', 'IN_TRANSIT'],
  ['delivery.delivered', 'DELIVERED'],
];

function workerFor(t: TestApp, overrides: Partial<TestApp['deps']['config']> = {}) {
  return new WebhookWorker({
    db: t.db,
    repo: new OutboxRepository(t.db),
    clock: t.clock,
    logger: t.deps.logger,
    config: { ...t.deps.config, ...overrides },
    registry: t.deps.metrics.registry,
  });
}

async function createEndpoint(t: TestApp, user: TestUser, body: Record<string, unknown>) {
  const res = await t.app.inject({ method: 'POST', url: '/api/webhooks', headers: user.headers, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; secret: string; url: string; events: string[] };
}

async function record(
  t: TestApp,
  businessId: string | null,
  packageId: string,
  event: DeliveryEventName,
  status: string,
) {
  const occurredAt = t.clock.now();
  await t.db
    .transaction()
    .execute((trx) => recordDeliveryEvent(trx, { packageId, businessId, event, status, occurredAt }));
  return occurredAt;
}

/** A receiver of the test's own, so other tests' traffic never shows up in its counts. */
async function ownReceiver(ctx: { after(fn: () => Promise<void>): void }) {
  const receiver = await startReceiver();
  ctx.after(() => receiver.close());
  return receiver;
}

async function deliveries(t: TestApp, user: TestUser, endpointId: string, query = '') {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/webhooks/${endpointId}/deliveries${query}`,
    headers: user.headers,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { items: any[]; nextCursor: string | null };
}

describe('webhooks', () => {
  let t: TestApp;
  let business: TestUser;
  let other: TestUser;
  let receiver: TestReceiver;

  before(async () => {
    t = await buildTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '5s,30s', WEBHOOK_TIMEOUT: '2s' } });
    business = await createUser(t, { role: 'BUSINESS' });
    other = await createUser(t, { role: 'BUSINESS' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('a business registers, reads, lists, changes, rotates and deletes an endpoint', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: business.headers,
      payload: { url: receiver.url, description: 'orders' },
    });
    assert.equal(created.statusCode, 201);
    const endpoint = created.json();
    assert.deepEqual(Object.keys(endpoint).sort(), [
      'createdAt',
      'description',
      'disabledReason',
      'enabled',
      'events',
      'id',
      'secret',
      'updatedAt',
      'url',
    ]);
    assert.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(endpoint.secret.slice(6), 'base64').length, 32);
    assert.deepEqual(endpoint.events, [
      'delivery.assigned',
      'delivery.picked_up',
      'delivery.in_transit',
      'delivery.delivered',
      'delivery.failed',
      'delivery.cancelled',
    ]);
    assert.equal(endpoint.enabled, true);
    assert.equal(endpoint.description, 'orders');

    const got = await t.app.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}`, headers: business.headers });
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().secret, undefined, 'the secret is never shown again');
    assert.equal(got.json().url, receiver.url);

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/api/webhooks/${endpoint.id}`,
      headers: business.headers,
      payload: { events: ['delivery.delivered'], enabled: false },
    });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(patched.json().events, ['delivery.delivered']);
    assert.equal(patched.json().enabled, false);
    assert.equal(patched.json().disabledReason, 'DISABLED_BY_USER');

    const rotated = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/${endpoint.id}/rotate-secret`,
      headers: business.headers,
    });
    assert.equal(rotated.statusCode, 200);
    assert.match(rotated.json().secret, /^whsec_/);
    assert.notEqual(rotated.json().secret, endpoint.secret);

    const list = await t.app.inject({ method: 'GET', url: '/api/webhooks?limit=100', headers: business.headers });
    assert.ok(list.json().items.some((e: { id: string }) => e.id === endpoint.id));
    const otherList = await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: other.headers });
    assert.equal(
      otherList.json().items.some((e: { id: string }) => e.id === endpoint.id),
      false,
    );

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/api/webhooks/${endpoint.id}`,
      headers: business.headers,
    });
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    const gone = await t.app.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}`, headers: business.headers });
    assert.deepEqual(gone.json(), {
      statusCode: 404,
      message: 'Webhook endpoint not found',
      error: 'Not Found',
      code: 'WEBHOOK_NOT_FOUND',
    });
  });

  test('the endpoint list is paginated newest first', async () => {
    const owner = await createUser(t, { role: 'BUSINESS' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await createEndpoint(t, owner, { url: `${receiver.url}?n=${i}` })).id);
      t.clock.advance(1000);
    }
    const first = await t.app.inject({ method: 'GET', url: '/api/webhooks?limit=2', headers: owner.headers });
    assert.deepEqual(
      first.json().items.map((e: { id: string }) => e.id),
      [ids[2], ids[1]],
    );
    const second = await t.app.inject({
      method: 'GET',
      url: `/api/webhooks?limit=2&cursor=${first.json().nextCursor}`,
      headers: owner.headers,
    });
    assert.deepEqual(second.json(), { items: [second.json().items[0]], nextCursor: null });
    assert.equal(second.json().items[0].id, ids[0]);
  });

  test('another business cannot see, change or use an endpoint or a delivery (404)', async () => {
    const endpoint = await createEndpoint(t, business, { url: receiver.url });
    const packageId = randomUUID();
    await record(t, business.id, packageId, 'delivery.assigned', 'ASSIGNED');
    const [delivery] = (await deliveries(t, business, endpoint.id)).items;
    const notFound = {
      statusCode: 404,
      message: 'Webhook endpoint not found',
      error: 'Not Found',
      code: 'WEBHOOK_NOT_FOUND',
    };
    for (const [method, url, payload] of [
      ['GET', `/api/webhooks/${endpoint.id}`],
      ['PATCH', `/api/webhooks/${endpoint.id}`, { enabled: false }],
      ['DELETE', `/api/webhooks/${endpoint.id}`],
      ['POST', `/api/webhooks/${endpoint.id}/rotate-secret`],
      ['GET', `/api/webhooks/${endpoint.id}/deliveries`],
      ['POST', `/api/webhooks/${endpoint.id}/test`],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: other.headers, ...(payload ? { payload } : {}) });
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), notFound);
    }
    const retry = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/deliveries/${delivery.id}/retry`,
      headers: other.headers,
    });
    assert.deepEqual(retry.json(), {
      statusCode: 404,
      message: 'Webhook delivery not found',
      error: 'Not Found',
      code: 'WEBHOOK_DELIVERY_NOT_FOUND',
    });
    // Still there, unchanged, for its owner.
    const mine = await t.app.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}`, headers: business.headers });
    assert.equal(mine.json().enabled, true);
    await workerFor(t).drain();
  });

  test('only an ACTIVE business may manage endpoints, and every input is validated', async () => {
    const customer = await createUser(t, { role: 'CUSTOMER' });
    const pending = await createUser(t, { role: 'BUSINESS', status: 'PENDING_APPROVAL' });
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/webhooks' })).statusCode, 401);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/api/webhooks', headers: customer.headers })).statusCode,
      403,
    );
    assert.equal(
      (
        await t.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: pending.headers,
          payload: { url: receiver.url },
        })
      ).statusCode,
      403,
    );

    const bad = async (payload: unknown, message: string, code = 'VALIDATION_FAILED') => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: business.headers,
        payload: payload as object,
      });
      assert.deepEqual(res.json(), { statusCode: 400, message, error: 'Bad Request', code });
    };
    await bad({}, 'body.url is required');
    await bad({ url: 'ftp://example.com/x' }, 'url must use http or https', 'INVALID_WEBHOOK_URL');
    await bad({ url: 'nonsense' }, 'url must be an absolute URL', 'INVALID_WEBHOOK_URL');
    await bad(
      { url: receiver.url, events: ['delivery.exploded'] },
      'body.events.0 must be one of delivery.assigned, delivery.picked_up, delivery.in_transit, delivery.delivered, delivery.failed, delivery.cancelled, alert.raised',
    );
    await bad({ url: receiver.url, events: [] }, 'body.events must NOT have fewer than 1 items');
    await bad({ url: receiver.url, secret: 'mine' }, 'body has an unknown property "secret"');
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/webhooks/${randomUUID()}`,
      headers: business.headers,
      payload: {},
    });
    assert.equal(patch.statusCode, 400);
    const malformed = await t.app.inject({ method: 'GET', url: '/api/webhooks/not-a-uuid', headers: business.headers });
    assert.equal(malformed.statusCode, 400);
    const badCursor = await t.app.inject({ method: 'GET', url: '/api/webhooks?cursor=zzz', headers: business.headers });
    assert.deepEqual(badCursor.json(), {
      statusCode: 400,
      message: 'Invalid cursor',
      error: 'Bad Request',
      code: 'INVALID_CURSOR',
    });
  });

  test('a business has at most 10 endpoints', async () => {
    const owner = await createUser(t, { role: 'BUSINESS' });
    for (let i = 0; i < 10; i++) await createEndpoint(t, owner, { url: receiver.url });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: owner.headers,
      payload: { url: receiver.url },
    });
    assert.deepEqual(res.json(), {
      statusCode: 409,
      message: 'A business can have at most 10 webhook endpoints',
      error: 'Conflict',
      code: 'WEBHOOK_LIMIT_REACHED',
    });
  });

  test('a package lifecycle reaches the receiver signed both ways, with the exact body and headers, in order', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: receiver.url });
    receiver.received.length = 0;
    const packageId = randomUUID();
    const times: Date[] = [];
    for (const [event, status] of LIFECYCLE) {
      times.push(await record(t, owner.id, packageId, event, status));
      t.clock.advance(1500);
    }
    const worker = workerFor(t);
    await worker.drain();
    assert.equal(receiver.received.length, 4);
    const log = (await deliveries(t, owner, endpoint.id)).items;
    const now = Math.floor(t.clock.now().getTime() / 1000);
    receiver.received.forEach((got, i) => {
      const [event, status] = LIFECYCLE[i];
      assert.equal(
        got.body,
        JSON.stringify({ event, delivery_id: packageId, status, timestamp: times[i].toISOString() }),
      );
      assert.deepEqual(Object.keys(JSON.parse(got.body)), ['event', 'delivery_id', 'status', 'timestamp']);
      assert.equal(got.headers['content-type'], 'application/json');
      assert.equal(got.headers['x-service-event'], event);
      assert.equal(got.headers['x-service-signature'], signHex(endpoint.secret, got.body));
      const id = got.headers['webhook-id'] as string;
      assert.ok(
        log.some((d) => d.id === id && d.event === event),
        'webhook-id is the delivery log id',
      );
      assert.equal(got.headers['webhook-timestamp'], String(now));
      assert.ok(
        verifyStandard(
          endpoint.secret,
          {
            id,
            timestamp: got.headers['webhook-timestamp'] as string,
            signature: got.headers['webhook-signature'] as string,
          },
          got.body,
          now,
        ),
      );
    });
    for (const d of log) {
      assert.equal(d.status, 'SUCCEEDED');
      assert.equal(d.attempts, 1);
      assert.equal(d.lastResponseStatus, 200);
      assert.equal(d.nextAttemptAt, null);
      assert.equal(d.deliveryId, packageId);
    }
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /webhook_deliveries_total\{outcome="succeeded"\} \d+/);
  });

  test('events go only to enabled, subscribed endpoints of the business, and never for a rolled-back change', async () => {
    const owner = await createUser(t, { role: 'BUSINESS' });
    const all = await createEndpoint(t, owner, { url: receiver.url });
    const deliveredOnly = await createEndpoint(t, owner, { url: receiver.url, events: ['delivery.delivered'] });
    const disabled = await createEndpoint(t, owner, { url: receiver.url });
    await t.app.inject({
      method: 'PATCH',
      url: `/api/webhooks/${disabled.id}`,
      headers: owner.headers,
      payload: { enabled: false },
    });
    const foreign = await createEndpoint(t, other, { url: receiver.url });

    const packageId = randomUUID();
    await record(t, owner.id, packageId, 'delivery.assigned', 'ASSIGNED');
    t.clock.advance(1000);
    await record(t, null, packageId, 'delivery.picked_up', 'PICKED_UP');
    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await recordDeliveryEvent(trx, {
          packageId,
          businessId: owner.id,
          event: 'delivery.cancelled',
          status: 'CANCELLED',
          occurredAt: t.clock.now(),
        });
        throw new Error('the status change failed');
      }),
    );
    t.clock.advance(1000);
    await record(t, owner.id, packageId, 'delivery.delivered', 'DELIVERED');

    const events = async (id: string) =>
      (await deliveries(t, id === foreign.id ? other : owner, id)).items.map((d) => d.event).reverse();
    assert.deepEqual(await events(all.id), ['delivery.assigned', 'delivery.delivered']);
    assert.deepEqual(await events(deliveredOnly.id), ['delivery.delivered']);
    assert.deepEqual(await events(disabled.id), []);
    assert.deepEqual(await events(foreign.id), []);
    await workerFor(t).drain();
  });

  test('a failing receiver is retried on the schedule, later events for the package wait, and recovery sends them in order', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: `${receiver.url}/flaky` });
    const packageId = randomUUID();
    await record(t, owner.id, packageId, 'delivery.assigned', 'ASSIGNED');
    await record(t, owner.id, packageId, 'delivery.picked_up', 'PICKED_UP');
    receiver.received.length = 0;
    let failing = true;
    receiver.handler = () => (failing ? { status: 500, body: 'x'.repeat(5000) } : { status: 200 });
    const worker = workerFor(t);
    try {
      await worker.drain();
      assert.equal(receiver.received.length, 1, 'only the first event is tried while it fails');
      let log = (await deliveries(t, owner, endpoint.id)).items;
      const assigned = log.find((d) => d.event === 'delivery.assigned');
      assert.equal(assigned.status, 'PENDING');
      assert.equal(assigned.attempts, 1);
      assert.equal(assigned.lastResponseStatus, 500);
      // The receiver is on loopback (a private target): its body never reaches the log.
      assert.equal(assigned.lastError, 'HTTP 500');
      assert.equal(assigned.nextAttemptAt, new Date(t.clock.now().getTime() + 5000).toISOString());

      t.clock.advance(4000);
      await worker.drain();
      assert.equal(receiver.received.length, 1, 'not before the scheduled time');
      failing = false;
      t.clock.advance(1000);
      await worker.drain();
      assert.deepEqual(
        receiver.received.map((r) => JSON.parse(r.body).event),
        ['delivery.assigned', 'delivery.assigned', 'delivery.picked_up'],
      );
      assert.equal(
        receiver.received[0].headers['webhook-id'],
        receiver.received[1].headers['webhook-id'],
        'webhook-id is stable across retries',
      );
      log = (await deliveries(t, owner, endpoint.id)).items;
      assert.deepEqual(log.map((d) => [d.event, d.status, d.attempts]).sort(), [
        ['delivery.assigned', 'SUCCEEDED', 2],
        ['delivery.picked_up', 'SUCCEEDED', 1],
      ]);
    } finally {
      receiver.handler = () => ({ status: 200 });
    }
  });

  test('an event failing at one endpoint holds back only that endpoint and that package', async (ctx) => {
    // The order check is per package and per endpoint: the other endpoint gets the package's later
    // events at once, and the failing endpoint still gets the other packages' events.
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const down = await createEndpoint(t, owner, { url: `${receiver.url}/down` });
    const up = await createEndpoint(t, owner, { url: `${receiver.url}/up` });
    const stuck = randomUUID();
    const free = randomUUID();
    await record(t, owner.id, stuck, 'delivery.assigned', 'ASSIGNED');
    t.clock.advance(10);
    await record(t, owner.id, stuck, 'delivery.picked_up', 'PICKED_UP');
    await record(t, owner.id, free, 'delivery.assigned', 'ASSIGNED');
    receiver.handler = (r) =>
      r.path.endsWith('/down') && JSON.parse(r.body).delivery_id === stuck ? { status: 500 } : { status: 200 };
    await workerFor(t).drain();
    const sent = (path: string) =>
      receiver.received
        .filter((r) => r.path.endsWith(path))
        .map((r) => `${JSON.parse(r.body).delivery_id === stuck ? 'stuck' : 'free'} ${JSON.parse(r.body).status}`);
    assert.deepEqual(sent('/down').sort(), ['free ASSIGNED', 'stuck ASSIGNED']);
    assert.deepEqual(
      sent('/up').filter((s) => s.startsWith('stuck')),
      ['stuck ASSIGNED', 'stuck PICKED_UP'],
    );
    assert.deepEqual(
      sent('/up').filter((s) => s.startsWith('free')),
      ['free ASSIGNED'],
    );
    const log = (await deliveries(t, owner, down.id)).items;
    assert.deepEqual(
      log.map((d) => [d.deliveryId === stuck ? 'stuck' : 'free', d.event, d.status, d.attempts]).sort(),
      [
        ['free', 'delivery.assigned', 'SUCCEEDED', 1],
        ['stuck', 'delivery.assigned', 'PENDING', 1],
        ['stuck', 'delivery.picked_up', 'PENDING', 0],
      ],
    );
    assert.ok((await deliveries(t, owner, up.id)).items.every((d) => d.status === 'SUCCEEDED'));
  });

  test('after the last retry a delivery is FAILED, and a manual retry sends it again with the same webhook-id', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: receiver.url });
    const packageId = randomUUID();
    await record(t, owner.id, packageId, 'delivery.failed', 'FAILED');
    receiver.received.length = 0;
    receiver.handler = () => ({ status: 502 });
    const worker = workerFor(t);
    try {
      await worker.drain();
      t.clock.advance(5000);
      await worker.drain();
      t.clock.advance(30_000);
      await worker.drain();
      t.clock.advance(120_000);
      await worker.drain();
      assert.equal(receiver.received.length, 3, 'one attempt and the two retries of the schedule');
      const [failed] = (await deliveries(t, owner, endpoint.id)).items;
      assert.equal(failed.status, 'FAILED');
      assert.equal(failed.attempts, 3);
      assert.equal(failed.nextAttemptAt, null);
      assert.equal((await deliveries(t, owner, endpoint.id, '?status=FAILED')).items.length, 1);
      assert.equal((await deliveries(t, owner, endpoint.id, '?status=PENDING')).items.length, 0);

      receiver.handler = () => ({ status: 200 });
      const retry = await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/deliveries/${failed.id}/retry`,
        headers: owner.headers,
      });
      assert.equal(retry.statusCode, 202);
      assert.equal(retry.json().status, 'PENDING');
      const again = await t.app.inject({
        method: 'POST',
        url: `/api/webhooks/deliveries/${failed.id}/retry`,
        headers: owner.headers,
      });
      assert.deepEqual(again.json(), {
        statusCode: 409,
        message: 'Webhook delivery is already pending',
        error: 'Conflict',
        code: 'WEBHOOK_DELIVERY_PENDING',
      });
      await worker.drain();
      assert.equal(receiver.received.length, 4);
      assert.equal(receiver.received[3].headers['webhook-id'], failed.id);
      const [done] = (await deliveries(t, owner, endpoint.id)).items;
      assert.deepEqual([done.status, done.attempts, done.lastError], ['SUCCEEDED', 4, null]);
    } finally {
      receiver.handler = () => ({ status: 200 });
    }
  });

  test('Retry-After on 429 and 503 is honoured', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: receiver.url });
    const worker = workerFor(t);
    try {
      receiver.handler = () => ({ status: 429, headers: { 'retry-after': '120' } });
      await record(t, owner.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
      await worker.drain();
      let [d] = (await deliveries(t, owner, endpoint.id)).items;
      assert.equal(d.nextAttemptAt, new Date(t.clock.now().getTime() + 120_000).toISOString());
      t.clock.advance(60_000);
      receiver.received.length = 0;
      await worker.drain();
      assert.equal(receiver.received.length, 0, 'not before Retry-After');

      receiver.handler = () => ({
        status: 503,
        headers: { 'retry-after': new Date(t.clock.now().getTime() + 600_000).toUTCString() },
      });
      t.clock.advance(60_000);
      await worker.drain();
      [d] = (await deliveries(t, owner, endpoint.id)).items;
      assert.equal(d.lastResponseStatus, 503);
      assert.equal(d.attempts, 2);
      const wait = new Date(d.nextAttemptAt).getTime() - t.clock.now().getTime();
      assert.ok(wait > 590_000 && wait <= 600_000, `HTTP-date Retry-After: ${wait}`);
    } finally {
      receiver.handler = () => ({ status: 200 });
    }
  });

  test('410 Gone disables the endpoint; later events are not recorded for it', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: receiver.url });
    receiver.handler = () => ({ status: 410, body: 'gone' });
    try {
      await record(t, owner.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
      await workerFor(t).drain();
    } finally {
      receiver.handler = () => ({ status: 200 });
    }
    const got = await t.app.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}`, headers: owner.headers });
    assert.equal(got.json().enabled, false);
    assert.equal(got.json().disabledReason, 'GONE');
    const [d] = (await deliveries(t, owner, endpoint.id)).items;
    assert.deepEqual([d.status, d.lastResponseStatus, d.lastError], ['FAILED', 410, 'HTTP 410 (endpoint disabled)']);
    await record(t, owner.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
    assert.equal((await deliveries(t, owner, endpoint.id)).items.length, 1);
    const test410 = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/${endpoint.id}/test`,
      headers: owner.headers,
    });
    assert.deepEqual(test410.json(), {
      statusCode: 409,
      message: 'Webhook endpoint is disabled',
      error: 'Conflict',
      code: 'WEBHOOK_DISABLED',
    });
  });

  test('the test event is sent on request', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const owner = await createUser(t, { role: 'BUSINESS' });
    const endpoint = await createEndpoint(t, owner, { url: receiver.url, events: ['delivery.cancelled'] });
    receiver.received.length = 0;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/${endpoint.id}/test`,
      headers: owner.headers,
    });
    assert.equal(res.statusCode, 202);
    assert.equal(res.json().event, 'webhook.test');
    await workerFor(t).drain();
    assert.equal(receiver.received.length, 1);
    const body = JSON.parse(receiver.received[0].body);
    assert.deepEqual(body, {
      event: 'webhook.test',
      delivery_id: res.json().deliveryId,
      status: 'TEST',
      timestamp: t.clock.now().toISOString(),
    });
    assert.equal(
      receiver.received[0].headers['x-service-signature'],
      signHex(endpoint.secret, receiver.received[0].body),
    );
  });

  test('a receiver slower than WEBHOOK_TIMEOUT is a failed attempt, and it does not hold up other endpoints', async (ctx) => {
    const receiver = await ownReceiver(ctx);
    const slowOwner = await createUser(t, { role: 'BUSINESS' });
    const fastOwner = await createUser(t, { role: 'BUSINESS' });
    const slow = await createEndpoint(t, slowOwner, { url: `${receiver.url}/slow` });
    await createEndpoint(t, fastOwner, { url: `${receiver.url}/fast` });
    receiver.received.length = 0;
    receiver.handler = (r) => (r.path.endsWith('/slow') ? { status: 200, hold: 3000 } : { status: 200 });
    const worker = workerFor(t);
    try {
      for (let i = 0; i < 5; i++) await record(t, slowOwner.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
      const started = Date.now();
      worker.start();
      await receiver.waitFor(5);
      await record(t, fastOwner.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
      t.deps.bus.publish('webhooks.wake', {});
      await receiver.waitFor(6);
      const fast = receiver.received.find((r) => r.path.endsWith('/fast'))!;
      assert.ok(fast.at - started < 1500, `the fast endpoint waited ${fast.at - started} ms`);
    } finally {
      await worker.stop();
      receiver.handler = () => ({ status: 200 });
    }
    const log = (await deliveries(t, slowOwner, slow.id)).items;
    assert.equal(log.length, 5);
    for (const d of log) {
      assert.equal(d.status, 'PENDING');
      assert.equal(d.lastError, 'timed out after 2000 ms');
      assert.equal(d.lastResponseStatus, null);
    }
  });
});

describe('webhooks with strict target rules', () => {
  let t: TestApp;
  let business: TestUser;
  let receiver: TestReceiver;
  before(async () => {
    t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_ALLOW_HTTP: 'true' } });
    business = await createUser(t, { role: 'BUSINESS' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('a private or loopback URL is refused when saved', async () => {
    for (const url of [
      receiver.url,
      receiver.url.replace('127.0.0.1', 'localhost'),
      'http://10.0.0.8/x',
      'http://[::1]:8080/x',
      'http://169.254.169.254/latest',
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: business.headers,
        payload: { url },
      });
      assert.deepEqual(
        res.json(),
        {
          statusCode: 400,
          message: 'url must point to a public address',
          error: 'Bad Request',
          code: 'INVALID_WEBHOOK_URL',
        },
        url,
      );
    }
  });

  test('an endpoint whose address turned private is refused again at connect time', async () => {
    // As if DNS changed after the URL was saved: rows that point at loopback by name and by literal.
    const now = t.clock.now();
    for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost')]) {
      await t.db
        .insertInto('webhook_endpoints')
        .values({
          id: randomUUID(),
          business_id: business.id,
          url,
          events: ['delivery.assigned'],
          enabled: true,
          disabled_reason: null,
          description: null,
          secret: 'whsec_AAAA',
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
    await record(t, business.id, randomUUID(), 'delivery.assigned', 'ASSIGNED');
    await workerFor(t).drain();
    assert.equal(receiver.received.length, 0);
    const rows = await t.db.selectFrom('webhook_deliveries').select(['status', 'last_error']).execute();
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.status, 'PENDING');
      assert.match(row.last_error ?? '', /refused to connect to the non-public address (127\.0\.0\.1|::1)/);
    }
  });

  test('https is required when WEBHOOK_ALLOW_HTTP is false', async () => {
    const strict = await buildTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'false' }, database: t.database });
    try {
      const res = await strict.app.inject({
        method: 'POST',
        url: '/api/webhooks',
        headers: business.headers,
        payload: { url: receiver.url },
      });
      assert.deepEqual(res.json(), {
        statusCode: 400,
        message: 'url must use https',
        error: 'Bad Request',
        code: 'INVALID_WEBHOOK_URL',
      });
    } finally {
      await strict.close();
    }
  });
});

describe('webhooks worker inside the API process', () => {
  test('a recorded event is delivered without anyone driving the worker', async () => {
    const t = await buildTestApp({ env: { WEBHOOK_WORKER_IN_PROCESS: 'true' } });
    const receiver = await startReceiver();
    try {
      const business = await createUser(t, { role: 'BUSINESS' });
      await createEndpoint(t, business, { url: receiver.url });
      const packageId = randomUUID();
      await record(t, business.id, packageId, 'delivery.assigned', 'ASSIGNED');
      t.deps.bus.publish('webhooks.wake', {});
      await receiver.waitFor(1, 3000);
      // Without a wake-up the poll finds it.
      await record(t, business.id, packageId, 'delivery.picked_up', 'PICKED_UP');
      await receiver.waitFor(2, 3000);
      assert.deepEqual(
        receiver.received.map((r) => JSON.parse(r.body).status),
        ['ASSIGNED', 'PICKED_UP'],
      );
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});
