// Per-request logging: one line per request, and a request's child logger made only when a line is
// actually written (making a pino child serializes its bindings; at LOG_LEVEL=warn most requests
// log nothing, and every request paid for a child it never used).
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

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
