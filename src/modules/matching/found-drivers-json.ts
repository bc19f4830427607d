// The find-drivers answer as JSON text, joined from pieces remembered per driver: number-to-text for
// coordinates was most of the cost of serializing it (bench/RESULTS.md).
import type { VehicleType } from '../../db/schema.js';
import type { DriverRecord, NearestResult, Position } from './driver-index.js';

/** Average door-to-door speeds in town (m/s) for the ETA estimate, until real routing is plugged in. */
export const AVERAGE_SPEED_MPS: Record<VehicleType, number> = {
  BIKE: 25 / 3.6,
  CAR: 30 / 3.6,
  VAN: 25 / 3.6,
  TRUCK: 20 / 3.6,
};

export const etaSeconds = (distanceMeters: number, vehicleType: VehicleType) =>
  Math.round(distanceMeters / AVERAGE_SPEED_MPS[vehicleType]);

interface Piece {
  firstName: string;
  vehicleType: VehicleType;
  vehiclePlate: string;
  rating: number | null;
  position: Position;
  json: string;
}

export class FoundDriversJson {
  /** `{"drivers":[…],"radiusMeters":…}` with the keys and values of FindDriversResponse. */
  render(found: readonly NearestResult[], radiusMeters: number): string {
    const parts: string[] = ['{"drivers":['];
    for (let i = 0; i < found.length; i++) {
      const { driver, distanceMeters } = found[i];
      if (i > 0) parts.push(',');
      parts.push(
        this.piece(driver),
        `,"distanceMeters":${Math.round(distanceMeters)},"etaSeconds":${etaSeconds(distanceMeters, driver.vehicleType)}}`,
      );
    }
    parts.push(`],"radiusMeters":${JSON.stringify(radiusMeters)}}`);
    return parts.join('');
  }

  /** The driver's JSON up to its location (the record is updated in place: the piece is checked against it). */
  private piece(driver: DriverRecord): string {
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
    // join, not +: a concatenated piece is a tree of strings kept per driver (bench/RESULTS.md).
    const json = [
      '{"driverId":',
      JSON.stringify(driver.id),
      ',"firstName":',
      JSON.stringify(driver.firstName),
      ',"vehicleType":',
      JSON.stringify(driver.vehicleType),
      ',"vehiclePlate":',
      JSON.stringify(driver.vehiclePlate),
      ',"rating":',
      JSON.stringify(driver.rating),
      ',"location":{"lat":',
      JSON.stringify(position.lat),
      ',"lng":',
      JSON.stringify(position.lng),
      '}',
    ].join('');
    const piece: Piece = {
      firstName: driver.firstName,
      vehicleType: driver.vehicleType,
      vehiclePlate: driver.vehiclePlate,
      rating: driver.rating,
      position,
      json,
    };
    driver.answer = piece;
    return json;
  }
}
