// A request that still reaches an instance while it shuts down is refused in the error shape, and the
// connection is closed, so that the client retries on another instance.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { buildTestApp } from './helpers/app.js';

function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

test('a request arriving while the instance closes gets 503 SERVICE_UNAVAILABLE with Connection: close', async () => {
  const t = await buildTestApp();
  let closed: Promise<void> | undefined;
  try {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as { port: number };
    // A connection with a request under way (its headers not finished) is not idle: closing leaves it open.
    const socket = await connectTo(port);
    let response = '';
    socket.on('data', (d) => (response += d));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    socket.write('GET /api/countries HTTP/1.1\r\nHost: localhost\r\n');
    // Time for the server to read the partial request (a socket it has read nothing from counts as idle).
    await new Promise((resolve) => setTimeout(resolve, 300));

    closed = t.app.close();
    // Closing has begun once new connections are refused.
    for (;;) {
      const refused = await connectTo(port).then(
        (s) => (s.destroy(), false),
        () => true,
      );
      if (refused) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    socket.write('\r\n');
    await ended;

    const [head, body] = response.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 503 /);
    assert.match(head, /\r\nconnection: close\r\n/i);
    assert.deepEqual(JSON.parse(body), {
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The server is shutting down; try again',
      code: 'SERVICE_UNAVAILABLE',
    });
  } finally {
    await (closed ?? t.app.close());
    await t.close().catch(() => undefined);
  }
});
