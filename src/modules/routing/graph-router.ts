// ROUTER=graph: routes on an OpenStreetMap road network loaded from a GeoJSON file (ROUTER_GRAPH).
import { readFile } from 'node:fs/promises';
import type { VehicleType } from '../../db/schema.js';
import { RoadGraph } from './road-graph.js';
import { slowdown, type Point } from './router.js';
import type { Engine, EngineLeg, EngineTable } from './engine.js';

/** A matrix computes this long at most before letting other work run. */
const YIELD_AFTER_MS = 50;

export class GraphEngine implements Engine {
  readonly name = 'graph';
  private graph: RoadGraph | undefined;

  /** snapMeters: a point further than this from a road node has no route (it falls back). */
  constructor(private readonly snapMeters: number) {}

  get ready(): boolean {
    return this.graph !== undefined;
  }

  get stats() {
    return this.graph?.stats;
  }

  /** Reads and builds the graph (GET /health/ready answers 503 until it is done). */
  async load(path: string): Promise<void> {
    this.use(RoadGraph.fromGeoJson(JSON.parse(await readFile(path, 'utf8'))));
  }

  use(graph: RoadGraph): void {
    this.graph = graph;
  }

  async route(from: Point, to: Point, vehicleType: VehicleType): Promise<EngineLeg | null> {
    const t = await this.table([from], [to], vehicleType);
    const durationSeconds = t.durations[0][0];
    const distanceMeters = t.distances[0][0];
    return durationSeconds === null || distanceMeters === null ? null : { durationSeconds, distanceMeters };
  }

  async table(
    sources: readonly Point[],
    destinations: readonly Point[],
    vehicleType: VehicleType,
  ): Promise<EngineTable> {
    const graph = this.graph;
    if (!graph) throw new Error('The road graph is not loaded yet');
    const factor = slowdown(vehicleType);
    const targetNodes = Int32Array.from(destinations, (p) => graph.snap(p.lat, p.lng, this.snapMeters));
    const reachable = Int32Array.from(targetNodes.filter((n) => n >= 0));
    const seconds = new Float64Array(reachable.length);
    const metres = new Float64Array(reachable.length);
    const bySource = new Map<number, { d: (number | null)[]; m: (number | null)[] }>();
    const durations: (number | null)[][] = [];
    const distances: (number | null)[][] = [];
    let since = performance.now();
    for (const s of sources) {
      // A large matrix yields now and then, so that requests keep being served meanwhile.
      if (performance.now() - since > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        since = performance.now();
      }
      const node = graph.snap(s.lat, s.lng, this.snapMeters);
      let row = bySource.get(node);
      if (!row) {
        row = { d: [], m: [] };
        if (node >= 0) graph.shortest(node, reachable, seconds, metres);
        for (let j = 0, k = 0; j < targetNodes.length; j++) {
          const ok = node >= 0 && targetNodes[j] >= 0 && !Number.isNaN(seconds[k]);
          row.d.push(ok ? Math.round(seconds[k] * factor) : null);
          row.m.push(ok ? Math.round(metres[k]) : null);
          if (targetNodes[j] >= 0) k++;
        }
        bySource.set(node, row);
      }
      durations.push(row.d.slice());
      distances.push(row.m.slice());
    }
    return { durations, distances };
  }
}
