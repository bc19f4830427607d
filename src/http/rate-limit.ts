// Per-IP rate limits (contract section 5): a global limit on every /api request and per-route limits
// on the login and code-sending routes. Counted in Redis when it is configured (shared by every
// instance); while Redis fails, each instance falls back to its own in-process counters (never unlimited).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { errorBody } from './errors.js';
import type { App, ModuleContext } from './context.js';
import type { RateLimitSpec } from '../config.js';

interface Limiter {
  name: string;
  spec: RateLimitSpec;
  /** Shared by every instance (Redis), when configured. */
  shared: RateLimiterAbstract | undefined;
  /** This instance's own counters: the only ones without Redis, the fallback while Redis is down. */
  memory: RateLimiterAbstract;
}

/** Route limits by `METHOD /api/path` (the route's URL as Fastify knows it). */
function routeLimits(limits: ModuleContext['deps']['config']['rateLimits']): [string, string, RateLimitSpec | null][] {
  return [
    ['POST /api/auth/login', 'login', limits.login],
    ['POST /api/auth/login/send-otp', 'login-send-otp', limits.loginSendOtp],
    ['POST /api/auth/register/send-otp', 'register-send-otp', limits.registerSendOtp],
    // The same numbers as registration codes, counted separately (contract section 2).
    ['POST /api/auth/password/forgot', 'password-forgot', limits.registerSendOtp],
  ];
}

/** Routes outside the global per-IP limit, limited by a key of their own instead (the OsmAnd positions). */
export const OUTSIDE_GLOBAL_LIMIT = new Set([
  '/api/positions/osmand',
  // Daraja's callbacks come from a few Safaricom addresses; limited per token (mpesa.routes.ts).
  '/api/hooks/daraja/b2c/:token/result',
  '/api/hooks/daraja/b2c/:token/timeout',
  '/api/hooks/daraja/status/:token/result',
  '/api/hooks/daraja/status/:token/timeout',
  // STK Push and refund callbacks (payments.routes.ts).
  '/api/hooks/daraja/stk/:token/result',
  '/api/hooks/daraja/refund/:token/result',
  '/api/hooks/daraja/refund/:token/timeout',
]);

type LimiterDeps = Pick<ModuleContext['deps'], 'config' | 'redis' | 'redisHealth' | 'logger'>;

function makeLimiter({ config, redis }: LimiterDeps, name: string, spec: RateLimitSpec): Limiter {
  const duration = Math.max(1, Math.ceil(spec.windowMs / 1000));
  const memory = new RateLimiterMemory({ keyPrefix: name, points: spec.max, duration });
  const shared = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${config.redis.keyPrefix}rl:${name}`,
        points: spec.max,
        duration,
        rejectIfRedisNotReady: true,
      })
    : undefined;
  return { name, spec, shared, memory };
}

function consumer({ redisHealth, logger }: LimiterDeps) {
  let warned = false;
  return async (limit: Limiter, key: string): Promise<{ res: RateLimiterRes; allowed: boolean }> => {
    // While Redis is known to be down the request does not wait for it: a failure marks it down.
    if (limit.shared && redisHealth?.up !== false) {
      try {
        return { res: await limit.shared.consume(key), allowed: true };
      } catch (err) {
        if (err instanceof RateLimiterRes) return { res: err, allowed: false };
        redisHealth?.failure('rate limiter', err);
      }
    }
    try {
      return { res: await limit.memory.consume(key), allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { res: err, allowed: false };
      // The memory store failed (should not happen). Refuse nothing,
      // but say so loudly once.
      if (!warned) logger.error({ err, limiter: limit.name }, 'rate limiter failed');
      warned = true;
      return { res: new RateLimiterRes(limit.spec.max, 0, 0), allowed: true };
    }
  };
}

export interface KeyedLimit {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * A limiter counting by a key the caller chooses (not the client IP), shared by every instance
 * through Redis when configured, with the same in-process fallback as the per-IP limits.
 */
export function createKeyedLimiter(
  deps: LimiterDeps,
  name: string,
  spec: RateLimitSpec,
): (key: string) => Promise<KeyedLimit> {
  const limiter = makeLimiter(deps, name, spec);
  const consume = consumer(deps);
  return async (key) => {
    const { res, allowed } = await consume(limiter, key);
    return {
      allowed,
      limit: spec.max,
      remaining: Math.max(0, res.remainingPoints),
      resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
    };
  };
}

export async function registerRateLimits(app: App, ctx: ModuleContext): Promise<void> {
  const { config } = ctx.deps;
  const make = (name: string, spec: RateLimitSpec): Limiter => makeLimiter(ctx.deps, name, spec);

  const global = config.rateLimits.global ? make('global', config.rateLimits.global) : undefined;
  const byRoute = new Map<string, Limiter>();
  for (const [route, name, spec] of routeLimits(config.rateLimits)) if (spec) byRoute.set(route, make(name, spec));
  if (!global && byRoute.size === 0) return;

  const consume = consumer(ctx.deps);

  const setHeaders = (reply: FastifyReply, limit: Limiter, res: RateLimiterRes) => {
    reply.header('x-ratelimit-limit', String(limit.spec.max));
    reply.header('x-ratelimit-remaining', String(Math.max(0, res.remainingPoints)));
    reply.header('x-ratelimit-reset', String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))));
  };

  const reject = (reply: FastifyReply, limit: Limiter, res: RateLimiterRes) => {
    const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    reply.header('retry-after', String(retryAfter));
    return reply.code(429).send(errorBody(429, `Too many requests; retry in ${retryAfter} seconds`, 'RATE_LIMITED'));
  };

  const limit = async (request: FastifyRequest, reply: FastifyReply) => {
    const ip = clientKey(request.ip);
    if (global && !OUTSIDE_GLOBAL_LIMIT.has(request.routeOptions.url ?? '')) {
      const { res, allowed } = await consume(global, ip);
      setHeaders(reply, global, res);
      if (!allowed) return reject(reply, global, res);
    }
    const route = byRoute.get(`${request.method} ${request.routeOptions.url}`);
    if (route) {
      const { res, allowed } = await consume(route, ip);
      // The route limit is the tighter one: its state is what the headers report.
      setHeaders(reply, route, res);
      if (!allowed) return reject(reply, route, res);
    }
  };

  if (global) {
    app.addHook('onRequest', limit);
  } else {
    // No global limit: only the routes with a limit of their own pay for the hook.
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.some((method) => byRoute.has(`${method} ${route.url}`))) return;
      const own = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
      route.onRequest = [limit, ...own];
    });
  }

  // Unknown /api paths count too: without a 404 handler in this scope they would skip the hook above.
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`, 'ROUTE_NOT_FOUND'));
  });
}

/**
 * The key a client is counted under: its IPv4 address, or the /64 prefix of its IPv6 address
 * (one subscriber usually holds a whole /64 and could otherwise rotate through it).
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
