// ROUTER=osrm and ROUTER=valhalla: a routing server over HTTP (ROUTER_URL). OSRM's
// /table/v1/driving and /route/v1/driving (one car profile: other vehicle types take its durations ×
// slowdown, as the graph does); Valhalla's /sources_to_targets and /route (costing by vehicle type).
import type { VehicleType } from '../../db/schema.js';
import type { Engine, EngineLeg, EngineTable } from './engine.js';
import { slowdown, type Point } from './router.js';

type Fetch = typeof fetch;

/** The answers read are matrices of at most a few hundred points: far below this. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

class EngineError extends Error {
  override name = 'EngineError';
}

async function readJson(res: Response): Promise<unknown> {
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_ANSWER_BYTES) throw new EngineError(`The routing server's answer is too large (${length} bytes)`);
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new EngineError(`The routing server answered ${res.status} with no JSON`);
  }
}

const wholeOrNull = (v: unknown, scale = 1): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v * scale) : null;

export class OsrmEngine implements Engine {
  readonly name = 'osrm';
  readonly ready = true;

  constructor(
    private readonly baseUrl: string,
    private readonly fetchFn: Fetch = fetch,
  ) {}

  private coords(points: readonly Point[]): string {
    return points.map((p) => `${p.lng.toFixed(6)},${p.lat.toFixed(6)}`).join(';');
  }

  async route(from: Point, to: Point, vehicleType: VehicleType, signal?: AbortSignal): Promise<EngineLeg | null> {
    const url = `${this.baseUrl}/route/v1/driving/${this.coords([from, to])}?overview=false&steps=false`;
    const res = await this.fetchFn(url, { signal, headers: { accept: 'application/json' } });
    const body = (await readJson(res)) as { code?: unknown; routes?: { distance?: unknown; duration?: unknown }[] };
    if (body.code === 'NoRoute' || body.code === 'NoSegment') return null;
    if (!res.ok || body.code !== 'Ok') throw new EngineError(`OSRM /route answered ${res.status} ${String(body.code)}`);
    const best = body.routes?.[0];
    const distanceMeters = wholeOrNull(best?.distance);
    const durationSeconds = wholeOrNull(best?.duration, slowdown(vehicleType));
    return distanceMeters === null || durationSeconds === null ? null : { distanceMeters, durationSeconds };
  }

  async table(
    sources: readonly Point[],
    destinations: readonly Point[],
    vehicleType: VehicleType,
    signal?: AbortSignal,
  ): Promise<EngineTable> {
    const all = [...sources, ...destinations];
    const s = sources.map((_, i) => i).join(';');
    const d = destinations.map((_, j) => sources.length + j).join(';');
    const url = `${this.baseUrl}/table/v1/driving/${this.coords(all)}?sources=${s}&destinations=${d}&annotations=duration,distance`;
    const res = await this.fetchFn(url, { signal, headers: { accept: 'application/json' } });
    const body = (await readJson(res)) as { code?: unknown; durations?: unknown; distances?: unknown };
    if (!res.ok || body.code !== 'Ok') throw new EngineError(`OSRM /table answered ${res.status} ${String(body.code)}`);
    const factor = slowdown(vehicleType);
    return {
      durations: grid(body.durations, sources.length, destinations.length, (v) => wholeOrNull(v, factor)),
      distances: grid(body.distances, sources.length, destinations.length, (v) => wholeOrNull(v)),
    };
  }
}

/** Valhalla's costing model for a vehicle type. */
export const VALHALLA_COSTING: Record<VehicleType, string> = {
  BIKE: 'motorcycle',
  CAR: 'auto',
  VAN: 'auto',
  TRUCK: 'truck',
};

/** Valhalla's error codes that mean "no route" rather than a failure (no path, no road near a location). */
const VALHALLA_NO_ROUTE = new Set([171, 442, 443]);

export class ValhallaEngine implements Engine {
  readonly name = 'valhalla';
  readonly ready = true;

  constructor(
    private readonly baseUrl: string,
    private readonly fetchFn: Fetch = fetch,
  ) {}

