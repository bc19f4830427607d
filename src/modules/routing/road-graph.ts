// ROUTER=graph's road network: an OpenStreetMap extract as GeoJSON reduced to the roads a car may
// drive (speeds by highway class, one-way kept), held as a compact graph in typed arrays (CSR), with a
// binary-heap Dijkstra on travel time and a grid index that snaps a point to the nearest road node.
// Pure: no I/O, no clock.
import { distanceMeters } from '../matching/driver-index.js';

/** km/h by highway class when a way has no parseable maxspeed; a class not listed here is not a car road. */
export const HIGHWAY_SPEEDS_KMH: Readonly<Record<string, number>> = {
  motorway: 100,
  trunk: 80,
  primary: 65,
  secondary: 55,
  tertiary: 45,
  unclassified: 35,
  residential: 30,
  living_street: 10,
  service: 20,
  motorway_link: 60,
  trunk_link: 50,
  primary_link: 45,
  secondary_link: 40,
  tertiary_link: 35,
};

/** Access values that shut cars out (access, motor_vehicle, motorcar, vehicle). */
const NO_CARS = new Set(['no', 'private', 'agricultural', 'forestry', 'delivery_only']);

/** A maxspeed tag in km/h (`50`, `50 km/h`, `30 mph`), or undefined when it is not a number (`SE:urban`, `signals`). */
export function parseMaxspeed(raw: unknown): number | undefined {
  if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(km\/h|kmh|kph|mph)?\s*$/i.exec(String(raw));
  if (!m) return undefined;
  const value = Number(m[1]) * (m[2]?.toLowerCase() === 'mph' ? 1.609344 : 1);
  return value >= 5 && value <= 150 ? value : undefined;
}

/** 1: forward only, -1: backward only, 0: both ways. `junction=roundabout` and motorways are one-way unless tagged `oneway=no`. */
export function onewayOf(props: Record<string, unknown>): 1 | -1 | 0 {
  const raw = typeof props.oneway === 'string' ? props.oneway.toLowerCase() : props.oneway;
  if (raw === 'yes' || raw === '1' || raw === 'true' || raw === 1 || raw === true) return 1;
  if (raw === '-1' || raw === 'reverse' || raw === -1) return -1;
  if (raw === 'no' || raw === '0' || raw === 'false') return 0;
  if (props.junction === 'roundabout' || props.highway === 'motorway') return 1;
  return 0;
}

/** A way's speed for cars in km/h, or undefined when cars may not drive it (not a car road, an area, no access). */
export function carSpeedKmh(props: Record<string, unknown>): number | undefined {
  const highway = props.highway;
  if (typeof highway !== 'string') return undefined;
  const base = HIGHWAY_SPEEDS_KMH[highway];
  if (base === undefined || props.area === 'yes') return undefined;
  for (const key of ['access', 'vehicle', 'motor_vehicle', 'motorcar']) {
    const value = props[key];
    if (typeof value === 'string' && NO_CARS.has(value)) return undefined;
  }
  return parseMaxspeed(props.maxspeed) ?? base;
}

interface GeoJsonFeature {
  type?: string;
  properties?: Record<string, unknown> | null;
  geometry?: { type?: string; coordinates?: unknown } | null;
}

export interface RoadGraphStats {
  features: number;
  carWays: number;
  /** The ways' distinct coordinates, before the chains between junctions were contracted. */
  pointNodes: number;
  nodes: number;
  edges: number;
  /** Nodes in the largest strongly connected part, the only ones points snap to. */
  snappable: number;
}

const GRID_DEG = 0.005;

