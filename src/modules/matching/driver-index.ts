// The live driver index: every driver the process knows, and a lat/lng grid per vehicle type holding
// the ones that can take work (ACTIVE, ONLINE, free, with a position). Pure: no I/O, no clock.
import type { OrderType, VehicleType } from '../../db/schema.js';

export const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;
/** Grid cell edge in degrees (about 1.1 km of latitude). */
export const CELL_DEG = 0.01;
const NROWS = Math.round(180 / CELL_DEG);
const NCOLS = Math.round(360 / CELL_DEG);

export const SERVICE_BITS: Record<OrderType, number> = { RIDE: 1, PACKAGE_DELIVERY: 2 };
export const serviceMask = (types: readonly OrderType[]) => types.reduce((mask, t) => mask | SERVICE_BITS[t], 0);

// Records share one copy of the values many drivers have (bench/RESULTS.md: heap snapshots).
const VEHICLE_TYPES: Record<VehicleType, VehicleType> = { BIKE: 'BIKE', CAR: 'CAR', VAN: 'VAN', TRUCK: 'TRUCK' };
const sharedVehicleType = (type: VehicleType): VehicleType => VEHICLE_TYPES[type] ?? type;
const SERVICE_LISTS: readonly (readonly OrderType[])[] = [
  Object.freeze([]),
  Object.freeze(['RIDE']),
  Object.freeze(['PACKAGE_DELIVERY']),
  Object.freeze(['RIDE', 'PACKAGE_DELIVERY']),
];
/** The shared, frozen list of the service types in a mask of SERVICE_BITS. */
export const serviceTypesOf = (mask: number): readonly OrderType[] => SERVICE_LISTS[mask & 3]!;

export interface DriverAttributes {
  id: string;
  firstName: string;
  vehicleType: VehicleType;
  vehiclePlate: string;
  rating: number | null;
  countryId: string | null;
  serviceTypes: readonly OrderType[];
  active: boolean;
  online: boolean;
  /** Takes no more work: on a ride, or holding maxActiveJobs jobs (section 24). */
  busy: boolean;
  /** Jobs held now (default: 1 when busy, else 0) and the driver's maximum (default 1). */
  activeJobs?: number;
  maxActiveJobs?: number;
  /** The job held is a ride (exclusive: a driver with a ride takes nothing else). */
  onRide?: boolean;
}

export interface Position {
  lat: number;
  lng: number;
  heading: number | null;
  speed: number | null;
  at: number;
}

export interface DriverRecord extends DriverAttributes {
  activeJobs: number;
  maxActiveJobs: number;
  onRide: boolean;
  serviceMask: number;
  position: Position | null;
  gridType: VehicleType | null;
  cell: number;
  slot: number;
  /** The find-drivers answer's piece for this driver (found-drivers-json.ts). */
  answer: unknown;
}

export interface NearestQuery {
  lat: number;
  lng: number;
  radiusMeters: number;
  limit: number;
  vehicleType: VehicleType;
  orderType: OrderType;
  countryId?: string;
  staleBefore: number;
}

export interface NearestResult {
  driver: DriverRecord;
  distanceMeters: number;
}

export interface StoredPosition {
  last_lat: number | null;
  last_lng: number | null;
  last_heading: number | null;
  last_speed: number | null;
  last_location_at: Date | string | null;
}

/** The newer of the index's position and the stored copy (written behind, so usually the older); null when neither is known. */
export function newerPosition(live: Position | null | undefined, stored: StoredPosition): Position | null {
  const storedAt = stored.last_location_at ? new Date(stored.last_location_at).getTime() : 0;
  if (live && live.at >= storedAt) return live;
  if (stored.last_lat === null || stored.last_lng === null || !stored.last_location_at) return live ?? null;
  return {
    lat: stored.last_lat,
    lng: stored.last_lng,
    heading: stored.last_heading,
    speed: stored.last_speed,
    at: storedAt,
  };
}

