// Answers ready in one turn of the event loop are written at its end, and none is lost or changed.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { coalesceWrites } from './write-coalescing.js';

describe('write coalescing', () => {
  let app: FastifyInstance;
  let base: string;
  const seen: { sentAtOnce: boolean; sentByTurnEnd: boolean }[] = [];
  before(async () => {
    app = Fastify();
    coalesceWrites(app);
    app.get('/echo/:n', async (req) => ({ n: Number((req.params as { n: string }).n) }));
    app.get('/watch', (_req, reply) => {
      reply.send({ ok: true });
      const entry = { sentAtOnce: reply.raw.headersSent, sentByTurnEnd: false };
      seen.push(entry);
      setImmediate(() => (entry.sentByTurnEnd = reply.raw.headersSent));
    });
    app.get('/empty', (_req, reply) => reply.code(204).send());
    app.get('/buffer', (_req, reply) => reply.type('application/octet-stream').send(Buffer.from([0, 1, 2, 255])));
    app.get('/stream', (_req, reply) => reply.type('text/plain').send(Readable.from(['a', 'b', 'c'])));
    app.get('/fail', async () => {
      throw Object.assign(new Error('nope'), { statusCode: 409 });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  after(() => app.close());

  test('an answer is written at the end of the turn it was sent in, not at once', async () => {
    const res = await request(`${base}/watch`);
    assert.deepEqual(await res.body.json(), { ok: true });
    assert.deepEqual(seen, [{ sentAtOnce: false, sentByTurnEnd: true }]);
  });

  test('many answers at once over few connections: each gets its own, none lost', async () => {
    const dispatcher = new Agent({ connections: 8, pipelining: 4 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 400 }, async (_, n) => {
          const res = await request(`${base}/echo/${n}`, { dispatcher });
          return { status: res.statusCode, body: (await res.body.json()) as { n: number } };
        }),
      );
      answers.forEach((a, n) => assert.deepEqual(a, { status: 200, body: { n } }));
    } finally {
      await dispatcher.close();
    }
  });

  test('empty, binary, streamed and error answers are unchanged', async () => {
    const empty = await request(`${base}/empty`);
    assert.equal(empty.statusCode, 204);
    assert.equal(await empty.body.text(), '');
    const bytes = await request(`${base}/buffer`);
    assert.deepEqual([...Buffer.from(await bytes.body.arrayBuffer())], [0, 1, 2, 255]);
    const streamed = await request(`${base}/stream`);
    assert.equal(await streamed.body.text(), 'abc');
    const failed = await request(`${base}/fail`);
    assert.equal(failed.statusCode, 409);
    assert.equal(((await failed.body.json()) as { message: string }).message, 'nope');
  });
});
