// The operators' live map (contract section 14): drivers in a box (admins) or of one company, read
// from this process's live index, and their streams (a snapshot, then what changed each interval).
import type { SseConnection } from '../../http/sse.js';
import { sseFrame } from '../../http/sse.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import { badRequest } from '../../shared/errors.js';
import type { VehicleType } from '../../db/schema.js';
import type { DriverIndex, DriverRecord } from '../matching/driver-index.js';

export const LIVE_MAP_MAX = 5000;
/** The widest box accepted, in degrees of latitude and of longitude. */
export const MAX_BBOX_SPAN_DEG = 30;
const COMPANY_DRIVERS_TTL_MS = 10_000;

export interface Bbox {
  minLng: number;
  minLat: number;
  maxLng: number;
  maxLat: number;
}

export type MapFilter = { bbox: Bbox } | { companyId: string };

export interface LiveDriver {
  driverId: string;
  firstName: string;
  vehicleType: VehicleType;
  availability: 'ONLINE' | 'OFFLINE';
  onJob: boolean;
  location: { lat: number; lng: number };
  updatedAt: string;
}

// Any decimal number as a program prints one: String(0.1 + 0.2), Leaflet's toBBoxString() (17
// significant digits), exponents (String(1e-7) is "1e-7"). Not what Number() also reads: hex, binary,
// Infinity, NaN, "" (0).
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** `minLng,minLat,maxLng,maxLat`; a box across the antimeridian is two requests. */
export function parseBbox(raw: string): Bbox {
  const parts = raw.split(',').map((p) => p.trim());
  const values = parts.map(Number);
  if (parts.length !== 4 || !parts.every((p) => NUMBER.test(p)) || !values.every(Number.isFinite)) {
    throw badRequest('bbox must be minLng,minLat,maxLng,maxLat (four decimal numbers)', 'INVALID_BBOX');
  }
  const [minLng, minLat, maxLng, maxLat] = values as [number, number, number, number];
  if ([minLng, maxLng].some((v) => v < -180 || v > 180) || [minLat, maxLat].some((v) => v < -90 || v > 90)) {
    throw badRequest('bbox longitudes must be within -180..180 and latitudes within -90..90', 'INVALID_BBOX');
  }
  if (minLng >= maxLng || minLat >= maxLat)
    throw badRequest('bbox minimums must be below its maximums', 'INVALID_BBOX');
  if (maxLng - minLng > MAX_BBOX_SPAN_DEG || maxLat - minLat > MAX_BBOX_SPAN_DEG) {
    throw badRequest(
      `bbox may span at most ${MAX_BBOX_SPAN_DEG} degrees of latitude and of longitude`,
      'BBOX_TOO_LARGE',
    );
  }
  return { minLng, minLat, maxLng, maxLat };
}

interface MapFollower {
  sink: SseConnection;
  auth: AuthContext;
  filter: MapFilter;
  /** What the client holds: driver id → the position time and flags last sent. */
  shown: Map<string, string>;
}

export class LiveMap {
  private readonly companyDrivers = new Map<string, { ids: Set<string>; readAt: number; reading?: Promise<void> }>();
  private readonly followers = new Set<MapFollower>();
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: (() => void)[];

  constructor(
    private readonly deps: {
      driverIdsOfCompany(companyId: string): Promise<string[]>;
      bus: Bus;
      index: DriverIndex;
      intervalMs: number;
      positionTtlMs: number;
      nowMs(): number;
    },
  ) {
    const endWhere = (test: (auth: AuthContext) => boolean) => {
      for (const f of [...this.followers]) if (test(f.auth)) f.sink.end();
    };
    this.unsubscribe = [
      deps.bus.subscribe('session.revoked', ({ sessionId }) => endWhere((auth) => auth.sessionId === sessionId)),
      deps.bus.subscribe('user.changed', ({ userId, status }) => {
        if (status !== undefined && status !== 'ACTIVE') endWhere((auth) => auth.userId === userId);
      }),
    ];
  }

