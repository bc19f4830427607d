// Open event streams are capped per account and per client address (contract section 14:
// STREAMS_PER_ACCOUNT, STREAMS_PER_IP), on a listening server with real stream clients.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { SseClient } from './helpers/sse-client.js';
import { packageBody, post } from './packages-helpers.js';

/** Tries until `open` is answered 200: a slot is freed once the server has seen the stream end. */
async function eventuallyOpens(open: () => Promise<SseClient>, ms = 5000): Promise<SseClient> {
  const deadline = Date.now() + ms;
  for (;;) {
    const client = await open();
    if (client.status === 200) return client;
    assert.equal(client.status, 429, client.body);
    if (Date.now() > deadline) throw new Error(`still refused after ${ms} ms: ${client.body}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('stream caps', () => {
  let t: TestApp;
  let base: string;
  let business: TestUser;
  let other: TestUser;
  const open: SseClient[] = [];

  before(async () => {
    // TRUST_PROXY=1: the address is the one X-Forwarded-For gives, so that one test can be several clients.
    t = await buildTestApp({
      env: { DISPATCH_MODE: 'off', STREAMS_PER_ACCOUNT: '2', STREAMS_PER_IP: '3', TRUST_PROXY: '1' },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    business = await createUser(t, { role: 'BUSINESS' });
    other = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => {
    for (const c of open) c.close();
    await t.close();
  });

  const stream = async (path: string, headers: Record<string, string>) => {
    const client = await SseClient.open(`${base}${path}`, headers);
    if (client.status === 200) open.push(client);
    return client;
  };
  const from = (ip: string, user?: TestUser) => ({ 'x-forwarded-for': ip, ...(user ? user.headers : {}) });
  const createPackage = async () => {
    const res = await post(t, '/api/packages', business.headers, packageBody(business.countryId));
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  };

  test('an account holds at most STREAMS_PER_ACCOUNT streams over every stream route; a slot frees when the client leaves or the stream ends', async () => {
    const pkg = await createPackage();
    const account = await stream('/api/events/stream', from('198.51.100.1', business));
    const track = await stream(`/api/packages/${pkg.id}/track`, from('198.51.100.2', business));
    assert.deepEqual([account.status, track.status], [200, 200]);
    await track.until((c) => c.of('status').length === 1);

    // A third, from another address and with the token in the query: refused, in the error shape.
    const refused = await SseClient.open(`${base}/api/events/stream?access_token=${business.token}`, {
      'x-forwarded-for': '198.51.100.3',
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '3');
    assert.match(refused.headers.get('content-type')!, /^application\/json/);
    assert.deepEqual(JSON.parse(refused.body), {
      statusCode: 429,
      message: 'Too many open event streams for this account (at most 2): close one first',
      error: 'Too Many Requests',
      code: 'TOO_MANY_STREAMS',
    });
    // Another account is not affected.
    assert.equal((await stream('/api/events/stream', from('198.51.100.1', other))).status, 200);

    // The client goes away: its slot is free again.
    account.close();
    const again = await eventuallyOpens(() => stream('/api/events/stream', from('198.51.100.1', business)));
    assert.equal((await SseClient.open(`${base}/api/events/stream`, from('198.51.100.1', business))).status, 429);

    // The server ends the stream (a final status): its slot is free again.
    assert.equal((await post(t, `/api/packages/${pkg.id}/cancel`, business.headers)).statusCode, 200);
    await track.until((c) => c.ended);
    await eventuallyOpens(() => stream('/api/events/stream', from('198.51.100.2', business)));
    again.close();
  });

  test('an address holds at most STREAMS_PER_IP streams, the public tracking stream included (counted per address only)', async () => {
    const pkg = await createPackage();
    const token = (pkg.trackingUrl as string).split('/t/')[1]!;
    const publicStreams: SseClient[] = [];
    for (let i = 0; i < 3; i += 1) {
      const c = await stream(`/api/tracking/${token}/stream`, from('203.0.113.7'));
      assert.equal(c.status, 200);
      publicStreams.push(c);
    }
    const tooMany = {
      statusCode: 429,
      message: 'Too many open event streams from this address (at most 3): close one first',
      error: 'Too Many Requests',
      code: 'TOO_MANY_STREAMS',
    };
    const fourth = await SseClient.open(`${base}/api/tracking/${token}/stream`, from('203.0.113.7'));
    assert.equal(fourth.status, 429);
    assert.deepEqual(JSON.parse(fourth.body), tooMany);
    // An account with slots of its own is refused from that address too.
    assert.deepEqual(
      JSON.parse((await SseClient.open(`${base}/api/events/stream`, from('203.0.113.7', other))).body),
      tooMany,
    );
    // Another address is not affected.
    assert.equal((await stream(`/api/tracking/${token}/stream`, from('203.0.113.8'))).status, 200);

    publicStreams[0]!.close();
    await eventuallyOpens(() => stream(`/api/tracking/${token}/stream`, from('203.0.113.7')));
    await post(t, `/api/packages/${pkg.id}/cancel`, business.headers);
  });
});
