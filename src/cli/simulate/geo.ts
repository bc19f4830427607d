// Seeded randomness, the geometry of moving about a round area, and the vehicles' town speeds.
import type { LatLng, VehicleType } from './model.js';

/** mulberry32: a tiny seeded generator, so that --seed repeats a run's choices. */
export function rng(seed: number): () => number {
  let a = seed >>> 0 || 1;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EARTH_M = 6_371_000;
const rad = (d: number) => (d * Math.PI) / 180;
function distanceM(a: LatLng, b: LatLng): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_M * Math.asin(Math.sqrt(h));
}
export function pointIn(random: () => number, centre: LatLng, radiusKm: number): LatLng {
  const r = radiusKm * 1000 * Math.sqrt(random());
  const theta = random() * 2 * Math.PI;
  const dLat = (r * Math.cos(theta)) / EARTH_M;
  const dLng = (r * Math.sin(theta)) / (EARTH_M * Math.cos(rad(centre.lat)));
  return { lat: round6(centre.lat + (dLat * 180) / Math.PI), lng: round6(centre.lng + (dLng * 180) / Math.PI) };
}
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
/** Moves `from` towards `to` by at most `meters`; returns the new point and whether it arrived. */
export function step(from: LatLng, to: LatLng, meters: number): { at: LatLng; arrived: boolean } {
  const d = distanceM(from, to);
  if (d <= meters || d < 1) return { at: to, arrived: true };
  const f = meters / d;
  return {
    at: { lat: round6(from.lat + (to.lat - from.lat) * f), lng: round6(from.lng + (to.lng - from.lng) * f) },
    arrived: false,
  };
}

// Town speeds (m/s), as the service's own ETA estimate assumes.
export const SPEED_MPS: Record<VehicleType, number> = { BIKE: 25 / 3.6, CAR: 30 / 3.6, VAN: 25 / 3.6, TRUCK: 20 / 3.6 };
export const VEHICLES: VehicleType[] = ['BIKE', 'BIKE', 'CAR', 'CAR', 'VAN', 'TRUCK'];
