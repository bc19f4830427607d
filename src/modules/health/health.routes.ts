// Operational routes at the root: liveness, readiness and Prometheus metrics (never rate limited).
import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { isDatabaseUnavailable } from '../../db/availability.js';
import type { Deps } from '../../deps.js';
import type { App } from '../../http/context.js';
import { AppError } from '../../shared/errors.js';

const CHECK_TIMEOUT_MS = 2000;

async function check(name: string, fn: () => Promise<unknown>, log: (err: unknown) => void): Promise<[string, string]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS))),
    ]);
    return [name, 'ok'];
  } catch (err) {
    // The detail (hosts, users) goes to the log, not to an unauthenticated caller.
    log(err);
    return [name, 'failed'];
  } finally {
    clearTimeout(timer);
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Throws 401 unless `authorization` carries `Bearer <token>` (no token configured: open). Digests of
 * equal length are compared in constant time, so the answer's timing says nothing of the token.
 */
export function assertMetricsToken(token: string | undefined, authorization: string | undefined): void {
  if (token === undefined) return;
  const given = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  if (given !== undefined && timingSafeEqual(digest(given), digest(token))) return;
  throw new AppError(
    401,
    given === undefined ? 'MISSING_TOKEN' : 'INVALID_TOKEN',
    'GET /metrics requires the metrics bearer token',
    {
      'www-authenticate': 'Bearer',
    },
  );
}

export const healthModule = (
  app: App,
  { deps, services }: { deps: Deps; services?: { router?: { readonly name: string; readonly ready: boolean } } },
) => {
  if (deps.config.server.isProduction && deps.config.server.metricsToken === undefined) {
    deps.logger.warn('METRICS_TOKEN is unset: GET /metrics is open to anyone who can reach this port');
  }

  app.get(
    '/health',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: 200 while the process runs',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  const Ready = Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()) });
  app.get(
    '/health/ready',
    {
      schema: {
        tags: ['operations'],
        summary:
          'Readiness: 200 when the database answers (and a road graph is loaded), else 503 naming the failed check',
        response: { 200: Ready, 503: Ready },
      },
    },
    async (_request, reply) => {
      const log = (what: string) => (err: unknown) => deps.logger.warn({ err, check: what }, 'readiness check failed');
      // A database that is away is logged once when lost and once when back, not on every probe.
      const checks = [
        check(
          'database',
          () => deps.database.ping(),
          (err) => isDatabaseUnavailable(err) || log('database')(err),
        ),
      ];
      const results = Object.fromEntries(await Promise.all(checks));
      let ok = Object.values(results).every((v) => v === 'ok');
      // Redis away leaves the instance ready (its fallbacks serve): draining every instance at once would not.
      // Its state comes from the heartbeat, so the probe never waits on a frozen Redis.
      if (deps.redisHealth) results.redis = deps.redisHealth.up ? 'ok' : 'down';
      // A road graph still loading (ROUTER=graph) keeps the instance out of rotation (contract section 25).
      const router = services?.router;
      if (router && !router.ready) {
        results.router = 'loading';
        ok = false;
      }
      const status = !ok ? 'unavailable' : results.redis === 'down' ? 'degraded' : 'ok';
      return reply.code(ok ? 200 : 503).send({ status, checks: results });
    },
  );

  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    assertMetricsToken(deps.config.server.metricsToken, request.headers.authorization);
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
};
