// The receiver example of docs/webhooks.md: it accepts what the service signs and refuses the rest with 401.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createReceiver, type WebhookEvent } from '../examples/webhook-receiver.js';
import { recordDeliveryEvent } from '../src/modules/webhooks/outbox.js';
import { signHex } from '../src/modules/webhooks/webhook-signature.js';
import { OutboxRepository } from '../src/modules/webhooks/outbox.repository.js';
import { WebhookWorker } from '../src/modules/webhooks/webhook-worker.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';

describe('webhook receiver example', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const events: { event: WebhookEvent; id: string | undefined }[] = [];
  const server = createReceiver({ secret, onEvent: (event, id) => void events.push({ event, id }) });
  let url = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const body = JSON.stringify({
    event: 'delivery.delivered',
    delivery_id: randomUUID(),
    status: 'DELIVERED',
    timestamp: new Date().toISOString(),
  });
  const post = (headers: Record<string, string>, payload = body) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: payload });

  test('a correctly signed request is accepted once per webhook-id', async () => {
    const res = await post({ 'x-service-signature': signHex(secret, body), 'webhook-id': 'msg_1' });
    assert.equal(res.status, 204);
    const again = await post({ 'x-service-signature': signHex(secret, body), 'webhook-id': 'msg_1' });
    assert.equal(again.status, 204);
    assert.deepEqual(
      events.map((e) => e.id),
      ['msg_1'],
    );
    assert.deepEqual(events[0].event, JSON.parse(body));
  });

  test('a missing, wrong or stale-body signature gets 401', async () => {
    const before = events.length;
    assert.equal((await post({})).status, 401);
    assert.equal((await post({ 'x-service-signature': signHex('whsec_other', body) })).status, 401);
    assert.equal((await post({ 'x-service-signature': 'abc' })).status, 401);
    // Same JSON, different bytes: the signature covers the raw body.
    assert.equal(
      (await post({ 'x-service-signature': signHex(secret, body) }, JSON.stringify(JSON.parse(body), null, 2))).status,
      401,
    );
    assert.equal(events.length, before);
  });

  test('the service delivers to it with a real endpoint secret', async () => {
    const t: TestApp = await buildTestApp();
    const endpointEvents: WebhookEvent[] = [];
    try {
      const business = await createUser(t, { role: 'BUSINESS' });
      const otherServer = await (async () => {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: business.headers,
          payload: { url: 'http://127.0.0.1:9/placeholder' },
        });
        const { id, secret: endpointSecret } = res.json() as { id: string; secret: string };
        const receiver = createReceiver({
          secret: endpointSecret,
          onEvent: (event) => void endpointEvents.push(event),
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
        const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
        await t.app.inject({
          method: 'PATCH',
          url: `/api/webhooks/${id}`,
          headers: business.headers,
          payload: { url: receiverUrl },
        });
        return { id, receiver };
      })();
      const packageId = randomUUID();
      await t.db.transaction().execute((trx) =>
        recordDeliveryEvent(trx, {
          packageId,
          businessId: business.id,
          event: 'delivery.delivered',
          status: 'DELIVERED',
          occurredAt: t.clock.now(),
        }),
      );
      await new WebhookWorker({
        db: t.db,
        repo: new OutboxRepository(t.db),
        clock: t.clock,
        logger: t.deps.logger,
        config: t.deps.config,
      }).drain();
      await new Promise<void>((resolve) => otherServer.receiver.close(() => resolve()));
      assert.deepEqual(endpointEvents, [
        {
          event: 'delivery.delivered',
          delivery_id: packageId,
          status: 'DELIVERED',
          timestamp: t.clock.now().toISOString(),
        },
      ]);
      const log = await t.app.inject({
        method: 'GET',
        url: `/api/webhooks/${otherServer.id}/deliveries`,
        headers: business.headers,
      });
      assert.deepEqual(
        log.json().items.map((d: { status: string; lastResponseStatus: number }) => [d.status, d.lastResponseStatus]),
        [['SUCCEEDED', 204]],
      );
    } finally {
      await t.close();
    }
  });
});