export function distanceMeters(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const p1 = lat1 * RAD;
  const p2 = lat2 * RAD;
  const sLat = Math.sin((p2 - p1) / 2);
  const sLng = Math.sin(((lng2 - lng1) * RAD) / 2);
  const h = sLat * sLat + Math.cos(p1) * Math.cos(p2) * sLng * sLng;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(Math.min(1, Math.max(0, h))));
}

const rowOf = (lat: number) => Math.min(NROWS - 1, Math.max(0, Math.floor((lat + 90) / CELL_DEG)));
const colOf = (lng: number) => ((Math.floor((lng + 180) / CELL_DEG) % NCOLS) + NCOLS) % NCOLS;

/** What a query tests of a driver, one slot of a cell: x, y, z (the unit vector), position time, service bits, country. */
const STRIDE = 6;
const X = 0;
const Y = 1;
const Z = 2;
const AT = 3;
const MASK = 4;
const COUNTRY = 5;

// One typed array per cell, a driver's values side by side: a scan reads contiguous memory.
class Cell {
  drivers: DriverRecord[] = [];
  slots = new Float64Array(8 * STRIDE);

  grow(): void {
    if (this.drivers.length * STRIDE < this.slots.length) return;
    const doubled = new Float64Array(this.slots.length * 2);
    doubled.set(this.slots);
    this.slots = doubled;
  }

  move(from: number, to: number): void {
    this.slots.copyWithin(to * STRIDE, from * STRIDE, from * STRIDE + STRIDE);
  }
}

interface Grid {
  cells: Map<number, Cell>;
  rows: Map<number, Set<number>>;
}

interface Box {
  qLng: number;
  hRadius: number;
  rowLo: number;
  rowHi: number;
  colLo: number;
  colHi: number;
  hLats: number[];
  lngFactors: number[];
}

interface Candidate {
  cell: Cell;
  bound: number;
}

export class DriverIndex {
  private readonly drivers = new Map<string, DriverRecord>();
  private readonly grids = new Map<VehicleType, Grid>();
  private readonly countries = new Map<string, number>();
  private readonly countryIds: string[] = [''];
  private online = 0;

  get size(): number {
    return this.drivers.size;
  }

  get onlineCount(): number {
    return this.online;
  }

  get(id: string): DriverRecord | undefined {
    return this.drivers.get(id);
  }

  /** Every driver known (the live map scans them). */
  values(): IterableIterator<DriverRecord> {
    return this.drivers.values();
  }

  upsert(attrs: DriverAttributes, position?: Position | null): DriverRecord {
    let rec = this.drivers.get(attrs.id);
    if (!rec) {
      // Every field written out: a spread made records three times larger.
      const mask = serviceMask(attrs.serviceTypes);
      rec = {
        id: attrs.id,
        firstName: attrs.firstName,
        vehicleType: sharedVehicleType(attrs.vehicleType),
        vehiclePlate: attrs.vehiclePlate,
        rating: attrs.rating,
        countryId: this.sharedCountryId(attrs.countryId),
        active: attrs.active,
        online: attrs.online,
        busy: attrs.busy,
        activeJobs: 0,
        maxActiveJobs: 1,
        onRide: false,
        serviceTypes: SERVICE_LISTS[mask],
        serviceMask: mask,
        position: null,
        gridType: null,
        cell: -1,
        slot: -1,
        answer: undefined,
      };
      this.drivers.set(attrs.id, rec);
    } else {
      if (rec.active && rec.online) this.online -= 1;
      rec.firstName = attrs.firstName;
      rec.vehicleType = sharedVehicleType(attrs.vehicleType);
      rec.vehiclePlate = attrs.vehiclePlate;
      rec.rating = attrs.rating;
      rec.countryId = this.sharedCountryId(attrs.countryId);
      rec.serviceMask = serviceMask(attrs.serviceTypes);
      rec.serviceTypes = SERVICE_LISTS[rec.serviceMask];
      rec.active = attrs.active;
      rec.online = attrs.online;
    }
    setJobs(rec, attrs.busy, attrs.activeJobs, attrs.maxActiveJobs, attrs.onRide);
    if (rec.active && rec.online) this.online += 1;
    if (position && (!rec.position || position.at > rec.position.at)) this.assignPosition(rec, position);
    this.place(rec);
    return rec;
  }

