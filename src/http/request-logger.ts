// Per-request logging: one line per request, a request's child logger made only when a line is
// actually written (making a pino child serializes its bindings; at LOG_LEVEL=warn most requests
// log nothing, and every request paid for a child it never used), and the request's URL logged with
// the secrets clients put in URLs redacted.
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ChildLoggerOptions, Logger } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Args = [unknown, ...unknown[]];

class LazyChildLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.real.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.made ? this.made.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  silent(): void {}

  fatal(...args: Args): void {
    this.write('fatal', args);
  }

  error(...args: Args): void {
    this.write('error', args);
  }

  warn(...args: Args): void {
    this.write('warn', args);
  }

  info(...args: Args): void {
    this.write('info', args);
  }

  debug(...args: Args): void {
    this.write('debug', args);
  }

  trace(...args: Args): void {
    this.write('trace', args);
  }

  private write(level: Level, args: Args): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...a: Args) => void)(...args);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child, unless the route changes the level or serializers. */
export function requestLogger(logger: Logger, bindings: Record<string, unknown>, options: ChildLoggerOptions): Logger {
  if (options.level || options.serializers) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings, options) as unknown as Logger;
}

/** One line per request when it completes, instead of Fastify's two. */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  /** Fastify's line writes the raw URL; ours goes through the request serializer (serializeRequest). */
  override routeNotFound(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.info({ req: request }, 'route not found');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error)
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

export const REDACTED = '[redacted]';
/** Path parameters that are secrets: the tracking token (/api/tracking/:token, /api/tracking/:token/stream). */
const SECRET_PARAMS = new Set(['token']);
/** Outside a route (the console's /t/:token page, a 404): the segment after one of these is a secret. */
const SECRET_AFTER = new Set(['t', 'tracking']);
/** A query pair mentioning this, in any encoding, is a secret (access_token of the streams and the driver WebSocket). */
const SECRET_QUERY = /token/i;
/** A query pair whose decoded name is one of these is a secret too: the device key of the OsmAnd positions route. */
const SECRET_QUERY_NAME = /^\s*(?:id|device_?id)\s*$/i;

/**
 * The URL as logged (contract sections 12, 14): secrets are found the way routing reads the URL, not
 * in its raw text, so that `access%5Ftoken=` or `/api/%74racking/<token>` (which route and
 * authenticate like their plain forms) are redacted too. Path: the route's secret parameters, by
 * position in the matched pattern; with no route, any segment after `t` or `tracking` once decoded,
 * in any case (the console's router ignores case). Query (after the first `?` or `#`, as the router
 * splits it): every `&`-pair whose fully decoded text mentions a token, or whose name is `id`,
 * `deviceid` or `device_id` (the OsmAnd route's device key), keeps only a plain key.
 */
export function loggedUrl(url: string, route?: string): string {
  const cut = url.search(/[?#]/);
  const path = cut < 0 ? url : url.slice(0, cut);
  return (
    redactPath(path, route) +
    (cut < 0
      ? ''
      : url[cut] +
        url
          .slice(cut + 1)
          .split('&')
          .map(redactPair)
          .join('&'))
  );
}

function redactPath(path: string, route: string | undefined): string {
  const segments = path.split('/');
  if (route) {
    // The router matched the raw path segment by segment (an encoded `/` stays inside its segment).
    const pattern = route.split('/');
    for (let i = 0; i < pattern.length && i < segments.length; i += 1) {
      if (pattern[i]!.startsWith('*')) break;
      const param = /^:(\w+)/.exec(pattern[i]!);
      if (param && SECRET_PARAMS.has(param[1]!)) segments[i] = REDACTED;
    }
    return segments.join('/');
  }
  let secretNext = false;
  for (let i = 0; i < segments.length; i += 1) {
    if (segments[i] === '') continue;
    const parts = decodeFully(segments[i]!).toLowerCase().split('/');
    const secret = secretNext || parts.slice(0, -1).some((part) => SECRET_AFTER.has(part));
    secretNext = SECRET_AFTER.has(parts.at(-1)!);
    if (secret) segments[i] = REDACTED;
  }
  return segments.join('/');
}

function redactPair(pair: string): string {
  const decoded = decodeFully(pair);
  const name = decoded.includes('=') ? decoded.slice(0, decoded.indexOf('=')) : decoded;
  if (!SECRET_QUERY.test(decoded) && !SECRET_QUERY_NAME.test(name)) return pair;
  const eq = pair.indexOf('=');
  // The key stays only when it is a plain name: an encoded one could hold the secret itself.
  return eq >= 0 && /^\w*$/.test(decodeFully(pair.slice(0, eq))) ? `${pair.slice(0, eq)}=${REDACTED}` : REDACTED;
}

/** Percent-decoded until nothing changes (a double encoding included), `+` as a space; byte by byte, never throws. */
function decodeFully(text: string): string {
  let out = text.replace(/\+/g, ' ');
  for (let round = 0; round < 5 && out.includes('%'); round += 1) {
    const next = out.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
  routeOptions?: { url?: string };
}

/** Fastify's request serializer, with the URL's secrets redacted (loggedUrl). */
export function serializeRequest(req: LoggedRequest) {
  return {
    method: req.method,
    url: loggedUrl(req.url, req.routeOptions?.url),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}
