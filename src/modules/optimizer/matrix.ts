// The default MatrixProvider: the service's straight-line routing (great-circle × 1.3 at a car's
// average town speed, pricing/routing.ts) between every pair of points. The road router (ROUTER=...)
// plugs in behind the same interface.
import { route } from '../pricing/routing.js';
import type { Location, MatrixProvider } from './vroom.js';

export const straightMatrix: MatrixProvider = {
  durations(points: Location[]): Promise<number[][]> {
    return Promise.resolve(
      points.map((a) =>
        points.map((b) =>
          a === b ? 0 : route({ lat: a[1], lng: a[0] }, { lat: b[1], lng: b[0] }, 'CAR').durationSeconds,
        ),
      ),
    );
  },
};