  /** Records a position (the index keeps this object: do not change it later); an older one than the one held is ignored (returns false). */
  setPosition(id: string, position: Position): boolean {
    const rec = this.drivers.get(id);
    if (!rec) return false;
    if (rec.position && position.at < rec.position.at) return false;
    this.assignPosition(rec, position);
    this.place(rec);
    return true;
  }

  setOnline(id: string, online: boolean): void {
    this.update(id, (rec) => (rec.online = online));
  }

  setActive(id: string, active: boolean): void {
    this.update(id, (rec) => (rec.active = active));
  }

  setBusy(id: string, busy: boolean): void {
    this.update(id, (rec) => {
      rec.activeJobs = busy ? rec.maxActiveJobs : 0;
      rec.onRide = false;
      rec.busy = busy;
    });
  }

  /** The driver took a job (`taken`) or one of its jobs ended or was handed back (section 24: it may hold several packages). */
  jobChanged(id: string, taken: boolean, jobType: 'PACKAGE' | 'RIDE'): void {
    this.update(id, (rec) => {
      const activeJobs = taken ? rec.activeJobs + 1 : Math.max(rec.activeJobs - 1, 0);
      setJobs(rec, false, activeJobs, rec.maxActiveJobs, jobType === 'RIDE');
    });
  }

  remove(id: string): void {
    const rec = this.drivers.get(id);
    if (!rec) return;
    if (rec.active && rec.online) this.online -= 1;
    this.unplace(rec);
    this.drivers.delete(id);
  }

  /** Takes stale drivers out of the grid (an app that died ONLINE would be scanned forever); they stay known. */
  evictStale(staleBefore: number): number {
    let evicted = 0;
    for (const grid of this.grids.values()) {
      for (const cell of grid.cells.values()) {
        // Backwards: unplace moves the last slot into the freed one.
        for (let i = cell.drivers.length - 1; i >= 0; i--) {
          if (cell.slots[i * STRIDE + AT] <= staleBefore) {
            this.unplace(cell.drivers[i]);
            evicted += 1;
          }
        }
      }
    }
    return evicted;
  }

