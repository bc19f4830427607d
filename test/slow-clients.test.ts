// Slow and greedy clients against a listening server (raw sockets): incomplete requests are closed,
// connections are capped, and a driver holds a bounded number of WebSockets.
import assert from 'node:assert/strict';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';

const REQUEST_TIMEOUT_MS = 800;
const HEADERS_TIMEOUT_MS = 400;
/** Far beyond the timeouts: a socket still open by then is held "forever". */
const GIVE_UP_MS = 5000;

interface RawClient {
  socket: Socket;
  received(): string;
  /** Resolves with what the server sent once it closed the connection, or 'still open' after GIVE_UP_MS. */
  closed: Promise<string>;
}

function rawClient(port: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port, host: '127.0.0.1' });
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', () => undefined);
    const closed = new Promise<string>((r) => {
      const timer = setTimeout(() => r('still open'), GIVE_UP_MS);
      socket.on('close', () => {
        clearTimeout(timer);
        r(data);
      });
    });
    socket.once('connect', () => resolve({ socket, received: () => data, closed }));
    socket.once('error', reject);
  });
}

describe('slow clients', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await buildTestApp({
      env: {
        REQUEST_TIMEOUT: `${REQUEST_TIMEOUT_MS}ms`,
        HEADERS_TIMEOUT: `${HEADERS_TIMEOUT_MS}ms`,
        MAX_CONNECTIONS: '6',
        WS_MAX_PER_DRIVER: '2',
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    port = address.port;
  });
  after(async () => t.close());

  test('a request whose headers never complete is closed after the headers timeout (408)', async () => {
    const c = await rawClient(port);
    c.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    const answer = await c.closed;
    assert.notEqual(answer, 'still open');
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  test('a body that never completes is closed after REQUEST_TIMEOUT (408)', async () => {
    const c = await rawClient(port);
    const started = performance.now();
    c.socket.write(
      'POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"identifier":',
    );
    // Keep the headers timeout from being what ends it: trickle a byte now and then.
    const trickle = setInterval(() => c.socket.writable && c.socket.write(' '), 100);
    const answer = await c.closed;
    clearInterval(trickle);
    assert.notEqual(answer, 'still open');
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.ok(performance.now() - started >= REQUEST_TIMEOUT_MS - 50, 'not before the request timeout');
  });

  test('an open WebSocket outlives REQUEST_TIMEOUT', async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const ws = await openSocket(port, driver.token);
    await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS * 2));
    ws.send(JSON.stringify({ type: 'ping' }));
    assert.deepEqual(await ws.nextMessage(), { type: 'pong' });
    ws.close();
  });

  test('a third WebSocket for one driver closes the oldest with 4000', { timeout: 10_000 }, async () => {
    const driver = await createUser(t, { role: 'DRIVER' });
    const first = await openSocket(port, driver.token);
    const second = await openSocket(port, driver.token);
    const third = await openSocket(port, driver.token);
    assert.deepEqual(await first.closedWith, { code: 4000, reason: 'Replaced by a newer connection' });
    for (const ws of [second, third]) {
      ws.send(JSON.stringify({ type: 'ping' }));
      assert.deepEqual(await ws.nextMessage(), { type: 'pong' }, 'the two newest stay open');
    }
    second.close();
    third.close();
    await Promise.all([second.closedWith, third.closedWith]);
  });

  test('connections beyond MAX_CONNECTIONS are refused', { timeout: 15_000 }, async () => {
    // Wait for the sockets of the earlier tests to be gone on the server's side too.
    for (let i = 0; i < 100; i++) {
      const open = await new Promise<number>((r) => t.app.server.getConnections((_err, n) => r(n)));
      if (open === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const held: RawClient[] = [];
    for (let i = 0; i < 6; i++) {
      const c = await rawClient(port);
      // An answered keep-alive request proves the server took the connection.
      c.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
      for (let j = 0; j < 100 && !c.received().includes('"ok"'); j++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      assert.match(c.received(), /^HTTP\/1\.1 200 /);
      held.push(c);
    }
    const extra = await rawClient(port);
    extra.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.equal(await extra.closed, '', 'closed with no answer');
    held[0].socket.destroy();
    await held[0].closed;
    // A freed slot is usable again.
    for (let i = 0; i < 100; i++) {
      const open = await new Promise<number>((r) => t.app.server.getConnections((_err, n) => r(n)));
      if (open < 6) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const again = await fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });
    assert.equal(again.status, 200);
    for (const c of held) c.socket.destroy();
  });
});

interface TestSocket {
  send(data: string): void;
  close(): void;
  nextMessage(): Promise<unknown>;
  closedWith: Promise<{ code: number; reason: string }>;
}

function openSocket(port: number, token: string): Promise<TestSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/drivers/me/stream`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const inbox: unknown[] = [];
    const waiting: ((m: unknown) => void)[] = [];
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as unknown;
      const w = waiting.shift();
      if (w) w(message);
      else inbox.push(message);
    });
    const closedWith = new Promise<{ code: number; reason: string }>((r) =>
      ws.on('close', (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        send: (data) => ws.send(data),
        close: () => ws.close(),
        closedWith,
        nextMessage: () =>
          inbox.length > 0
            ? Promise.resolve(inbox.shift())
            : new Promise((r, j) => {
                const timer = setTimeout(() => j(new Error('no message within 2s')), 2000);
                waiting.push((m) => {
                  clearTimeout(timer);
                  r(m);
                });
              }),
      }),
    );
  });
}