export class RoadGraph {
  readonly nodeCount: number;
  /** CSR: the edges leaving node v are offsets[v] .. offsets[v + 1] - 1. */
  private readonly offsets: Int32Array;
  private readonly targets: Int32Array;
  private readonly edgeSeconds: Float64Array;
  private readonly edgeMeters: Float64Array;
  readonly lat: Float64Array;
  readonly lng: Float64Array;
  private readonly grid = new Map<number, number[]>();
  // Dijkstra's working arrays, reused (one query at a time: the router is single-threaded).
  private readonly cost: Float64Array;
  private readonly metres: Float64Array;
  private readonly settled: Uint32Array;
  private readonly reached: Uint32Array;
  private readonly wanted: Uint32Array;
  private generation = 0;
  private readonly heapKeys: Float64Array;
  private readonly heapNodes: Int32Array;
  readonly stats: RoadGraphStats;

  private constructor(
    lat: Float64Array,
    lng: Float64Array,
    from: Int32Array,
    to: Int32Array,
    seconds: Float64Array,
    meters: Float64Array,
    edges: number,
    stats: Omit<RoadGraphStats, 'snappable' | 'nodes' | 'edges'>,
  ) {
    const n = lat.length;
    this.nodeCount = n;
    this.lat = lat;
    this.lng = lng;
    this.offsets = new Int32Array(n + 1);
    for (let e = 0; e < edges; e++) this.offsets[from[e] + 1]++;
    for (let v = 0; v < n; v++) this.offsets[v + 1] += this.offsets[v];
    this.targets = new Int32Array(edges);
    this.edgeSeconds = new Float64Array(edges);
    this.edgeMeters = new Float64Array(edges);
    const fill = this.offsets.slice(0, n);
    for (let e = 0; e < edges; e++) {
      const slot = fill[from[e]]++;
      this.targets[slot] = to[e];
      this.edgeSeconds[slot] = seconds[e];
      this.edgeMeters[slot] = meters[e];
    }
    this.cost = new Float64Array(n);
    this.metres = new Float64Array(n);
    this.settled = new Uint32Array(n);
    this.reached = new Uint32Array(n);
    this.wanted = new Uint32Array(n);
    this.heapKeys = new Float64Array(edges + 2);
    this.heapNodes = new Int32Array(edges + 2);
    const main = this.mainComponent(from, to, edges);
    let snappable = 0;
    for (let v = 0; v < n; v++) {
      if (!main[v]) continue;
      snappable++;
      const key = cellKey(Math.floor(lat[v] / GRID_DEG), Math.floor(lng[v] / GRID_DEG));
      const cell = this.grid.get(key);
      if (cell) cell.push(v);
      else this.grid.set(key, [v]);
    }
    this.stats = { ...stats, nodes: n, edges, snappable };
  }

  /** Builds the graph of a GeoJSON FeatureCollection's car roads (LineString and MultiLineString ways). */
  static fromGeoJson(geojson: unknown): RoadGraph {
    const features = (geojson as { features?: unknown })?.features;
    if (!Array.isArray(features)) throw new Error('The road network is not a GeoJSON FeatureCollection');
    const ids = new Map<string, number>();
    const lat: number[] = [];
    const lng: number[] = [];
    let from = new Int32Array(1 << 16);
    let to = new Int32Array(1 << 16);
    let seconds = new Float64Array(1 << 16);
    let meters = new Float64Array(1 << 16);
    let edges = 0;
    let carWays = 0;
    const node = (c: unknown): number => {
      if (!Array.isArray(c) || typeof c[0] !== 'number' || typeof c[1] !== 'number') return -1;
      const key = `${c[0]},${c[1]}`;
      let id = ids.get(key);
      if (id === undefined) {
        id = lat.length;
        ids.set(key, id);
        lng.push(c[0]);
        lat.push(c[1]);
      }
      return id;
    };
    const addEdge = (a: number, b: number, s: number, m: number) => {
      if (edges === from.length) {
        const grow = <T extends Int32Array | Float64Array>(arr: T): T => {
          const bigger = new (arr.constructor as new (n: number) => T)(arr.length * 2);
          bigger.set(arr);
          return bigger;
        };
        from = grow(from);
        to = grow(to);
        seconds = grow(seconds);
        meters = grow(meters);
      }
      from[edges] = a;
      to[edges] = b;
      seconds[edges] = s;
      meters[edges] = m;
      edges++;
    };
    for (const f of features as GeoJsonFeature[]) {
      const props = f?.properties ?? {};
      const geometry = f?.geometry;
      if (!geometry) continue;
      const lines =
        geometry.type === 'LineString'
          ? [geometry.coordinates]
          : geometry.type === 'MultiLineString' && Array.isArray(geometry.coordinates)
            ? geometry.coordinates
            : [];
      if (lines.length === 0) continue;
      const kmh = carSpeedKmh(props);
      if (kmh === undefined) continue;
      carWays++;
      const mps = kmh / 3.6;
      const oneway = onewayOf(props);
      for (const line of lines) {
        if (!Array.isArray(line)) continue;
        let prev = -1;
        for (const c of line) {
          const cur = node(c);
          if (cur < 0) continue;
          if (prev >= 0 && prev !== cur) {
            const m = distanceMeters(lat[prev], lng[prev], lat[cur], lng[cur]);
            const s = m / mps;
            if (oneway >= 0) addEdge(prev, cur, s, m);
            if (oneway <= 0) addEdge(cur, prev, s, m);
          }
          prev = cur;
        }
      }
    }
    const c = contract(Float64Array.from(lat), Float64Array.from(lng), from, to, seconds, meters, edges);
    return new RoadGraph(c.lat, c.lng, c.from, c.to, c.seconds, c.meters, c.edges, {
      features: features.length,
      carWays,
      pointNodes: lat.length,
    });
  }

