// Points, and the distance along reported positions. How far and how long a trip is by road comes
// from the router (src/modules/routing: ROUTER=straight, graph, osrm or valhalla).
import { distanceMeters } from '../matching/driver-index.js';

export interface Point {
  lat: number;
  lng: number;
}

/** The distance along reported positions (great-circle between consecutive ones), in whole metres. */
export function pathDistanceMeters(points: readonly Point[]): number {
  let total = 0;
  for (let i = 1; i < points.length; i++)
    total += distanceMeters(points[i - 1].lat, points[i - 1].lng, points[i].lat, points[i].lng);
  return Math.round(total);
}
