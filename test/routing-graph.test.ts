// ROUTER=graph (contract section 25) on an OpenStreetMap extract of Gothenburg.
//
// Road network data: node_modules/geojson-path-finder/test/large-network.json (from the
// geojson-path-finder@2.1.0 package), © OpenStreetMap contributors, available under the Open Database
// License (ODbL) 1.0: https://www.openstreetmap.org/copyright
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { before, describe, test } from 'node:test';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { FallbackRouter } from '../src/modules/routing/fallback.js';
import { GraphEngine } from '../src/modules/routing/graph-router.js';
import {
  HIGHWAY_SPEEDS_KMH,
  RoadGraph,
  carSpeedKmh,
  onewayOf,
  parseMaxspeed,
} from '../src/modules/routing/road-graph.js';

const NETWORK = createRequire(import.meta.url).resolve('geojson-path-finder/test/large-network.json');

// ---- The reference: a plain Dijkstra on the raw GeoJSON (strings as node keys, no typed arrays) ----

// The speed table is the spec's input (shared); the search below is the test's own.
const CAR_KMH = HIGHWAY_SPEEDS_KMH;

function haversine(a: number[], b: number[]): number {
  const rad = Math.PI / 180;
  const dLat = (b[1] - a[1]) * rad;
  const dLng = (b[0] - a[0]) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(Math.min(1, h)));
}

type Adjacency = Map<string, { to: string; seconds: number; metres: number }[]>;

function referenceGraph(
  features: { properties: Record<string, string>; geometry: { type: string; coordinates: number[][] } }[],
): Adjacency {
  const adj: Adjacency = new Map();
  const add = (from: string, to: string, seconds: number, metres: number) => {
    if (!adj.has(from)) adj.set(from, []);
    if (!adj.has(to)) adj.set(to, []);
    adj.get(from)!.push({ to, seconds, metres });
  };
  for (const f of features) {
    const p = f.properties;
    if (f.geometry.type !== 'LineString' || p.area === 'yes' || !(p.highway in CAR_KMH)) continue;
    if (
      ['access', 'vehicle', 'motor_vehicle', 'motorcar'].some((k) =>
        ['no', 'private', 'agricultural', 'forestry', 'delivery_only'].includes(p[k]),
      )
    )
      continue;
    const m = /^(\d+)$/.exec(p.maxspeed ?? '');
    const kmh = m && Number(m[1]) >= 5 ? Number(m[1]) : CAR_KMH[p.highway];
    const forwardOnly =
      ['yes', '1', 'true'].includes(p.oneway) ||
      (p.oneway === undefined && (p.junction === 'roundabout' || p.highway === 'motorway'));
    const backwardOnly = p.oneway === '-1';
    const c = f.geometry.coordinates;
    for (let i = 1; i < c.length; i++) {
      const a = `${c[i - 1][0]},${c[i - 1][1]}`;
      const b = `${c[i][0]},${c[i][1]}`;
      if (a === b) continue;
      const metres = haversine(c[i - 1], c[i]);
      const seconds = metres / (kmh / 3.6);
      if (!backwardOnly) add(a, b, seconds, metres);
      if (!forwardOnly) add(b, a, seconds, metres);
    }
  }
  return adj;
}

/** Seconds and metres of the fastest routes from one node to others, by a textbook Dijkstra (undefined: none). */
function referenceRoutes(
  adj: Adjacency,
  from: string,
  to: string[],
): ({ seconds: number; metres: number } | undefined)[] {
  const left = new Set(to);
  const best = new Map<string, { seconds: number; metres: number }>([[from, { seconds: 0, metres: 0 }]]);
  const done = new Set<string>();
  // A simple binary heap of [seconds, node].
  const heap: [number, string][] = [[0, from]];
  const pop = () => {
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l][0] < heap[m][0]) m = l;
        if (r < heap.length && heap[r][0] < heap[m][0]) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  };
  const push = (item: [number, string]) => {
    heap.push(item);
    for (let i = heap.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (heap[p][0] <= heap[i][0]) break;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  };
  while (heap.length) {
    const [, v] = pop();
    if (done.has(v)) continue;
    done.add(v);
    left.delete(v);
    if (left.size === 0) break;
    const here = best.get(v)!;
    for (const e of adj.get(v) ?? []) {
      const seconds = here.seconds + e.seconds;
      const known = best.get(e.to);
      if (!done.has(e.to) && (!known || seconds < known.seconds)) {
        best.set(e.to, { seconds, metres: here.metres + e.metres });
        push([seconds, e.to]);
      }
    }
  }
  return to.map((t) => (done.has(t) ? best.get(t) : undefined));
}

const referenceRoute = (adj: Adjacency, from: string, to: string) => referenceRoutes(adj, from, [to])[0];

const within1Percent = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= Math.max(1, expected * 0.01), `${what}: ${actual} vs reference ${expected}`);