  /**
   * The largest strongly connected part (a node there reaches every other node there and back): the
   * nodes reached both forward and backward from a seed, tried from a few seeds in the largest
   * weakly connected part. Points snap only there, so a snapped pair always has a route.
   */
  private mainComponent(from: Int32Array, to: Int32Array, edges: number): Uint8Array {
    const n = this.nodeCount;
    const parent = new Int32Array(n);
    for (let v = 0; v < n; v++) parent[v] = v;
    const find = (v: number): number => {
      while (parent[v] !== v) v = parent[v] = parent[parent[v]];
      return v;
    };
    for (let e = 0; e < edges; e++) parent[find(from[e])] = find(to[e]);
    const size = new Int32Array(n);
    let biggest = -1;
    for (let v = 0; v < n; v++) {
      const r = find(v);
      size[r]++;
      if (biggest < 0 || size[r] > size[biggest]) biggest = r;
    }
    // Reverse adjacency for the backward search.
    const rOffsets = new Int32Array(n + 1);
    for (let e = 0; e < edges; e++) rOffsets[to[e] + 1]++;
    for (let v = 0; v < n; v++) rOffsets[v + 1] += rOffsets[v];
    const rTargets = new Int32Array(edges);
    const fill = rOffsets.slice(0, n);
    for (let e = 0; e < edges; e++) rTargets[fill[to[e]]++] = from[e];
    const reach = (seed: number, offsets: Int32Array, targets: Int32Array): Uint8Array => {
      const seen = new Uint8Array(n);
      const stack = [seed];
      seen[seed] = 1;
      while (stack.length) {
        const v = stack.pop()!;
        for (let i = offsets[v]; i < offsets[v + 1]; i++) {
          const w = targets[i];
          if (!seen[w]) {
            seen[w] = 1;
            stack.push(w);
          }
        }
      }
      return seen;
    };
    let best: Uint8Array = new Uint8Array(n);
    let bestSize = 0;
    if (biggest < 0) return best;
    let tries = 0;
    for (let v = 0; v < n && tries < 8; v++) {
      if (find(v) !== biggest || best[v]) continue;
      tries++;
      const fwd = reach(v, this.offsets, this.targets);
      const bwd = reach(v, rOffsets, rTargets);
      let count = 0;
      for (let w = 0; w < n; w++) if ((fwd[w] &= bwd[w])) count++;
      if (count > bestSize) {
        best = fwd;
        bestSize = count;
      }
      if (bestSize * 2 > size[biggest]) break;
      // Skip ahead so the next seed is elsewhere in the network.
      v += Math.floor(n / 9);
    }
    return best;
  }