  nearest(q: NearestQuery): NearestResult[] {
    const grid = this.grids.get(q.vehicleType);
    const limit = Math.max(0, Math.floor(q.limit));
    if (!grid || limit === 0 || !(q.radiusMeters >= 0)) return [];
    const delta = q.radiusMeters / EARTH_RADIUS_M;
    const dLatDeg = delta / RAD;
    const qLat = q.lat * RAD;
    const qLng = q.lng * RAD;
    const cosQ = Math.max(0, Math.cos(qLat));
    const qx = cosQ * Math.cos(qLng);
    const qy = cosQ * Math.sin(qLng);
    const qz = Math.sin(qLat);
    // Below, distances are compared as haversines h = sin²(d/2R) = chord²/4, and turned into meters at the end.
    const hRadius = Math.sin(Math.min(Math.PI, delta) / 2) ** 2;

    const rowLo = rowOf(q.lat - dLatDeg - CELL_DEG);
    const rowHi = rowOf(q.lat + dLatDeg + CELL_DEG);
    let fullRows = q.lat - dLatDeg <= -90 || q.lat + dLatDeg >= 90;
    let colLo = 0;
    let colCount = NCOLS;
    if (!fullRows) {
      // Longitude half-width of a spherical cap (exact for a circle on the sphere), plus a cell of margin.
      const s = Math.sin(delta) / cosQ;
      if (s >= 1) fullRows = true;
      else {
        const dLngDeg = Math.asin(s) / RAD;
        colLo = Math.floor((q.lng - dLngDeg + 180) / CELL_DEG) - 1;
        colCount = Math.floor((q.lng + dLngDeg + 180) / CELL_DEG) + 1 - colLo + 1;
        if (colCount >= NCOLS) fullRows = true;
      }
    }

    // Slack keeps a driver right on the radius despite rounding; an unknown country matches nobody (-1).
    const search = new Search(
      qx,
      qy,
      qz,
      hRadius * (1 + 1e-9) + 1e-18,
      limit,
      SERVICE_BITS[q.orderType],
      q.countryId === undefined ? 0 : (this.countries.get(q.countryId) ?? -1),
      q.staleBefore,
    );
    const best = search.best;

    if (fullRows) {
      // Near a pole the box spans every longitude: visit the occupied cells, nearest bound first.
      const candidates: Candidate[] = [];
      for (let row = rowLo; row <= rowHi; row++) {
        const cols = grid.rows.get(row);
        if (!cols) continue;
        const hLat = rowLatBound(q.lat, row);
        const lngFactor = rowLngFactor(cosQ, row);
        for (const col of cols) {
          const bound = cellBound(q.lng, hLat, lngFactor, col);
          if (bound <= hRadius) candidates.push({ cell: grid.cells.get(row * NCOLS + col)!, bound });
        }
      }
      candidates.sort((a, b) => a.bound - b.bound);
      for (const { cell, bound } of candidates) {
        if (bound > search.worst()) break;
        search.scan(cell);
      }
    } else {
      // Rings of cells around the query's cell; stop once a ring cannot hold anything nearer.
      const colHi = colLo + colCount - 1;
      const r0 = rowOf(q.lat);
      const c0 = Math.floor((q.lng + 180) / CELL_DEG);
      const box: Box = { qLng: q.lng, hRadius, rowLo, rowHi, colLo, colHi, hLats: [], lngFactors: [] };
      let minFactor = 1;
      for (let row = rowLo; row <= rowHi; row++) {
        const lngFactor = rowLngFactor(cosQ, row);
        box.hLats.push(rowLatBound(q.lat, row));
        box.lngFactors.push(lngFactor);
        if (lngFactor < minFactor) minFactor = lngFactor;
      }
      const maxRing = Math.max(r0 - rowLo, rowHi - r0, c0 - colLo, colHi - c0);
      for (let k = 0; k <= maxRing; k++) {
        if (k >= 2) {
          // Every cell of ring k is at least k-1 cells away in latitude or in longitude.
          const gap = (k - 1) * CELL_DEG * RAD;
          const ringBound = minFactor * Math.sin(gap / 2) ** 2;
          if (ringBound > hRadius || ringBound > search.worst()) break;
        }
        if (k === 0) {
          this.visit(search, grid, r0, c0, box);
          continue;
        }
        for (let col = c0 - k; col <= c0 + k; col++) {
          this.visit(search, grid, r0 - k, col, box);
          this.visit(search, grid, r0 + k, col, box);
        }
        for (let row = r0 - k + 1; row <= r0 + k - 1; row++) {
          this.visit(search, grid, row, c0 - k, box);
          this.visit(search, grid, row, c0 + k, box);
        }
      }
    }
    // distanceMeters held h until here; the radius check in meters is the exact one.
    let n = 0;
    for (const r of best) {
      r.distanceMeters = 2 * EARTH_RADIUS_M * Math.asin(Math.sqrt(Math.min(1, r.distanceMeters)));
      if (r.distanceMeters <= q.radiusMeters) best[n++] = r;
    }
    best.length = n;
    return best;
  }

  /**
   * How many drivers of the vehicle type could take work (ACTIVE, ONLINE, free, position newer than
   * `staleBefore`) with south ≤ lat < north and west ≤ lng < east. Visits only the grid cells that
   * overlap the box (surge counts idle drivers this way, see pricing/surge.ts).
   */
  countIdle(
    vehicleType: VehicleType,
    south: number,
    west: number,
    north: number,
    east: number,
    staleBefore: number,
  ): number {
    const grid = this.grids.get(vehicleType);
    if (!grid || !(north > south) || !(east > west)) return 0;
    let count = 0;
    const colLo = Math.floor((west + 180) / CELL_DEG);
    const colHi = Math.floor((east + 180) / CELL_DEG);
    for (let row = rowOf(south); row <= rowOf(north); row++) {
      for (let col = colLo; col <= colHi; col++) {
        const cell = grid.cells.get(row * NCOLS + (((col % NCOLS) + NCOLS) % NCOLS));
        if (!cell) continue;
        for (let i = 0; i < cell.drivers.length; i++) {
          if (cell.slots[i * STRIDE + AT] <= staleBefore) continue;
          const p = cell.drivers[i].position!;
          if (p.lat >= south && p.lat < north && p.lng >= west && p.lng < east) count += 1;
        }
      }
    }
    return count;
  }