describe('ROUTER=graph on the Gothenburg network', () => {
  let geojson: {
    features: { properties: Record<string, string>; geometry: { type: string; coordinates: number[][] } }[];
  };
  let graph: RoadGraph;
  let engine: GraphEngine;
  let reference: Adjacency;

  before(() => {
    geojson = JSON.parse(readFileSync(NETWORK, 'utf8'));
    graph = RoadGraph.fromGeoJson(geojson);
    engine = new GraphEngine(1000);
    engine.use(graph);
    reference = referenceGraph(geojson.features);
  });

  test('only car roads are kept: footways, paths, cycleways, steps, platforms and pedestrian areas are not', () => {
    const kinds = new Set(geojson.features.map((f) => f.properties.highway));
    for (const k of ['footway', 'pedestrian', 'path', 'cycleway', 'steps', 'platform']) assert.ok(kinds.has(k), k);
    assert.equal(graph.stats.features, geojson.features.length);
    const carWays = geojson.features.filter(
      (f) => f.geometry.type === 'LineString' && carSpeedKmh(f.properties) !== undefined,
    );
    assert.equal(graph.stats.carWays, carWays.length);
    assert.ok(carWays.length < geojson.features.length / 2, `${carWays.length} car ways of ${geojson.features.length}`);
    // The reference keeps the same roads: the same nodes.
    assert.equal(graph.stats.pointNodes, reference.size);
    // Chains of points inside a road are contracted: junctions and dead ends are left.
    assert.ok(graph.stats.nodes < graph.stats.pointNodes / 2, JSON.stringify(graph.stats));
    assert.ok(graph.stats.snappable > graph.stats.nodes * 0.9, JSON.stringify(graph.stats));
    // No coordinate of a footway-only feature is a node (unless a car road shares it).
    const carNodes = new Set<string>();
    for (const f of carWays) for (const c of f.geometry.coordinates) carNodes.add(`${c[0]},${c[1]}`);
    const footway = geojson.features.find(
      (f) =>
        f.properties.highway === 'footway' && f.geometry.coordinates.every((c) => !carNodes.has(`${c[0]},${c[1]}`)),
    )!;
    assert.ok(!reference.has(`${footway.geometry.coordinates[0][0]},${footway.geometry.coordinates[0][1]}`));
  });

  test('tags: maxspeed parsed when it is a number, a speed per highway class otherwise; oneway yes/1/true/-1', () => {
    assert.equal(parseMaxspeed('50'), 50);
    assert.equal(parseMaxspeed('30 mph'), 30 * 1.609344);
    assert.equal(parseMaxspeed('SE:urban'), undefined);
    assert.equal(carSpeedKmh({ highway: 'residential' }), 30);
    assert.equal(carSpeedKmh({ highway: 'residential', maxspeed: '40' }), 40);
    assert.equal(carSpeedKmh({ highway: 'footway' }), undefined);
    assert.equal(carSpeedKmh({ highway: 'pedestrian', area: 'yes' }), undefined);
    assert.equal(carSpeedKmh({ highway: 'service', access: 'private' }), undefined);
    for (const v of ['yes', '1', 'true']) assert.equal(onewayOf({ oneway: v }), 1);
    assert.equal(onewayOf({ oneway: '-1' }), -1);
    assert.equal(onewayOf({ oneway: 'no', junction: 'roundabout' }), 0);
    assert.equal(onewayOf({ junction: 'roundabout' }), 1);
    assert.equal(onewayOf({}), 0);
  });

  test('a matrix: every cell within 1 % of the reference Dijkstra, in whole seconds and metres', async () => {
    // Points at road nodes spread over the city (a fixed pseudo-random pick).
    const keys = [...reference.keys()];
    let seed = 7;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const points: { lat: number; lng: number; key: string }[] = [];
    while (points.length < 8) {
      const key = keys[Math.floor(rnd() * keys.length)];
      const [lng, lat] = key.split(',').map(Number);
      const node = graph.snap(lat, lng, 1000);
      // Only nodes of the main connected part are snapped to (others are islands: parking lots, one-way traps).
      if (node >= 0 && graph.lat[node] === lat && graph.lng[node] === lng) points.push({ lat, lng, key });
    }
    const m = await engine.table(points, points, 'CAR');
    let checked = 0;
    for (let i = 0; i < points.length; i++) {
      const refs = referenceRoutes(
        reference,
        points[i].key,
        points.map((p) => p.key),
      );
      for (let j = 0; j < points.length; j++) {
        const ref = refs[j];
        assert.ok(ref, `the reference finds a route ${i} → ${j}`);
        const seconds = m.durations[i][j];
        const metres = m.distances[i][j];
        assert.ok(Number.isInteger(seconds) && Number.isInteger(metres), `${i} → ${j}: whole numbers`);
        within1Percent(seconds!, ref.seconds, `${i} → ${j} seconds`);
        within1Percent(metres!, ref.metres, `${i} → ${j} metres`);
        if (i !== j) assert.ok(metres! > 200, `${i} → ${j} is not trivial (${metres} m)`);
        checked++;
      }
    }
    assert.equal(checked, 64);
    // Other vehicle types are slower on the same roads (the ratio of the average town speeds).
    const truck = await engine.table(points.slice(0, 2), points.slice(1, 2), 'TRUCK');
    within1Percent(truck.durations[0][0]!, m.durations[0][1]! * 1.5, 'TRUCK × 1.5');
  });

  test('one-way streets: forward and backward differ, as in the reference', async () => {
    // A one-way residential street's first segment: along it is one edge, against it a detour.
    let found = false;
    for (const f of geojson.features) {
      const p = f.properties;
      if (f.geometry.type !== 'LineString' || p.oneway !== 'yes' || p.highway !== 'residential') continue;
      const [a, b] = f.geometry.coordinates;
      const A = { lng: a[0], lat: a[1] };
      const B = { lng: b[0], lat: b[1] };
      const na = graph.snap(A.lat, A.lng, 1);
      const nb = graph.snap(B.lat, B.lng, 1);
      if (na < 0 || nb < 0 || haversine(a, b) < 30) continue;
      const forward = await engine.route(A, B, 'CAR');
      const backward = await engine.route(B, A, 'CAR');
      assert.ok(forward && backward);
      const refForward = referenceRoute(reference, `${a[0]},${a[1]}`, `${b[0]},${b[1]}`)!;
      const refBackward = referenceRoute(reference, `${b[0]},${b[1]}`, `${a[0]},${a[1]}`)!;
      within1Percent(forward.distanceMeters, refForward.metres, 'forward');
      within1Percent(backward.distanceMeters, refBackward.metres, 'backward');
      within1Percent(forward.distanceMeters, haversine(a, b), 'forward is the street itself');
      assert.ok(
        backward.distanceMeters > forward.distanceMeters * 1.5,
        `${backward.distanceMeters} vs ${forward.distanceMeters}`,
      );
      found = true;
      break;
    }
    assert.ok(found, 'a one-way street was found');
  });

  test('a point far from any road has no route: the pair falls back to the straight estimate, counted', async () => {
    const registry = new Registry();
    const router = new FallbackRouter(engine, {
      factor: 1.3,
      timeoutMs: 2000,
      registry,
      logger: pino({ level: 'silent' }),
    });
    const city = { lat: 57.7089, lng: 11.9746 };
    const sea = { lat: 57.5, lng: 11.5 };
    const leg = await router.route(city, sea, 'CAR');
    assert.equal(leg.routing, 'great-circle×1.3 (graph fallback)');
    assert.equal(leg.distanceMeters, Math.round(haversine([city.lng, city.lat], [sea.lng, sea.lat]) * 1.3));
    const routed = await router.route(city, { lat: 57.7, lng: 11.96 }, 'CAR');
    assert.equal(routed.routing, 'graph');
    const m = await router.matrix([city, sea], [city, { lat: 57.7, lng: 11.96 }], 'CAR');
    assert.equal(m.fallbacks, 2);
    assert.equal(m.durations[0][0], 0);
    assert.equal(m.distances[0][1], routed.distanceMeters);
    const metric = await registry.getSingleMetric('router_fallbacks_total')!.get();
    assert.deepEqual(
      metric.values.map((v) => [v.labels, v.value]),
      [[{ router: 'graph', reason: 'unroutable' }, 3]],
    );
  });
});

