// What one webhook attempt records of a failing receiver: a short excerpt from a public target,
// nothing of a private target's body (development mode lets webhooks reach private addresses).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXCERPT_CHARS, WebhookSender } from '../src/modules/webhooks/webhook-sender.js';
import { startReceiver, type TestReceiver } from './webhooks-receiver.js';

const SECRET_BODY = `internal-admin-token=${'s'.repeat(1000)}`;

describe('webhook sender: the failure text', () => {
  let receiver: TestReceiver;
  before(async () => {
    receiver = await startReceiver(() => ({ status: 500, body: SECRET_BODY }));
  });
  after(async () => receiver.close());

  const attempt = async (sender: WebhookSender, url = receiver.url) => {
    try {
      return await sender.send(url, { 'content-type': 'application/json' }, '{}');
    } finally {
      await sender.close();
    }
  };
  const options = { timeoutMs: 5000, allowPrivateTargets: true, connectionsPerOrigin: 1 };

  test('a private target (loopback literal or a name resolving to it): status only, none of its body', async () => {
    for (const url of [receiver.url, receiver.url.replace('127.0.0.1', 'localhost')]) {
      const result = await attempt(new WebhookSender(options), url);
      assert.deepEqual(result, { ok: false, status: 500, error: 'HTTP 500', retryAfter: null }, url);
    }
  });

  test('a public target: the status and at most EXCERPT_CHARS characters of its body', async () => {
    // The loopback receiver stands in for a public one.
    const result = await attempt(new WebhookSender({ ...options, isPublicAddress: () => true }));
    assert.equal(result.error, `HTTP 500: ${SECRET_BODY.slice(0, EXCERPT_CHARS)}`);
    assert.equal(EXCERPT_CHARS, 256);
  });
});