  /** The nearest snappable node within maxMeters of a point, or -1. */
  snap(lat: number, lng: number, maxMeters: number): number {
    const row = Math.floor(lat / GRID_DEG);
    const col = Math.floor(lng / GRID_DEG);
    // Metres per cell, for when a ring is surely further than the best found.
    const cellMetresLat = GRID_DEG * 111_195;
    const cellMetresLng = cellMetresLat * Math.max(0.01, Math.cos((lat * Math.PI) / 180));
    const cellMetres = Math.min(cellMetresLat, cellMetresLng);
    const maxRing = Math.ceil(maxMeters / cellMetres) + 1;
    let best = -1;
    let bestMetres = maxMeters;
    for (let ring = 0; ring <= maxRing; ring++) {
      if (best >= 0 && (ring - 1) * cellMetres > bestMetres) break;
      for (let dr = -ring; dr <= ring; dr++) {
        for (let dc = -ring; dc <= ring; dc++) {
          if (Math.max(Math.abs(dr), Math.abs(dc)) !== ring) continue;
          const cell = this.grid.get(cellKey(row + dr, col + dc));
          if (!cell) continue;
          for (const v of cell) {
            const m = distanceMeters(lat, lng, this.lat[v], this.lng[v]);
            if (m <= bestMetres) {
              best = v;
              bestMetres = m;
            }
          }
        }
      }
    }
    return best;
  }

  /**
   * Fastest routes from one node to the target nodes: Dijkstra on travel time (binary heap, lazy
   * deletion), stopped once every target is settled. Writes seconds and metres per target (NaN: not reached).
   */
  shortest(source: number, targetNodes: ArrayLike<number>, seconds: Float64Array, meters: Float64Array): void {
    const gen = ++this.generation;
    const { cost, metres, settled, reached, wanted, heapKeys, heapNodes, offsets, targets, edgeSeconds, edgeMeters } =
      this;
    let left = 0;
    for (let i = 0; i < targetNodes.length; i++) {
      const t = targetNodes[i];
      if (wanted[t] !== gen) {
        wanted[t] = gen;
        left++;
      }
    }
    let size = 1;
    cost[source] = 0;
    metres[source] = 0;
    reached[source] = gen;
    heapKeys[0] = 0;
    heapNodes[0] = source;
    while (size > 0 && left > 0) {
      const v = heapNodes[0];
      const key = heapKeys[0];
      // Pop: the last entry sifts down from the root.
      size--;
      if (size > 0) {
        const lastKey = heapKeys[size];
        const lastNode = heapNodes[size];
        let i = 0;
        for (;;) {
          let c = 2 * i + 1;
          if (c >= size) break;
          if (c + 1 < size && heapKeys[c + 1] < heapKeys[c]) c++;
          if (heapKeys[c] >= lastKey) break;
          heapKeys[i] = heapKeys[c];
          heapNodes[i] = heapNodes[c];
          i = c;
        }
        heapKeys[i] = lastKey;
        heapNodes[i] = lastNode;
      }
      if (settled[v] === gen || key > cost[v]) continue;
      settled[v] = gen;
      if (wanted[v] === gen) left--;
      const cv = cost[v];
      const mv = metres[v];
      const end = offsets[v + 1];
      for (let e = offsets[v]; e < end; e++) {
        const w = targets[e];
        if (settled[w] === gen) continue;
        const c = cv + edgeSeconds[e];
        if (reached[w] !== gen || c < cost[w]) {
          reached[w] = gen;
          cost[w] = c;
          metres[w] = mv + edgeMeters[e];
          // Push: sift up from the end.
          let i = size++;
          while (i > 0) {
            const p = (i - 1) >> 1;
            if (heapKeys[p] <= c) break;
            heapKeys[i] = heapKeys[p];
            heapNodes[i] = heapNodes[p];
            i = p;
          }
          heapKeys[i] = c;
          heapNodes[i] = w;
        }
      }
    }
    for (let i = 0; i < targetNodes.length; i++) {
      const t = targetNodes[i];
      const ok = settled[t] === gen;
      seconds[i] = ok ? cost[t] : NaN;
      meters[i] = ok ? metres[t] : NaN;
    }
  }
}

