// The driver WebSocket (GET /drivers/me/stream): position messages in, pushed jobs and updates out.
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { accessTokenOf } from '../../http/authenticate.js';
import type { App, ModuleContext } from '../../http/context.js';
import { forbidden, notFound, unauthorized } from '../../shared/errors.js';
import type { LiveDrivers } from '../matching/live-drivers.js';

/** Per-connection cap: messages beyond it within one second are dropped with an error message. */
export const MAX_MESSAGES_PER_SECOND = 10;
const MAX_MESSAGE_BYTES = 4096;
export const TOO_MANY_MESSAGES = `Too many messages: at most ${MAX_MESSAGES_PER_SECOND} per second; messages are dropped until the second is over`;
export const CLOSE_SESSION_REVOKED = 4001;
export const CLOSE_ACCOUNT_INACTIVE = 4003;
export const CLOSE_REPLACED = 4000;

interface Connection {
  socket: WebSocket;
  driverId: string;
  sessionId: string;
}

export async function registerDriverStream(app: App, ctx: ModuleContext, { live }: { live: LiveDrivers }) {
  const { deps, guard } = ctx;
  const { positions } = ctx.services;
  await app.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
  const byDriver = new Map<string, Set<Connection>>();

  const send = (socket: WebSocket, message: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const forEach = (fn: (c: Connection) => void) => {
    for (const set of byDriver.values()) for (const c of set) fn(c);
  };
  // The session, not the access token: a socket outlives its token, which may have expired since.
  const recheck = (c: Connection) =>
    void guard.sessionStands(c.sessionId, c.driverId).then(
      (state) => {
        if (state === 'revoked') c.socket.close(CLOSE_SESSION_REVOKED, 'Session revoked');
        else if (state === 'inactive') c.socket.close(CLOSE_ACCOUNT_INACTIVE, 'Account is not active');
      },
      (err) => deps.logger.warn({ err }, 'checking a driver socket session failed'),
    );

  const subscriptions = [
    deps.bus.subscribe('session.revoked', ({ sessionId }) =>
      forEach((c) => c.sessionId === sessionId && c.socket.close(CLOSE_SESSION_REVOKED, 'Session revoked')),
    ),
    deps.bus.subscribe('user.changed', ({ userId, status }) => {
      const set = byDriver.get(userId);
      if (!set) return;
      for (const c of set) {
        if (status !== undefined && status !== 'ACTIVE')
          c.socket.close(CLOSE_ACCOUNT_INACTIVE, 'Account is not active');
        // Sessions may have been revoked in bulk: check this one again (the guard dropped its cache).
        else recheck(c);
      }
    }),
    // Revocations may have been missed: check every open socket's session again (the guard's cache
    // was dropped first: it subscribed before this module).
    deps.bus.subscribe('bus.resync', () => forEach(recheck)),
    deps.bus.subscribe('driver.push', ({ driverId, message }) => {
      const set = byDriver.get(driverId);
      if (set) for (const c of set) send(c.socket, message);
    }),
  ];
  app.addHook('onClose', async () => subscriptions.forEach((off) => off()));

  app.get(
    '/drivers/me/stream',
    {
      websocket: true,
      onRequest: async (request) => {
        // A browser WebSocket cannot send headers: the token may come as ?access_token= (never logged).
        const token = accessTokenOf(request, true);
        if (!token) throw unauthorized('Missing bearer token', 'MISSING_TOKEN');
        request.auth = await guard.authenticateToken(token);
        if (request.auth.role !== 'DRIVER') throw forbidden('This action requires role DRIVER', 'WRONG_ROLE');
      },
      // Load the driver before the upgrade, so no message arrives before the handler listens.
      preHandler: async (request) => {
        if (!(await live.ensure(request.auth.userId))) throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
      },
    },
    (socket, request) => {
      const conn: Connection = { socket, driverId: request.auth.userId, sessionId: request.auth.sessionId };
      let set = byDriver.get(conn.driverId);
      if (!set) byDriver.set(conn.driverId, (set = new Set()));
      set.add(conn);
      // A reconnect may overlap the old socket; beyond the cap the oldest goes, so one driver cannot
      // hold an unbounded number of sockets (and file descriptors).
      for (const old of set) {
        if (set.size <= deps.config.server.wsMaxPerDriver) break;
        set.delete(old);
        old.socket.close(CLOSE_REPLACED, 'Replaced by a newer connection');
      }
      let windowStart = performance.now();
      let count = 0;

      socket.on('message', (data, isBinary) => {
        const now = performance.now();
        if (now - windowStart >= 1000) {
          windowStart = now;
          count = 0;
        }
        count += 1;
        if (count > MAX_MESSAGES_PER_SECOND) {
          // One error per window: a reply per dropped message would let a flood cost the server a
          // write for every message it refuses.
          if (count === MAX_MESSAGES_PER_SECOND + 1) send(socket, { type: 'error', message: TOO_MANY_MESSAGES });
          return;
        }
        let message: unknown;
        try {
          if (isBinary) throw new Error('binary');
          message = JSON.parse(data.toString());
        } catch {
          return send(socket, { type: 'error', message: 'Message is not valid JSON' });
        }
        const type = message && typeof message === 'object' ? (message as { type?: unknown }).type : undefined;
        if (type === 'ping') return send(socket, { type: 'pong' });
        if (type !== 'location')
          return send(socket, { type: 'error', message: 'message.type must be one of location, ping' });
        // Validated exactly like the HTTP route's body (same Ajv, same formats), then the live index.
        const outcome = positions.accept(conn.driverId, message, 'websocket');
        if (!outcome.ok) return send(socket, { type: 'error', message: outcome.message });
      });
      // A socket is a hijacked request: it gets no "request completed" line, so it logs its own.
      request.log.info({ req: request, driverId: conn.driverId }, 'driver socket opened');
      socket.on('close', (code) => {
        request.log.info({ driverId: conn.driverId, code }, 'driver socket closed');
        set.delete(conn);
        if (set.size === 0 && byDriver.get(conn.driverId) === set) byDriver.delete(conn.driverId);
      });
      socket.on('error', (err) => request.log.warn({ err: err.message }, 'driver socket error'));
    },
  );
}
