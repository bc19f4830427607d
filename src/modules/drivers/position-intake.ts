// One way in for a driver's position, whatever carried it (the driver WebSocket, Traccar Client's
// OsmAnd requests): the same validation (LocationMessage's schema, the HTTP route's Ajv and formats)
// and the same pipeline (the live index, then write-behind, other instances, dispatch and tracking
// streams through LiveDrivers.report).
import type { Static } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { compileBodySchema, describeValidationError } from '../../http/validation.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import { LocationMessage } from './drivers.schemas.js';

const validateLocation = compileBodySchema(LocationMessage) as ValidateFunction<Static<typeof LocationMessage>>;

export type PositionOutcome = { ok: true; applied: boolean } | { ok: false; message: string };

/**
 * Checks a `{ type: "location", lat, lng, ... }` message and hands it to the live index. `applied`
 * is false for a position older than the one held (ignored, as over HTTP). `name` names the input
 * in the error message.
 */
export function acceptPosition(live: LiveDrivers, driverId: string, message: unknown, name = 'message'): PositionOutcome {
  if (!validateLocation(message)) return { ok: false, message: describeValidationError(validateLocation.errors ?? [], name) };
  return { ok: true, applied: live.report(driverId, message) };
}