const cellKey = (row: number, col: number) => row * 100_000 + col;

/**
 * The graph without the points inside a road that only lead on along it (one way in and one way out,
 * or the same two neighbours both ways): each chain of them becomes one edge between its ends (its
 * seconds and metres summed), so searches visit junctions and dead ends only (about a third of the points).
 */
function contract(
  lat: Float64Array,
  lng: Float64Array,
  from: Int32Array,
  to: Int32Array,
  seconds: Float64Array,
  meters: Float64Array,
  edges: number,
) {
  const n = lat.length;
  const csr = (a: Int32Array, b: Int32Array) => {
    const offsets = new Int32Array(n + 1);
    for (let e = 0; e < edges; e++) offsets[a[e] + 1]++;
    for (let v = 0; v < n; v++) offsets[v + 1] += offsets[v];
    const edge = new Int32Array(edges);
    const fill = offsets.slice(0, n);
    for (let e = 0; e < edges; e++) edge[fill[a[e]]++] = e;
    return { offsets, edge, other: b };
  };
  const out = csr(from, to);
  const inn = csr(to, from);
  const interior = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    const o0 = out.offsets[v];
    const outs = out.offsets[v + 1] - o0;
    const i0 = inn.offsets[v];
    const ins = inn.offsets[v + 1] - i0;
    if (outs === 1 && ins === 1) {
      interior[v] = to[out.edge[o0]] !== from[inn.edge[i0]] ? 1 : 0;
    } else if (outs === 2 && ins === 2) {
      const a = to[out.edge[o0]];
      const b = to[out.edge[o0 + 1]];
      const c = from[inn.edge[i0]];
      const d = from[inn.edge[i0 + 1]];
      interior[v] = a !== b && ((a === c && b === d) || (a === d && b === c)) ? 1 : 0;
    }
  }
  const id = new Int32Array(n).fill(-1);
  let kept = 0;
  for (let v = 0; v < n; v++) if (!interior[v]) id[v] = kept++;
  const cLat = new Float64Array(kept);
  const cLng = new Float64Array(kept);
  for (let v = 0; v < n; v++) {
    if (id[v] < 0) continue;
    cLat[id[v]] = lat[v];
    cLng[id[v]] = lng[v];
  }
  const cFrom: number[] = [];
  const cTo: number[] = [];
  const cSeconds: number[] = [];
  const cMeters: number[] = [];
  for (let u = 0; u < n; u++) {
    if (interior[u]) continue;
    for (let k = out.offsets[u]; k < out.offsets[u + 1]; k++) {
      const first = out.edge[k];
      let prev = u;
      let cur = to[first];
      let s = seconds[first];
      let m = meters[first];
      for (let steps = 0; interior[cur] && steps < n; steps++) {
        // The edge leaving cur that does not turn back (a one-way point has only one).
        let next = out.edge[out.offsets[cur]];
        if (to[next] === prev && out.offsets[cur + 1] - out.offsets[cur] === 2) next = out.edge[out.offsets[cur] + 1];
        s += seconds[next];
        m += meters[next];
        prev = cur;
        cur = to[next];
      }
      if (interior[cur] || cur === u) continue;
      cFrom.push(id[u]);
      cTo.push(id[cur]);
      cSeconds.push(s);
      cMeters.push(m);
    }
  }
  return {
    lat: cLat,
    lng: cLng,
    from: Int32Array.from(cFrom),
    to: Int32Array.from(cTo),
    seconds: Float64Array.from(cSeconds),
    meters: Float64Array.from(cMeters),
    edges: cFrom.length,
  };
}
