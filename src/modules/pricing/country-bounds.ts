// Where a point may be, per seeded country, without a geocoder: bounding boxes (south, west, north,
// east in degrees, a few km of margin). A box is coarser than the border, so this is a necessary
// condition only: a point outside its country's boxes is surely not in that country, one inside may
// still be across a border. A country without boxes (added later by an admin) is not checked.
import type { Point } from './routing.js';

type Box = [south: number, west: number, north: number, east: number];

const BOXES: Record<string, Box[]> = {
  KE: [[-4.8, 33.8, 5.1, 42.0]],
  NG: [[4.2, 2.6, 13.95, 14.75]],
  GH: [[4.65, -3.3, 11.2, 1.3]],
  UG: [[-1.55, 29.5, 4.3, 35.1]],
  TZ: [[-11.8, 29.3, -0.95, 40.5]],
  RW: [[-2.9, 28.8, -1.0, 30.95]],
  ZA: [[-34.9, 16.4, -22.1, 33.0]],
  EG: [[21.95, 24.65, 31.7, 37.0]],
  ET: [[3.35, 32.95, 14.95, 48.05]],
  MA: [[20.7, -17.2, 36.0, -0.95]],
  SN: [[12.25, -17.6, 16.75, -11.3]],
  CI: [[4.3, -8.65, 10.8, -2.45]],
  GB: [[49.8, -8.7, 60.9, 1.8]],
  US: [
    [24.4, -125.0, 49.45, -66.9],
    [51.0, -180.0, 71.5, -129.9],
    [51.0, 172.0, 53.1, 180.0],
    [18.85, -160.3, 22.3, -154.75],
  ],
  FR: [[41.3, -5.2, 51.15, 9.6]],
  DE: [[47.25, 5.85, 55.1, 15.1]],
  IN: [[6.5, 68.0, 37.1, 97.45]],
  AE: [[22.6, 51.5, 26.1, 56.45]],
};

const inBox = (p: Point, [s, w, n, e]: Box) => p.lat >= s && p.lat <= n && p.lng >= w && p.lng <= e;

/** Whether the point may be in the country: false only when it is surely outside; true for a country without boxes. */
export function mayBeIn(countryCode: string, p: Point): boolean {
  const boxes = BOXES[countryCode.trim().toUpperCase()];
  return !boxes || boxes.some((box) => inBox(p, box));
}

/** The seeded countries whose boxes hold the point. */
export function countriesMaybeAt(p: Point): string[] {
  return Object.keys(BOXES).filter((code) => BOXES[code].some((box) => inBox(p, box)));
}

/** Whether two points are surely in different countries: each lies in some country's box, and no box country holds both. */
export function surelyDifferentCountries(a: Point, b: Point): boolean {
  const atA = countriesMaybeAt(a);
  const atB = countriesMaybeAt(b);
  return atA.length > 0 && atB.length > 0 && !atA.some((code) => atB.includes(code));
}
