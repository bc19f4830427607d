// The one routing function: how far and how long a trip is. Great-circle distance × a detour factor
// at the vehicle's average town speed, until a routing engine (OSRM, Valhalla) replaces it behind the
// same signature. Quotes, final fares and pickup ETAs all come from here.
import type { VehicleType } from '../../db/schema.js';
import { distanceMeters } from '../matching/driver-index.js';
import { AVERAGE_SPEED_MPS } from '../matching/found-drivers-json.js';

export interface Point {
  lat: number;
  lng: number;
}

export interface Route {
  /** Whole metres. */
  distanceMeters: number;
  /** Whole seconds. */
  durationSeconds: number;
}

export type Router = (from: Point, to: Point, vehicleType: VehicleType) => Route;

/** Roads are longer than the straight line: 1.3 is a common urban circuity figure. */
export const DETOUR_FACTOR = 1.3;

/** Recorded with each price, so a dispute knows which routing produced its distance. */
export const ROUTING_NAME = 'great-circle×1.3';

export const route: Router = (from, to, vehicleType) => {
  const metres = Math.round(distanceMeters(from.lat, from.lng, to.lat, to.lng) * DETOUR_FACTOR);
  return { distanceMeters: metres, durationSeconds: Math.round(metres / AVERAGE_SPEED_MPS[vehicleType]) };
};

/** The distance along reported positions (great-circle between consecutive ones), in whole metres. */
export function pathDistanceMeters(points: readonly Point[]): number {
  let total = 0;
  for (let i = 1; i < points.length; i++)
    total += distanceMeters(points[i - 1].lat, points[i - 1].lng, points[i].lat, points[i].lng);
  return Math.round(total);
}
