// One error type for the whole service; the error handler turns it into the contract's shape.
import { STATUS_CODES } from 'node:http';

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export function statusName(statusCode: number): string {
  return STATUS_CODES[statusCode] ?? 'Error';
}

export const badRequest = (message: string, code = 'VALIDATION_FAILED') => new AppError(400, code, message);
export const unauthorized = (message = 'Unauthorized', code = 'UNAUTHORIZED') => new AppError(401, code, message);
export const forbidden = (message = 'Forbidden', code = 'FORBIDDEN') => new AppError(403, code, message);
export const notFound = (message: string, code = 'NOT_FOUND') => new AppError(404, code, message);
export const conflict = (message: string, code = 'CONFLICT') => new AppError(409, code, message);
export const unprocessable = (message: string, code = 'UNPROCESSABLE') => new AppError(422, code, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number, code = 'RATE_LIMITED') =>
  new AppError(429, code, message, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/** UUID in its plain form (what PostgreSQL's uuid type accepts), any case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A PostgreSQL "data exception" (SQLSTATE class 22): the value was bad, not the server. */
export function isDataException(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}
