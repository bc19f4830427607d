// A period's bound in a query (`from` / `to` of a statement or an earnings report): a date, read as
// midnight UTC, or an instant with its zone. Pure.
import { badRequest } from './errors.js';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// An instant must say which one it is: a date-time with Z or an offset.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** `from` / `to`: a date (midnight UTC) or an instant with its zone. */
export function parseBound(name: string, text: string): Date {
  const ok = DATE_ONLY.test(text) || INSTANT.test(text);
  const date = new Date(DATE_ONLY.test(text) ? `${text}T00:00:00Z` : text);
  // Date accepts 2026-02-30 as 2 March: a date must survive the round trip.
  if (!ok || Number.isNaN(date.getTime()) || (DATE_ONLY.test(text) && date.toISOString().slice(0, 10) !== text)) {
    throw badRequest(
      `querystring.${name} must be a date (2026-11-01) or an ISO 8601 instant with its zone (2026-11-01T00:00:00Z)`,
      'VALIDATION_FAILED',
    );
  }
  return date;
}
