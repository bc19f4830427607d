// The MatrixProvider of problems without matrices: the service's router (contract 25: straight by
// default, or the road graph, OSRM or Valhalla as ROUTER says) between every pair of points, at a
// car's times.
import type { Router } from '../routing/router.js';
import type { Location, MatrixProvider } from './vroom.js';

export function routerMatrix(router: Router): MatrixProvider {
  return {
    async durations(points: Location[]): Promise<number[][]> {
      const at = points.map(([lng, lat]) => ({ lat, lng }));
      const { durations } = await router.matrix(at, at, 'CAR');
      // A task's own point to itself is no travel, whatever a road engine answers for a snapped pair.
      return durations.map((row, i) => row.map((seconds, j) => (i === j ? 0 : seconds)));
    },
  };
}
