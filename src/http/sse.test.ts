import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/errors.js';
import { MAX_QUEUED_BYTES, SseConnection, SseRegistry, sseFrame } from './sse.js';

/** A response whose socket buffer is full whenever `full` is set (write() then returns false). */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  full = false;
  ended = false;
  destroyed = false;
  head: Record<string, string> = {};
  writeHead(_status: number, headers: Record<string, string>) {
    this.head = headers;
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    return !this.full;
  }
  end() {
    this.ended = true;
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

function exchange(ip = '127.0.0.1') {
  const res = new FakeResponse();
  const reply = { hijack() {}, raw: res, getHeaders: () => ({ 'x-request-id': 'r1' }) } as unknown as FastifyReply;
  const request = { ip, raw: { socket: { setNoDelay() {} } } } as unknown as FastifyRequest;
  return { res, reply, request };
}

function open() {
  const { res, reply, request } = exchange();
  const connection = SseConnection.open(request, reply);
  res.written = [];
  return { res, connection };
}

test('sseFrame writes one event, its data on one line', () => {
  assert.equal(sseFrame('status', { a: 'x\ny' }, 'c1'), 'id: c1\nevent: status\ndata: {"a":"x\\ny"}\n\n');
  assert.equal(sseFrame('eta', { etaSeconds: 3 }), 'event: eta\ndata: {"etaSeconds":3}\n\n');
});

test('the stream headers tell proxies not to buffer or transform it, and keep the request id', () => {
  const { res } = open();
  assert.equal(res.head['content-type'], 'text/event-stream; charset=utf-8');
  assert.equal(res.head['x-accel-buffering'], 'no');
  assert.equal(res.head['cache-control'], 'no-cache, no-store, no-transform');
  assert.equal(res.head['x-request-id'], 'r1');
});

test('behind a full socket: statuses wait in order, positions keep only the newest, all flushed on drain', () => {
  const { res, connection } = open();
  res.full = true;
  connection.send('s1');
  assert.equal(connection.congested, true);
  connection.sendLatest('position', 'p1');
  connection.send('s2');
  connection.sendLatest('position', 'p2');
  connection.sendLatest('position', 'p3');
  assert.deepEqual(res.written, ['s1']);
  res.full = false;
  res.emit('drain');
  assert.deepEqual(res.written, ['s1', 's2', 'p3']);
  assert.equal(connection.congested, false);
});

test('a client too far behind is cut off (it reconnects with Last-Event-ID) instead of holding memory', () => {
  const { res, connection } = open();
  let closed = 0;
  connection.closing(() => (closed += 1));
  res.full = true;
  const frame = 'x'.repeat(1024);
  for (let i = 0; i <= MAX_QUEUED_BYTES / 1024 + 1; i += 1) connection.send(frame);
  assert.equal(res.destroyed, true);
  assert.equal(connection.closed, true);
  assert.equal(closed, 1);
  connection.send('after');
  assert.ok(!res.written.includes('after'));
});

test('heartbeats only on a stream nothing was written to since the last one', () => {
  const { res, connection } = open();
  // The `retry:` line was written on opening.
  connection.heartbeat();
  assert.deepEqual(res.written, []);
  connection.heartbeat();
  connection.heartbeat();
  assert.deepEqual(res.written, [':\n\n', ':\n\n']);
  connection.send('s1');
  connection.heartbeat();
  assert.deepEqual(res.written, [':\n\n', ':\n\n', 's1']);
  connection.heartbeat();
  assert.deepEqual(res.written, [':\n\n', ':\n\n', 's1', ':\n\n']);
});

test('end writes its last frame and what waits, then closes once', () => {
  const { res, connection } = open();
  let closed = 0;
  connection.closing(() => (closed += 1));
  res.full = true;
  connection.send('s1');
  connection.sendLatest('position', 'p1');
  connection.end('final');
  assert.deepEqual(res.written, ['s1', 'final', 'p1']);
  assert.equal(res.ended, true);
  assert.equal(closed, 1);
  res.emit('close');
  assert.equal(closed, 1);
});

test('the registry caps open streams per account and per address, and frees a slot when a stream ends', () => {
  const registry = new SseRegistry({ perAccount: 2, perIp: 3 });
  const connect = (account: string | undefined, ip = '10.0.0.1') => {
    const { res, reply, request } = exchange(ip);
    return { res, connection: registry.connect(request, reply, () => undefined, account) };
  };
  const refused = (fn: () => unknown, message: string) =>
    assert.throws(fn, (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.deepEqual(
        [err.statusCode, err.code, err.message, err.headers],
        [429, 'TOO_MANY_STREAMS', message, { 'retry-after': '3' }],
      );
      return true;
    });
  const a1 = connect('a');
  connect('a');
  refused(() => connect('a', '10.0.0.2'), 'Too many open event streams for this account (at most 2): close one first');
  // The public stream (no account) counts against its address only.
  const anonymous = connect(undefined);
  refused(() => connect('b'), 'Too many open event streams from this address (at most 3): close one first');
  refused(() => connect(undefined), 'Too many open event streams from this address (at most 3): close one first');
  // An IPv6 client is one /64, as the rate limits count it.
  for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) connect(undefined, ip);
  refused(
    () => connect(undefined, '2001:db8:1:2::4'),
    'Too many open event streams from this address (at most 3): close one first',
  );
  assert.equal(registry.size, 6);

  // Freed whoever ends it: the client going away, or the server ending the stream.
  a1.res.emit('close');
  connect('b');
  anonymous.connection.end();
  connect('a');
  assert.equal(registry.size, 6);
  refused(() => connect('a', '10.0.0.3'), 'Too many open event streams for this account (at most 2): close one first');
  registry.closeAll();
  assert.equal(registry.size, 0);
  connect('a');
});
