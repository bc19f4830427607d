// The router (contract section 25): how far and how long a trip is, one asynchronous interface for
// the straight estimate, the in-memory road graph and the HTTP engines (OSRM, Valhalla). Whole
// metres and whole seconds throughout.
import type { VehicleType } from '../../db/schema.js';
import { distanceMeters } from '../matching/driver-index.js';
import { AVERAGE_SPEED_MPS } from '../matching/found-drivers-json.js';

export interface Point {
  lat: number;
  lng: number;
}

export interface Leg {
  /** Whole metres. */
  distanceMeters: number;
  /** Whole seconds. */
  durationSeconds: number;
  /** The routing that produced it, recorded with a price: e.g. `graph`, or `great-circle×1.3 (graph fallback)`. */
  routing: string;
}

export interface Matrix {
  /** durations[i][j]: whole seconds from sources[i] to destinations[j]. */
  durations: number[][];
  /** distances[i][j]: whole metres. */
  distances: number[][];
  /** The router's name; the cells in `fallbacks` came from the straight estimate instead. */
  routing: string;
  /** How many cells fell back to the straight estimate. */
  fallbacks: number;
}

export interface Router {
  /** The name recorded with a price when this router answered. */
  readonly name: string;
  /** False while a graph loads (GET /health/ready answers 503 meanwhile). */
  readonly ready: boolean;
  route(from: Point, to: Point, vehicleType: VehicleType): Promise<Leg>;
  matrix(sources: readonly Point[], destinations: readonly Point[], vehicleType: VehicleType): Promise<Matrix>;
}

/** Roads are longer than the straight line: 1.3 is a common urban circuity figure. */
export const DEFAULT_DETOUR_FACTOR = 1.3;

/** The straight estimate's name, as recorded with prices since before the router (`great-circle×1.3`). */
export const straightName = (factor: number) => `great-circle×${factor}`;

/** The straight estimate, synchronous: great-circle × factor at the vehicle type's average town speed. */
export function straightLeg(
  from: Point,
  to: Point,
  vehicleType: VehicleType,
  factor = DEFAULT_DETOUR_FACTOR,
): { distanceMeters: number; durationSeconds: number } {
  const metres = Math.round(distanceMeters(from.lat, from.lng, to.lat, to.lng) * factor);
  return { distanceMeters: metres, durationSeconds: Math.round(metres / AVERAGE_SPEED_MPS[vehicleType]) };
}

/**
 * How much longer a vehicle type takes than a car on the same road (an engine's car durations × this):
 * the ratio of the average town speeds the straight estimate uses (CAR 1, BIKE and VAN 1.2, TRUCK 1.5).
 */
export const slowdown = (vehicleType: VehicleType) => AVERAGE_SPEED_MPS.CAR / AVERAGE_SPEED_MPS[vehicleType];

/** ROUTER=straight (the default): today's behaviour, byte for byte. */
export class StraightRouter implements Router {
  readonly name: string;
  readonly ready = true;

  constructor(readonly factor = DEFAULT_DETOUR_FACTOR) {
    this.name = straightName(factor);
  }

  async route(from: Point, to: Point, vehicleType: VehicleType): Promise<Leg> {
    return { ...straightLeg(from, to, vehicleType, this.factor), routing: this.name };
  }

  async matrix(sources: readonly Point[], destinations: readonly Point[], vehicleType: VehicleType): Promise<Matrix> {
    const durations: number[][] = [];
    const distances: number[][] = [];
    for (const s of sources) {
      const d: number[] = [];
      const m: number[] = [];
      for (const t of destinations) {
        const leg = straightLeg(s, t, vehicleType, this.factor);
        d.push(leg.durationSeconds);
        m.push(leg.distanceMeters);
      }
      durations.push(d);
      distances.push(m);
    }
    return { durations, distances, routing: this.name, fallbacks: 0 };
  }
}
