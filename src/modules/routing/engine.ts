// What a routing engine answers (the graph, OSRM, Valhalla); the router around it (fallback.ts) turns
// its failures and missing cells into the straight estimate, counted.
import type { VehicleType } from '../../db/schema.js';
import type { Point } from './router.js';

export interface EngineLeg {
  distanceMeters: number;
  durationSeconds: number;
}

/** Whole seconds and metres; null where the engine found no route. */
export interface EngineTable {
  durations: (number | null)[][];
  distances: (number | null)[][];
}

export interface Engine {
  readonly name: string;
  readonly ready: boolean;
  /** null: no route between the points. Throws when the engine fails; signal aborts on the timeout. */
  route(from: Point, to: Point, vehicleType: VehicleType, signal?: AbortSignal): Promise<EngineLeg | null>;
  table(
    sources: readonly Point[],
    destinations: readonly Point[],
    vehicleType: VehicleType,
    signal?: AbortSignal,
  ): Promise<EngineTable>;
}