  /** Scans the cell at (row, col) of a ring if it is in the box and could hold a nearer driver. */
  private visit(search: Search, grid: Grid, row: number, col: number, box: Box): void {
    if (row < box.rowLo || row > box.rowHi || col < box.colLo || col > box.colHi) return;
    const wrapped = ((col % NCOLS) + NCOLS) % NCOLS;
    const cell = grid.cells.get(row * NCOLS + wrapped);
    if (!cell) return;
    const bound = cellBound(box.qLng, box.hLats[row - box.rowLo], box.lngFactors[row - box.rowLo], wrapped);
    if (bound > box.hRadius || bound > search.worst()) return;
    search.scan(cell);
  }

  private update(id: string, change: (rec: DriverRecord) => void): void {
    const rec = this.drivers.get(id);
    if (!rec) return;
    if (rec.active && rec.online) this.online -= 1;
    change(rec);
    if (rec.active && rec.online) this.online += 1;
    this.place(rec);
  }

  /** The record keeps the object itself (no copy per update): callers hand over a fresh one. */
  private assignPosition(rec: DriverRecord, p: Position): void {
    rec.position = p;
  }

  private place(rec: DriverRecord): void {
    const p = rec.position;
    if (!p || !rec.active || !rec.online || rec.busy) {
      this.unplace(rec);
      return;
    }
    const row = rowOf(p.lat);
    const col = colOf(p.lng);
    const key = row * NCOLS + col;
    let cell: Cell;
    if (rec.cell === key && rec.gridType === rec.vehicleType) {
      cell = this.grids.get(rec.vehicleType)!.cells.get(key)!;
    } else {
      this.unplace(rec);
      let grid = this.grids.get(rec.vehicleType);
      if (!grid) {
        grid = { cells: new Map(), rows: new Map() };
        this.grids.set(rec.vehicleType, grid);
      }
      let found = grid.cells.get(key);
      if (!found) {
        found = new Cell();
        grid.cells.set(key, found);
        let cols = grid.rows.get(row);
        if (!cols) grid.rows.set(row, (cols = new Set()));
        cols.add(col);
      }
      cell = found;
      cell.grow();
      rec.slot = cell.drivers.length;
      cell.drivers.push(rec);
      rec.cell = key;
      rec.gridType = rec.vehicleType;
    }
    // The position as a unit vector: chords order distances without trigonometry.
    const o = rec.slot * STRIDE;
    const lat = p.lat * RAD;
    const lng = p.lng * RAD;
    const slots = cell.slots;
    slots[o + X] = Math.cos(lat) * Math.cos(lng);
    slots[o + Y] = Math.cos(lat) * Math.sin(lng);
    slots[o + Z] = Math.sin(lat);
    slots[o + AT] = p.at;
    // A driver on a route (some packages, room for more) is offered no ride (section 24).
    slots[o + MASK] = rec.activeJobs > 0 ? rec.serviceMask & ~SERVICE_BITS.RIDE : rec.serviceMask;
    slots[o + COUNTRY] = this.countryNumber(rec.countryId);
  }

  private sharedCountryId(id: string | null): string | null {
    if (id === null) return null;
    const n = this.countryNumber(id);
    return this.countryIds[n];
  }

  private countryNumber(id: string | null): number {
    if (id === null) return 0;
    let n = this.countries.get(id);
    if (n === undefined) {
      this.countries.set(id, (n = this.countries.size + 1));
      this.countryIds[n] = id;
    }
    return n;
  }

