// A real HTTP receiver for the webhook tests: records every request and answers what the test says.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering (or until the promise settles). */
  hold?: number | Promise<unknown>;
}

export type ReceiverHandler = (request: Received, index: number) => Reply;

export interface TestReceiver {
  url: string;
  received: Received[];
  handler: ReceiverHandler;
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(handler: ReceiverHandler = () => ({ status: 200 })): Promise<TestReceiver> {
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  const receiver: TestReceiver = {
    url: '',
    received,
    handler,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const request: Received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        path: req.url ?? '/',
        at: Date.now(),
      };
      const index = received.length;
      received.push(request);
      for (const wake of waiters.splice(0)) wake();
      const reply = receiver.handler(request, index);
      if (typeof reply.hold === 'number') await new Promise((resolve) => setTimeout(resolve, reply.hold as number));
      else if (reply.hold) await reply.hold.catch(() => undefined);
      if (res.destroyed) return;
      res.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}
