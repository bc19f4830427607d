// Routes of live tracking: the public link, the job streams, the account stream and the live map.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureModule } from '../../http/context.js';
import { SseRegistry, sseFrame } from '../../http/sse.js';
import { notFound } from '../../shared/errors.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { JobSnapshot, JobType } from './tracking-hub.js';
import { parseBbox, type MapFilter } from './live-map.js';
import {
  EventStream,
  LiveDrivers,
  LiveMapQuery,
  LiveMapStreamQuery,
  NoQuery,
  RotatedTracking,
  StreamQuery,
  TokenParams,
  TrackingView,
} from './tracking.schemas.js';

const security = [{ bearerAuth: [] }];
const streamDescription =
  'Server-Sent Events (text/event-stream). A browser EventSource may pass the access token as ?access_token= (never logged).';
const trackingNotFound = () => notFound('Tracking link not found', 'TRACKING_NOT_FOUND');

const lastEventId = (request: FastifyRequest): string | undefined => {
  const value = request.headers['last-event-id'];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

export const trackingModule: FeatureModule = async (app, { deps, services, guard }) => {
  const { tracking, trackingHub: hub, liveMap } = services;
  const streams = new SseRegistry({
    perAccount: deps.config.server.streamsPerAccount,
    perIp: deps.config.server.streamsPerIp,
  });
  // An open stream would keep the server from closing.
  app.addHook('preClose', (done) => {
    streams.closeAll();
    done();
  });
  const tags = ['tracking'];

  /** Opens the stream only once everything that could fail has: errors stay JSON in the error shape. */
  const followJob = (
    request: FastifyRequest,
    reply: FastifyReply,
    snap: JobSnapshot,
    mark: number,
    options: { auth?: AuthContext; viaToken: boolean },
  ) => {
    let stop = () => undefined as void;
    const sink = streams.connect(request, reply, () => stop(), options.auth?.userId);
    stop = hub.follow(snap, sink, { mark, lastEventId: lastEventId(request), ...options });
  };

  app.get(
    '/tracking/:token',
    {
      schema: {
        tags,
        summary: 'Follow a delivery by its tracking link (no account; nothing personal)',
        params: TokenParams,
        response: { 200: TrackingView, ...errors(400, 404) },
      },
    },
    async (request) => {
      const snap = await tracking.resolve(request.params.token);
      if (!snap) throw trackingNotFound();
      return tracking.publicView(snap);
    },
  );

  app.get(
    '/tracking/:token/stream',
    {
      schema: {
        tags,
        summary: 'Live events of a delivery by its tracking link (SSE)',
        description: streamDescription,
        params: TokenParams,
        response: { 200: EventStream, ...errors(400, 404) },
      },
    },
    async (request, reply) => {
      const mark = hub.mark();
      const snap = await tracking.resolve(request.params.token);
      if (!snap) throw trackingNotFound();
      followJob(request, reply, snap, mark, { viaToken: true });
    },
  );

  app.post(
    '/packages/:id/tracking/rotate',
    {
      onRequest: guard.required(['BUSINESS', 'CUSTOMER', 'ADMIN']),
      schema: {
        tags,
        summary: 'Replace the tracking link (creator or admin); the old one stops working',
        security,
        params: IdParams,
        response: { 200: RotatedTracking, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => tracking.rotate(request.params.id, request.auth),
  );

  for (const [collection, jobType] of [
    ['packages', 'PACKAGE'],
    ['rides', 'RIDE'],
  ] as [string, JobType][]) {
    app.get(
      `/${collection}/:id/track`,
      {
        onRequest: guard.required(undefined, { queryToken: true }),
        schema: {
          tags,
          summary: `Live events of a ${jobType === 'PACKAGE' ? 'package' : 'ride'} (SSE; same visibility as the object)`,
          description: streamDescription,
          security,
          params: IdParams,
          querystring: StreamQuery,
          response: { 200: EventStream, ...errors(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        const mark = hub.mark();
        const snap = await tracking.visible(jobType, request.params.id, request.auth);
        followJob(request, reply, snap, mark, { auth: request.auth, viaToken: false });
      },
    );
  }

  app.get(
    '/events/stream',
    {
      onRequest: guard.required(undefined, { queryToken: true }),
      schema: {
        tags,
        summary: 'Status events of every package and ride the caller may read (SSE)',
        description: streamDescription,
        security,
        querystring: StreamQuery,
        response: { 200: EventStream, ...errors(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const last = lastEventId(request);
      let stop = () => undefined as void;
      const sink = streams.connect(request, reply, () => stop(), request.auth.userId);
      // Live events wait while the missed ones are read, so that they arrive in order.
      const follow = hub.followAccount(sink, request.auth, { hold: last !== undefined });
      stop = follow.stop;
      if (last === undefined) return;
      let missed: string[] | undefined;
      try {
        missed = await tracking.missedStatuses(request.auth, last);
      } catch (err) {
        request.log.warn({ err }, 'replaying missed status events failed');
      }
      // Never a silent gap: what cannot be replayed is announced, and the client reads its lists again.
      follow.release(missed ?? [sseFrame('resync', { reason: 'CANNOT_REPLAY' })]);
    },
  );

  const liveMapRoutes = (
    path: string,
    role: 'ADMIN' | 'COMPANY',
    filterOf: (request: FastifyRequest) => MapFilter,
    query: { json: typeof NoQuery | typeof LiveMapQuery; stream: typeof StreamQuery | typeof LiveMapStreamQuery },
  ) => {
    app.get(
      path,
      {
        onRequest: guard.required([role]),
        schema: {
          tags,
          summary: 'Drivers on the live map, from the live index (at most 5,000)',
          security,
          querystring: query.json,
          response: { 200: LiveDrivers, ...errors(400, 401, 403) },
        },
      },
      async (request) => liveMap.list(filterOf(request)),
    );
    app.get(
      `${path}/stream`,
      {
        onRequest: guard.required([role], { queryToken: true }),
        schema: {
          tags,
          summary: 'The live map as SSE: a snapshot, then the drivers that changed each TRACKING_INTERVAL',
          description: streamDescription,
          security,
          querystring: query.stream,
          response: { 200: EventStream, ...errors(400, 401, 403) },
        },
      },
      async (request, reply) => {
        const filter = filterOf(request);
        let stop = () => undefined as void;
        const sink = streams.connect(request, reply, () => stop(), request.auth.userId);
        stop = await liveMap.follow(sink, filter, request.auth);
        if (sink.closed) stop();
      },
    );
  };
  liveMapRoutes(
    '/admin/drivers/live',
    'ADMIN',
    (request) => ({ bbox: parseBbox((request.query as { bbox: string }).bbox) }),
    { json: LiveMapQuery, stream: LiveMapStreamQuery },
  );
  liveMapRoutes('/companies/me/drivers/live', 'COMPANY', (request) => ({ companyId: request.auth.userId }), {
    json: NoQuery,
    stream: StreamQuery,
  });
};