  private async post(path: string, payload: unknown, signal?: AbortSignal): Promise<{ res: Response; body: unknown }> {
    const res = await this.fetchFn(`${this.baseUrl}${path}`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(payload),
    });
    return { res, body: await readJson(res) };
  }

  async route(from: Point, to: Point, vehicleType: VehicleType, signal?: AbortSignal): Promise<EngineLeg | null> {
    const { res, body } = await this.post(
      '/route',
      {
        locations: [from, to].map((p) => ({ lat: p.lat, lon: p.lng })),
        costing: VALHALLA_COSTING[vehicleType],
        units: 'kilometers',
        directions_type: 'none',
      },
      signal,
    );
    const b = body as {
      error_code?: unknown;
      trip?: { status?: unknown; summary?: { length?: unknown; time?: unknown } };
    };
    if (typeof b.error_code === 'number' && VALHALLA_NO_ROUTE.has(b.error_code)) return null;
    if (!res.ok || !b.trip)
      throw new EngineError(`Valhalla /route answered ${res.status} ${String(b.error_code ?? '')}`);
    const distanceMeters = wholeOrNull(b.trip.summary?.length, 1000);
    const durationSeconds = wholeOrNull(b.trip.summary?.time);
    return distanceMeters === null || durationSeconds === null ? null : { distanceMeters, durationSeconds };
  }

  async table(
    sources: readonly Point[],
    destinations: readonly Point[],
    vehicleType: VehicleType,
    signal?: AbortSignal,
  ): Promise<EngineTable> {
    const { res, body } = await this.post(
      '/sources_to_targets',
      {
        sources: sources.map((p) => ({ lat: p.lat, lon: p.lng })),
        targets: destinations.map((p) => ({ lat: p.lat, lon: p.lng })),
        costing: VALHALLA_COSTING[vehicleType],
        units: 'kilometers',
      },
      signal,
    );
    const b = body as { error_code?: unknown; sources_to_targets?: unknown };
    if (!res.ok || b.sources_to_targets === undefined)
      throw new EngineError(`Valhalla /sources_to_targets answered ${res.status} ${String(b.error_code ?? '')}`);
    const rows = b.sources_to_targets;
    const n = sources.length;
    const m = destinations.length;
    if (Array.isArray(rows)) {
      // The verbose answer (the default): rows of { from_index, to_index, time, distance }.
      const durations = grid(undefined, n, m, () => null);
      const distances = grid(undefined, n, m, () => null);
      for (const row of rows) {
        if (!Array.isArray(row)) continue;
        for (const cell of row as { from_index?: unknown; to_index?: unknown; time?: unknown; distance?: unknown }[]) {
          const i = cell?.from_index;
          const j = cell?.to_index;
          if (typeof i !== 'number' || typeof j !== 'number' || i < 0 || i >= n || j < 0 || j >= m) continue;
          const t = wholeOrNull(cell.time);
          const d = wholeOrNull(cell.distance, 1000);
          if (t !== null && d !== null) {
            durations[i][j] = t;
            distances[i][j] = d;
          }
        }
      }
      return { durations, distances };
    }
    // The concise answer (verbose: false): { durations, distances } in seconds and kilometres.
    const concise = rows as { durations?: unknown; distances?: unknown };
    return {
      durations: grid(concise.durations, n, m, (v) => wholeOrNull(v)),
      distances: grid(concise.distances, n, m, (v) => wholeOrNull(v, 1000)),
    };
  }
}

/** An n × m grid from an answer's rows, each cell read by `cell` (missing rows or cells: null). */
function grid(rows: unknown, n: number, m: number, cell: (v: unknown) => number | null): (number | null)[][] {
  const out: (number | null)[][] = [];
  for (let i = 0; i < n; i++) {
    const row = Array.isArray(rows) ? (rows[i] as unknown) : undefined;
    const r: (number | null)[] = [];
    for (let j = 0; j < m; j++) r.push(Array.isArray(row) ? cell(row[j]) : null);
    out.push(r);
  }
  return out;
}
