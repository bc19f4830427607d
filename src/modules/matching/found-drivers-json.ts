// The find-drivers answer as JSON text, put together from pieces remembered per driver and per
// position. A driver's name, plate and rating rarely change, and a position never does (each report
// is a new object), so a driver found by many searches is not turned into text again every time:
// number-to-text for coordinates was most of the cost of serializing this answer.
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

/** The fields of a found driver that come from its record, and their text. */
interface Head {
  firstName: string;
  vehicleType: VehicleType;
  vehiclePlate: string;
  rating: number | null;
  json: string;
}

export class FoundDriversJson {
  // Keyed by the objects themselves: a driver or position the index lets go of is dropped with it.
  private readonly heads = new WeakMap<DriverRecord, Head>();
  private readonly locations = new WeakMap<Position, string>();

  /** `{"drivers":[…],"radiusMeters":…}` with the keys and values of FindDriversResponse. */
  render(found: readonly NearestResult[], radiusMeters: number): string {
    let out = '{"drivers":[';
    for (let i = 0; i < found.length; i++) {
      const { driver, distanceMeters } = found[i];
      if (i > 0) out += ',';
      out += this.head(driver);
      out += this.location(driver.position!);
      out += `,"distanceMeters":${Math.round(distanceMeters)},"etaSeconds":${etaSeconds(distanceMeters, driver.vehicleType)}}`;
    }
    return `${out}],"radiusMeters":${JSON.stringify(radiusMeters)}}`;
  }

  /** `{"driverId":…,"rating":…` (the record is updated in place: the text is checked against it). */
  private head(driver: DriverRecord): string {
    const cached = this.heads.get(driver);
    if (
      cached &&
      cached.firstName === driver.firstName &&
      cached.vehicleType === driver.vehicleType &&
      cached.vehiclePlate === driver.vehiclePlate &&
      cached.rating === driver.rating
    ) {
      return cached.json;
    }
    const json =
      `{"driverId":${JSON.stringify(driver.id)},"firstName":${JSON.stringify(driver.firstName)},` +
      `"vehicleType":${JSON.stringify(driver.vehicleType)},"vehiclePlate":${JSON.stringify(driver.vehiclePlate)},` +
      `"rating":${JSON.stringify(driver.rating)}`;
    this.heads.set(driver, { firstName: driver.firstName, vehicleType: driver.vehicleType, vehiclePlate: driver.vehiclePlate, rating: driver.rating, json });
    return json;
  }

  /** `,"location":{"lat":…,"lng":…}`. */
  private location(p: Position): string {
    let json = this.locations.get(p);
    if (json === undefined) {
      json = `,"location":{"lat":${JSON.stringify(p.lat)},"lng":${JSON.stringify(p.lng)}}`;
      this.locations.set(p, json);
    }
    return json;
  }
}
