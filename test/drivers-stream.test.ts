import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

interface Client {
  ws: WebSocket;
  next(): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
}

describe('driver WebSocket', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    // The lifecycle as before dispatch: nearby pushes, no offers (test/dispatch.test.ts covers offers).
    t = await buildTestApp({ env: { DISPATCH_MODE: 'broadcast' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `ws://127.0.0.1:${address.port}/api/drivers/me/stream`;
  });
  after(async () => t.close());

  function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const inbox: Record<string, unknown>[] = [];
      const waiting: ((m: Record<string, unknown>) => void)[] = [];
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Record<string, unknown>;
        const w = waiting.shift();
        if (w) w(message);
        else inbox.push(message);
      });
      const closed = new Promise<{ code: number; reason: string }>((r) =>
        ws.on('close', (code, reason) => r({ code, reason: reason.toString() })),
      );
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          reject(Object.assign(new Error('rejected'), { status: res.statusCode, body: JSON.parse(body) })),
        );
      });
      ws.on('error', reject);
      ws.on('open', () =>
        resolve({
          ws,
          closed,
          send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
          next: () =>
            new Promise((r, j) => {
              const m = inbox.shift();
              if (m) return r(m);
              const timer = setTimeout(() => j(new Error('no message within 2s')), 2000);
              waiting.push((x) => {
                clearTimeout(timer);
                r(x);
              });
            }),
        }),
      );
    });
  }

  const auth = (u: TestUser) => ({ authorization: `Bearer ${u.token}` });

  test('refuses a missing or bad token (401) and a non-driver (403) before upgrading', async () => {
    await assert.rejects(connect(base), (err: any) => {
      assert.equal(err.status, 401);
      assert.deepEqual(err.body, {
        statusCode: 401,
        message: 'Missing bearer token',
        error: 'Unauthorized',
        code: 'MISSING_TOKEN',
      });
      return true;
    });
    await assert.rejects(
      connect(`${base}?access_token=not.a.jwt`),
      (err: any) => err.status === 401 && err.body.code === 'INVALID_TOKEN',
    );
    const customer = await createUser(t, { role: 'CUSTOMER' });
    await assert.rejects(connect(base, auth(customer)), (err: any) => {
      assert.equal(err.status, 403);
      assert.deepEqual(err.body, {
        statusCode: 403,
        message: 'This action requires role DRIVER',
        error: 'Forbidden',
        code: 'WRONG_ROLE',
      });
      return true;
    });
    const pending = await createUser(t, { role: 'DRIVER', status: 'PENDING_APPROVAL' });
    await assert.rejects(
      connect(base, auth(pending)),
      (err: any) => err.status === 403 && err.body.code === 'ACCOUNT_PENDING_APPROVAL',
    );
  });

  test('accepts positions (token in the query string, never logged), answers bad messages and stays open', async () => {
    const d = await createUser(t, { role: 'DRIVER' });
    const c = await connect(`${base}?access_token=${d.token}`);
    c.send({ type: 'location', lat: -1.28, lng: 36.82, heading: 180, speed: 4 });
    c.send({ type: 'ping' });
    assert.deepEqual(await c.next(), { type: 'pong' });
    const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.deepEqual(me.json().location, {
      lat: -1.28,
      lng: 36.82,
      heading: 180,
      speed: 4,
      updatedAt: t.clock.now().toISOString(),
    });

    const bad: [unknown, string][] = [
      ['{not json', 'Message is not valid JSON'],
      [{ type: 'location', lat: 91, lng: 0 }, 'message.lat must be <= 90'],
      [{ type: 'location', lat: 0 }, 'message.lng is required'],
      // The same formats as the HTTP route: a date PostgreSQL could not store is refused.
      [
        { type: 'location', lat: 0, lng: 0, recordedAt: '0000-01-01T00:00:00Z' },
        'message.recordedAt must be a valid date-time',
      ],
      [{ type: 'location', lat: 0, lng: 0, driverId: 'x' }, 'message has an unknown property "driverId"'],
      [{ type: 'teleport' }, 'message.type must be one of location, ping'],
      [[1, 2], 'message.type must be one of location, ping'],
    ];
    for (const [message, text] of bad) {
      c.send(message);
      assert.deepEqual(await c.next(), { type: 'error', message: text });
    }
    c.send({ type: 'ping' });
    assert.deepEqual(await c.next(), { type: 'pong' }, 'still open');
    c.ws.close();
    await c.closed;
    assert.ok(!t.logLines.some((line) => line.includes(d.token)), 'the access token never reaches the log');
    // A socket gets no "request completed" line: it logs its opening and its closing.
    const socketLines = () =>
      t.logLines
        .filter((line) => line.includes(`"driverId":"${d.id}"`))
        .map((line) => JSON.parse(line).msg)
        .filter((msg: string) => msg.startsWith('driver socket'));
    // The server may see the close a moment after the client does.
    for (let i = 0; i < 100 && socketLines().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(socketLines(), ['driver socket opened', 'driver socket closed']);
  });

  test('more than 10 messages a second are dropped with an error message', async () => {
    const d = await createUser(t, { role: 'DRIVER' });
    const c = await connect(base, auth(d));
    for (let i = 0; i < 15; i++) c.send({ type: 'location', lat: 1 + i / 100, lng: 1 });
    assert.deepEqual(await c.next(), {
      type: 'error',
      message: 'Too many messages: at most 10 per second; messages are dropped until the second is over',
    });
    // One error for the five dropped messages: once the second is over, the next reply is the pong.
    await new Promise((resolve) => setTimeout(resolve, 1050));
    c.send({ type: 'ping' });
    assert.deepEqual(await c.next(), { type: 'pong' });
    const me = await t.app.inject({ method: 'GET', url: '/api/drivers/me', headers: d.headers });
    assert.equal(me.json().location.lat, 1.09, 'the tenth message was the last one applied');
    c.ws.close();
  });

  test('pushes bus messages to the driver, and closes when the session is revoked or the account leaves ACTIVE', async () => {
    const d = await createUser(t, { role: 'DRIVER' });
    const other = await createUser(t, { role: 'DRIVER' });
    const c = await connect(base, auth(d));
    const o = await connect(base, auth(other));
    t.deps.bus.publish('driver.push', { driverId: d.id, message: { type: 'job.nearby', jobId: 'j1' } });
    assert.deepEqual(await c.next(), { type: 'job.nearby', jobId: 'j1' });
    o.send({ type: 'ping' });
    assert.deepEqual(await o.next(), { type: 'pong' }, 'the other driver got nothing but its pong');

    await t.db.updateTable('auth_sessions').set({ revoked_at: t.clock.now() }).where('id', '=', d.sessionId).execute();
    t.deps.bus.publish('session.revoked', { sessionId: d.sessionId });
    assert.deepEqual(await c.closed, { code: 4001, reason: 'Session revoked' });

    await t.db.updateTable('users').set({ status: 'SUSPENDED' }).where('id', '=', other.id).execute();
    t.deps.bus.publish('user.changed', { userId: other.id, status: 'SUSPENDED' });
    assert.deepEqual(await o.closed, { code: 4003, reason: 'Account is not active' });

    // A bulk revocation announced without a status: the socket re-checks its session.
    const third = await createUser(t, { role: 'DRIVER' });
    const s = await connect(base, auth(third));
    await t.db
      .updateTable('auth_sessions')
      .set({ revoked_at: t.clock.now() })
      .where('user_id', '=', third.id)
      .execute();
    t.deps.bus.publish('user.changed', { userId: third.id });
    assert.deepEqual(await s.closed, { code: 4001, reason: 'Session revoked' });
  });

  test('a re-check looks at the session, not the access token: an expired token keeps a standing session open', async () => {
    const d = await createUser(t, { role: 'DRIVER' });
    const c = await connect(base, auth(d));
    t.clock.advance(24 * 3600_000); // long past the access token's lifetime
    t.deps.bus.publish('user.changed', { userId: d.id });
    t.deps.bus.publish('bus.resync', {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    c.send({ type: 'ping' });
    assert.deepEqual(await c.next(), { type: 'pong' }, 'still open');

    // After the bus was away (a revocation may have been missed), every socket's session is read again.
    await t.db.updateTable('auth_sessions').set({ revoked_at: t.clock.now() }).where('id', '=', d.sessionId).execute();
    t.deps.bus.publish('bus.resync', {});
    assert.deepEqual(await c.closed, { code: 4001, reason: 'Session revoked' });
  });
});
