// Whether the database server can be reached, as the pool sees it: one log line when it is lost and
// one when it is back (with what failed meanwhile), instead of one per failed request or retry.
import type { Logger } from 'pino';

const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|not queryable|connection timeout/i;

/**
 * An error that says the database is away rather than that the statement was wrong: the server shut
 * a connection (57P01 admin shutdown, 57P02 crash shutdown, 57P03 starting up), a connection-class
 * SQLSTATE (08xxx), a refused or reset socket, or no connection within the pool's timeout.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 3) return false;
  const { code, message, errors, cause } = err as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
    cause?: unknown;
  };
  if (
    typeof code === 'string' &&
    (/^57P0[123]$/.test(code) || /^08[0-9A-Z]{3}$/.test(code) || CONNECTION_ERRNOS.has(code))
  )
    return true;
  if (typeof code !== 'string' && typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}

export class DatabaseAvailability {
  private lostAt: number | undefined;
  private failedRequests = 0;
  private connectionErrors = 0;
  private readonly loggers = new Set<Logger>();

  get available(): boolean {
    return this.lostAt === undefined;
  }

  /** Logs state changes to this logger until the returned function is called. */
  watch(logger: Logger): () => void {
    this.loggers.add(logger);
    return () => void this.loggers.delete(logger);
  }

  /** A connection failed or was closed by the server (errors of other kinds are ignored). */
  lost(err: unknown): void {
    if (!isDatabaseUnavailable(err)) return;
    this.connectionErrors += 1;
    if (this.lostAt !== undefined) return;
    this.lostAt = Date.now();
    const { code, message } = err as { code?: string; message?: string };
    for (const logger of this.loggers) logger.error({ code, reason: message }, 'database lost');
  }

  /** A request was answered 503 because the database was away. */
  requestFailed(err: unknown): void {
    this.lost(err);
    this.failedRequests += 1;
  }

  /** A connection was made or a statement answered. */
  recovered(): void {
    if (this.lostAt === undefined) return;
    const downMs = Date.now() - this.lostAt;
    const counts = { downMs, failedRequests: this.failedRequests, connectionErrors: this.connectionErrors };
    this.lostAt = undefined;
    this.failedRequests = 0;
    this.connectionErrors = 0;
    for (const logger of this.loggers) logger.info(counts, 'database recovered');
  }
}