  async list(filter: MapFilter): Promise<{ drivers: LiveDriver[]; truncated: boolean }> {
    const { records, truncated } = await this.select(filter);
    return { drivers: records.map(toLiveDriver), truncated };
  }

  /** Starts a map stream: the snapshot now, then `positions` with the changes every interval. */
  async follow(sink: SseConnection, filter: MapFilter, auth: AuthContext): Promise<() => void> {
    const { records, truncated } = await this.select(filter);
    const follower: MapFollower = { sink, auth, filter, shown: new Map(records.map((r) => [r.id, stamp(r)])) };
    sink.send(sseFrame('snapshot', { drivers: records.map(toLiveDriver), truncated }));
    this.followers.add(follower);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.deps.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.followers.delete(follower);
      if (this.followers.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  close(): void {
    for (const off of this.unsubscribe) off();
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    for (const f of [...this.followers]) {
      // A client that is behind gets the changes of several intervals in one event when it catches up.
      if (f.sink.closed || f.sink.congested) continue;
      const { records, truncated } = await this.select(f.filter);
      const changed: LiveDriver[] = [];
      const now = new Map<string, string>();
      for (const r of records) {
        const s = stamp(r);
        now.set(r.id, s);
        if (f.shown.get(r.id) !== s) changed.push(toLiveDriver(r));
      }
      const removed: string[] = [];
      for (const id of f.shown.keys()) if (!now.has(id)) removed.push(id);
      f.shown = now;
      if (changed.length || removed.length)
        f.sink.send(sseFrame('positions', { drivers: changed, removed, truncated }));
    }
  }

  private async select(filter: MapFilter): Promise<{ records: DriverRecord[]; truncated: boolean }> {
    const staleBefore = this.deps.nowMs() - this.deps.positionTtlMs;
    const records: DriverRecord[] = [];
    const take = (r: DriverRecord | undefined) => {
      if (!r || !r.active || !r.online || !r.position || r.position.at < staleBefore) return true;
      if (records.length === LIVE_MAP_MAX) return false;
      records.push(r);
      return true;
    };
    if ('bbox' in filter) {
      const b = filter.bbox;
      for (const r of this.deps.index.values()) {
        const p = r.position;
        if (!p || p.lng < b.minLng || p.lng > b.maxLng || p.lat < b.minLat || p.lat > b.maxLat) continue;
        if (!take(r)) return { records, truncated: true };
      }
      return { records, truncated: false };
    }
    for (const id of await this.driversOf(filter.companyId)) {
      if (!take(this.deps.index.get(id))) return { records, truncated: true };
    }
    return { records, truncated: false };
  }

  /** A company's drivers, read again at most every few seconds (the index does not hold companies). */
  private async driversOf(companyId: string): Promise<Set<string>> {
    let entry = this.companyDrivers.get(companyId);
    if (entry && performance.now() - entry.readAt < COMPANY_DRIVERS_TTL_MS) return entry.ids;
    if (entry?.reading) {
      await entry.reading;
      return entry.ids;
    }
    entry ??= { ids: new Set(), readAt: 0 };
    this.companyDrivers.set(companyId, entry);
    const e = entry;
    e.reading = (async () => {
      e.ids = new Set(await this.deps.driverIdsOfCompany(companyId));
      e.readAt = performance.now();
    })().finally(() => (e.reading = undefined));
    await e.reading;
    return e.ids;
  }
}

// The place too, not only the time: two positions in one whole second (OsmAnd sends seconds) differ only there.
const stamp = (r: DriverRecord) =>
  `${r.position!.at}:${r.position!.lat}:${r.position!.lng}:${r.activeJobs > 0 ? 1 : 0}`;

function toLiveDriver(r: DriverRecord): LiveDriver {
  const p = r.position!;
  return {
    driverId: r.id,
    firstName: r.firstName,
    vehicleType: r.vehicleType,
    availability: r.online ? 'ONLINE' : 'OFFLINE',
    onJob: r.activeJobs > 0,
    location: { lat: p.lat, lng: p.lng },
    updatedAt: new Date(p.at).toISOString(),
  };
}
