// The benchmarks' open-loop client (bench/lib/raw-client.ts): its latencies are only as good as its
// framing of answers, so it is held to what a real HTTP server sends.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RawPool } from '../bench/lib/raw-client.js';

describe('bench raw client', () => {
  let server: http.Server;
  let url: string;
  const bodies: string[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        bodies.push(body);
        if (req.url === '/chunked') {
          res.write('a');
          res.end('b');
        } else if (req.url === '/204') {
          res.statusCode = 204;
          res.end();
        } else if (req.url === '/close') {
          res.setHeader('Connection', 'close');
          res.setHeader('Content-Length', 2);
          res.end('ok');
        } else {
          // Fastify's style: a lower-case Content-Length the client has to skip the body by.
          const text = 'x'.repeat(Number(req.url!.slice(1)) || 0);
          res.setHeader('content-length', text.length);
          res.statusCode = 201;
          res.end(text);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const send = (pool: RawPool, path: string, body?: string) =>
    new Promise<number | string>((resolve) =>
      pool.request({ method: 'POST', path, body, headers: { 'content-length': '999' } }, (err, status) =>
        resolve(err ? err.message : status),
      ),
    );

  test('reads statuses in order over few connections, skipping bodies of any size; sends its own Content-Length', async () => {
    const pool = await RawPool.open(url, 2);
    try {
      bodies.length = 0;
      assert.deepEqual(
        await Promise.all([
          send(pool, '/204'),
          send(pool, '/70000', 'abc'),
          send(pool, '/0'),
          send(pool, '/5'),
          send(pool, '/204'),
          send(pool, '/100000'),
        ]),
        [204, 201, 201, 201, 204, 201],
      );
      assert.ok(bodies.includes('abc'), 'the body went out with its real length, not the one in the headers');
    } finally {
      await pool.close();
    }
  });

  test('an answer it cannot frame fails that request; a connection the server closes is replaced', async () => {
    const pool = await RawPool.open(url, 1);
    try {
      assert.match(String(await send(pool, '/chunked')), /does not read/);
      // The broken connection was replaced: the next requests go through.
      assert.equal(await send(pool, '/close'), 200);
      assert.equal(await send(pool, '/204'), 204);
      assert.equal(await send(pool, '/close'), 200);
      assert.equal(await send(pool, '/5'), 201);
    } finally {
      await pool.close();
    }
  });

  test('a server that refuses: open rejects at once', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(RawPool.open(`http://127.0.0.1:${port}`, 5), /ECONNREFUSED/);
  });
});