  private unplace(rec: DriverRecord): void {
    if (rec.cell < 0 || !rec.gridType) return;
    const grid = this.grids.get(rec.gridType)!;
    const cell = grid.cells.get(rec.cell)!;
    const lastSlot = cell.drivers.length - 1;
    const last = cell.drivers.pop()!;
    if (last !== rec) {
      cell.drivers[rec.slot] = last;
      cell.move(lastSlot, rec.slot);
      last.slot = rec.slot;
    }
    if (cell.drivers.length === 0) {
      grid.cells.delete(rec.cell);
      const row = Math.floor(rec.cell / NCOLS);
      const cols = grid.rows.get(row);
      cols?.delete(rec.cell % NCOLS);
      if (cols && cols.size === 0) grid.rows.delete(row);
    }
    rec.cell = -1;
    rec.slot = -1;
    rec.gridType = null;
  }
}

function rowLatBound(qLat: number, row: number): number {
  const latLo = row * CELL_DEG - 90;
  const latHi = latLo + CELL_DEG;
  const latGap = qLat < latLo ? (latLo - qLat) * RAD : qLat > latHi ? (qLat - latHi) * RAD : 0;
  return Math.sin(latGap / 2) ** 2;
}

/** cos(query latitude) times the smallest cos(latitude) of any point in the row: bounds the longitude term from below. */
function rowLngFactor(cosQ: number, row: number): number {
  const latLo = row * CELL_DEG - 90;
  return cosQ * Math.max(0, Math.min(Math.cos(latLo * RAD), Math.cos((latLo + CELL_DEG) * RAD)));
}

/** hav(d) >= hav(latGap) + cos(lat1)·min cos(lat2)·hav(lngGap): a true lower bound for a cell. */
function cellBound(qLng: number, hLat: number, lngFactor: number, col: number): number {
  const lngLo = col * CELL_DEG - 180;
  let gap = 0;
  if (!(qLng >= lngLo && qLng <= lngLo + CELL_DEG)) {
    gap = Math.min(Math.abs(wrapDeg(qLng - lngLo)), Math.abs(wrapDeg(qLng - lngLo - CELL_DEG))) * RAD;
  }
  return hLat + lngFactor * Math.sin(gap / 2) ** 2;
}

/** One nearest() call; `distanceMeters` holds the haversine h until the end. */
class Search {
  readonly best: NearestResult[] = [];

  constructor(
    private readonly qx: number,
    private readonly qy: number,
    private readonly qz: number,
    private readonly hLimit: number,
    private readonly limit: number,
    private readonly mask: number,
    private readonly country: number,
    private readonly staleBefore: number,
  ) {}

  worst(): number {
    return this.best.length === this.limit ? this.best[this.limit - 1].distanceMeters : Infinity;
  }

  scan(cell: Cell): void {
    const { slots, drivers } = cell;
    const { qx, qy, qz, hLimit, limit, mask, country, staleBefore, best } = this;
    const n = drivers.length;
    for (let i = 0, o = 0; i < n; i++, o += STRIDE) {
      if (slots[o + AT] <= staleBefore || (slots[o + MASK] & mask) === 0) continue;
      if (country !== 0 && slots[o + COUNTRY] !== country) continue;
      const dx = slots[o + X] - qx;
      const dy = slots[o + Y] - qy;
      const dz = slots[o + Z] - qz;
      const h = (dx * dx + dy * dy + dz * dz) / 4;
      if (h > hLimit) continue;
      if (best.length === limit) {
        if (h >= best[limit - 1].distanceMeters) continue;
        best.pop();
      }
      let j = best.length;
      while (j > 0 && best[j - 1].distanceMeters > h) j--;
      best.splice(j, 0, { driver: drivers[i], distanceMeters: h });
    }
  }
}

function wrapDeg(d: number): number {
  return ((((d + 180) % 360) + 360) % 360) - 180;
}

/** The record's job counts (a record given none: busy means full, with one job at most). */
function setJobs(
  rec: DriverRecord,
  busy: boolean,
  activeJobs?: number,
  maxActiveJobs?: number,
  onRide?: boolean,
): void {
  const max = maxActiveJobs ?? 1;
  rec.maxActiveJobs = max;
  rec.activeJobs = activeJobs ?? (busy ? max : 0);
  rec.onRide = (onRide ?? false) && rec.activeJobs > 0;
  rec.busy = rec.onRide || rec.activeJobs >= max;
}
