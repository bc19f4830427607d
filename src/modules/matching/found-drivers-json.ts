// The find-drivers answer as JSON bytes, put together from pieces remembered per driver. A driver's
// name, plate and rating rarely change and a position never does (each report is a new object), so
// a driver found by many searches is not turned into text again every time: number-to-text for
// coordinates was most of the cost of serializing this answer. The pieces are kept as UTF-8 bytes
// and the answer is copied into one buffer, so nothing measures or encodes a string on the way out
// (Fastify takes a buffer's length as it is; a string answer was measured for its Content-Length
// and encoded again for the socket, which together cost about as much as building it).
import type { VehicleType } from '../../db/schema.js';
import type { DriverRecord, NearestResult, Position } from './driver-index.js';

/** Average door-to-door speeds in town (m/s) for the ETA estimate, until real routing is plugged in. */
export const AVERAGE_SPEED_MPS: Record<VehicleType, number> = {
  BIKE: 25 / 3.6,
  CAR: 30 / 3.6,
  VAN: 25 / 3.6,
  TRUCK: 20 / 3.6,
};

export const etaSeconds = (distanceMeters: number, vehicleType: VehicleType) => Math.round(distanceMeters / AVERAGE_SPEED_MPS[vehicleType]);

/** The fields of a found driver that come from its record, and their JSON (kept in `DriverRecord.answer`). */
interface Piece {
  firstName: string;
  vehicleType: VehicleType;
  vehiclePlate: string;
  rating: number | null;
  position: Position;
  /** `{"driverId":…,"rating":…,"location":{"lat":…,"lng":…}` */
  json: Buffer;
}

const OPEN = Buffer.from('{"drivers":[');

export class FoundDriversJson {
  /** `{"drivers":[…],"radiusMeters":…}` with the keys and values of FindDriversResponse, as UTF-8. */
  render(found: readonly NearestResult[], radiusMeters: number): Buffer {
    const n = found.length;
    const pieces: Buffer[] = new Array(n);
    // The rest of each driver (two integers) and the closing are ASCII: one byte a character.
    const tails: string[] = new Array(n);
    const close = `],"radiusMeters":${JSON.stringify(radiusMeters)}}`;
    let length = OPEN.length + close.length;
    for (let i = 0; i < n; i++) {
      const { driver, distanceMeters } = found[i];
      pieces[i] = this.piece(driver);
      tails[i] = `,"distanceMeters":${Math.round(distanceMeters)},"etaSeconds":${etaSeconds(distanceMeters, driver.vehicleType)}}${i < n - 1 ? ',' : ''}`;
      length += pieces[i].length + tails[i].length;
    }
    const out = Buffer.allocUnsafe(length);
    out.set(OPEN, 0);
    let at = OPEN.length;
    for (let i = 0; i < n; i++) {
      out.set(pieces[i], at);
      at += pieces[i].length;
      at += out.write(tails[i], at, 'latin1');
    }
    out.write(close, at, 'latin1');
    return out;
  }

  /** The driver's JSON up to its location (the record is updated in place: the piece is checked against it). */
  private piece(driver: DriverRecord): Buffer {
    const cached = driver.answer as Piece | undefined;
    const position = driver.position!;
    if (
      cached !== undefined &&
      cached.position === position &&
      cached.firstName === driver.firstName &&
      cached.vehicleType === driver.vehicleType &&
      cached.vehiclePlate === driver.vehiclePlate &&
      cached.rating === driver.rating
    ) {
      return cached.json;
    }
    const json = Buffer.from(
      `{"driverId":${JSON.stringify(driver.id)},"firstName":${JSON.stringify(driver.firstName)},` +
        `"vehicleType":${JSON.stringify(driver.vehicleType)},"vehiclePlate":${JSON.stringify(driver.vehiclePlate)},` +
        `"rating":${JSON.stringify(driver.rating)},"location":{"lat":${JSON.stringify(position.lat)},"lng":${JSON.stringify(position.lng)}}`,
    );
    const piece: Piece = { firstName: driver.firstName, vehicleType: driver.vehicleType, vehiclePlate: driver.vehiclePlate, rating: driver.rating, position, json };
    driver.answer = piece;
    return json;
  }
}
