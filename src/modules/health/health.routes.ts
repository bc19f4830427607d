// Operational routes at the root: liveness, readiness and Prometheus metrics (never rate limited).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../http/context.js';

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

export const healthModule = (app: App, { deps }: { deps: Deps }) => {
  app.get(
    '/health',
    { schema: { tags: ['operations'], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  const Ready = Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()) });
  app.get('/health/ready', { schema: { tags: ['operations'], response: { 200: Ready, 503: Ready } } }, async (_request, reply) => {
    const log = (what: string) => (err: unknown) => deps.logger.warn({ err, check: what }, 'readiness check failed');
    const checks = [check('database', () => deps.database.ping(), log('database'))];
    const redis = deps.redis;
    if (redis) checks.push(check('redis', () => redis.ping(), log('redis')));
    const results = Object.fromEntries(await Promise.all(checks));
    const ok = Object.values(results).every((v) => v === 'ok');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks: results });
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
};
