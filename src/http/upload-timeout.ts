// A route that takes uploads (POST /packages/:id/proof) gets its own deadline for receiving the
// request instead of REQUEST_TIMEOUT (contract sections 12 and 19). Node applies one requestTimeout
// to the whole server and reports an expired request as a 'clientError' (then forgets it); the
// wrapper below leaves such a request alone while its route's own deadline has not passed, and the
// route's timer ends it with a 408 when that deadline passes.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './errors.js';

const deadlineOf = Symbol('uploadDeadline');
type MarkedSocket = Socket & { [deadlineOf]?: number };

/** Called once, after Fastify has added its own 'clientError' listener (app.ts). */
export function allowLongerUploads(server: Server): void {
  const listeners = server.listeners('clientError') as ((err: Error, socket: Socket) => void)[];
  server.removeAllListeners('clientError');
  server.on('clientError', function (this: Server, err: Error & { code?: string }, socket: Socket) {
    const deadline = (socket as MarkedSocket)[deadlineOf];
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && deadline !== undefined && performance.now() < deadline) return;
    for (const listener of listeners) listener.call(this, err, socket);
  });
}

/** An onRequest hook: this request has `ms` (from now) to arrive in full, whatever REQUEST_TIMEOUT says. */
export function uploadTimeout(ms: number, name: string) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const socket = request.raw.socket as MarkedSocket;
    const deadline = performance.now() + ms;
    socket[deadlineOf] = deadline;
    const timer = setTimeout(() => {
      if (request.raw.complete) return;
      request.log.info({ timeoutMs: ms }, 'upload not received in time');
      if (!reply.raw.headersSent && socket.writable) {
        const body = JSON.stringify(errorBody(408, `The upload was not received within ${name}`, 'REQUEST_TIMEOUT'));
        socket.end(
          `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${request.id}\r\n\r\n${body}`,
        );
      }
      socket.destroySoon();
    }, ms);
    reply.raw.once('close', () => {
      clearTimeout(timer);
      if (socket[deadlineOf] === deadline) delete socket[deadlineOf];
    });
    done();
  };
}
