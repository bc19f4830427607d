// Every failure leaves in the contract's shape { statusCode, message, error, code? }.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/availability.js';
import { AppError, isDataException, statusName } from '../shared/errors.js';
import { describeValidationError } from './validation.js';
import { isConsolePath } from './web-console.js';

interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  code?: string;
}

export function errorBody(statusCode: number, message: string, code?: string): ErrorBody {
  const body: ErrorBody = { statusCode, message, error: statusName(statusCode) };
  if (code) body.code = code;
  return body;
}

const FRAMEWORK_CODES: Record<string, { status: number; code: string; message?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Content-Type must be application/json',
  },
  // Its message names the route's own limit (bodyTooLarge below).
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'Body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: 'INVALID_CONTENT_LENGTH' },
};

/** "Request body is larger than 1 MiB" (every JSON route), "… 16 KiB" (the OsmAnd route): the route's own limit. */
function bodyTooLarge(limit: number | undefined): string {
  if (limit === undefined) return 'Request body is too large';
  const size = limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MiB` : `${Math.round(limit / 1024)} KiB`;
  return `Request body is larger than ${size}`;
}

/** The answer while a dependency the request needs is away (or the instance is shutting down). */
export const SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE';

export function registerErrorHandling(
  app: FastifyInstance,
  options: {
    onDatabaseUnavailable?: (err: unknown) => void;
    consolePage?: (request: FastifyRequest, reply: FastifyReply) => unknown;
  } = {},
): void {
  app.setErrorHandler((err: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      if (err.statusCode >= 500) request.log.error({ err }, 'application error');
      return reply
        .code(err.statusCode)
        .headers(err.headers)
        .send(errorBody(err.statusCode, err.message, err.code));
    }
    const fastifyError = err as FastifyError;
    if (fastifyError.validation) {
      const message = describeValidationError(
        fastifyError.validation as any,
        fastifyError.validationContext ?? 'request',
      );
      return reply.code(400).send(errorBody(400, message, 'VALIDATION_FAILED'));
    }
    const known = fastifyError.code ? FRAMEWORK_CODES[fastifyError.code] : undefined;
    if (known) {
      const message =
        fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? bodyTooLarge(request.routeOptions.bodyLimit)
          : (known.message ?? fastifyError.message);
      return reply.code(known.status).send(errorBody(known.status, message, known.code));
    }
    if (err instanceof SyntaxError && fastifyError.statusCode === 400) {
      return reply.code(400).send(errorBody(400, 'Body is not valid JSON', 'INVALID_JSON'));
    }
    const status = fastifyError.statusCode;
    if (status && status >= 400 && status < 500) {
      if (status === 429) return reply.code(429).send(errorBody(429, fastifyError.message, 'RATE_LIMITED'));
      return reply.code(status).send(errorBody(status, fastifyError.message, fastifyError.code));
    }
    // The database is away (restarting, or it closed our connection): the request may succeed on a
    // retry. Counted and logged once per outage by the caller, not once per request.
    if (isDatabaseUnavailable(err)) {
      options.onDatabaseUnavailable?.(err);
      return reply
        .code(503)
        .header('retry-after', '1')
        .send(errorBody(503, 'The database is unavailable; try again shortly', SERVICE_UNAVAILABLE));
    }
    // PostgreSQL "data exception" (class 22: a NUL byte in text, a value out of range, a malformed
    // uuid that slipped past validation): the input was bad, not the server.
    if (isDataException(err) && !fastifyError.statusCode) {
      request.log.warn({ err }, 'input rejected by the database');
      return reply
        .code(400)
        .send(errorBody(400, 'Invalid input: a value is malformed or out of range', 'INVALID_INPUT'));
    }
    // Unexpected: full detail to the log (with the request id), none to the client.
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'Internal server error', 'INTERNAL'));
  });

  app.setNotFoundHandler((request, reply) => {
    // Paths outside /api and the operational routes belong to the web console's own router.
    if (options.consolePage && (request.method === 'GET' || request.method === 'HEAD') && isConsolePath(request.url)) {
      return options.consolePage(request, reply);
    }
    reply
      .code(404)
      .send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`, 'ROUTE_NOT_FOUND'));
  });
}