describe('ROUTER=graph on a small network', () => {
  // a ── b ── c with a footway shortcut a–c, and a one-way b → d → c.
  const line = (props: Record<string, string>, ...coords: number[][]) => ({
    type: 'Feature',
    properties: props,
    geometry: { type: 'LineString', coordinates: coords },
  });
  const a = [10, 50];
  const b = [10.01, 50];
  const c = [10.02, 50];
  const d = [10.015, 50.001];
  const net = {
    type: 'FeatureCollection',
    features: [
      line({ highway: 'residential' }, a, b),
      line({ highway: 'residential', maxspeed: '50' }, b, c),
      line({ highway: 'footway' }, a, [10.01, 49.999], c),
      line({ highway: 'primary', oneway: '-1' }, c, d, b),
      {
        type: 'Feature',
        properties: { highway: 'pedestrian', area: 'yes' },
        geometry: { type: 'Polygon', coordinates: [[a, b, c, a]] },
      },
    ],
  };
  const engine = new GraphEngine(500);
  engine.use(RoadGraph.fromGeoJson(net));
  const P = (p: number[]) => ({ lng: p[0], lat: p[1] });

  test('the footway is no road, the one-way reversed (-1) is taken b → d → c when faster, and maxspeed counts', async () => {
    const ab = haversine(a, b);
    const bc = haversine(b, c);
    const bdc = haversine(b, d) + haversine(d, c);
    const m = await engine.table([P(a), P(c)], [P(c), P(a)], 'CAR');
    // a → c: a–b at 30 km/h, then b → d → c at 65 km/h beats b–c at 50.
    assert.ok(bdc / (65 / 3.6) < bc / (50 / 3.6));
    assert.equal(m.distances[0][0], Math.round(ab + bdc));
    assert.equal(m.durations[0][0], Math.round(ab / (30 / 3.6) + bdc / (65 / 3.6)));
    // c → a: the one-way is closed that way: c–b at 50 km/h.
    assert.equal(m.distances[1][1], Math.round(bc + ab));
    assert.equal(m.durations[1][1], Math.round(bc / (50 / 3.6) + ab / (30 / 3.6)));
  });
});
