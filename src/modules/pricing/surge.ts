// Surge (contract section 18): a multiplier per vehicle type and grid cell of SURGE_CELL metres,
// from 1.0 to SURGE_MAX in steps of 0.1, kept in tenths (12 is ×1.2). Every SURGE_INTERVAL each
// cell moves one step toward its target, clamp(1 + 0.25 × (open jobs ÷ max(1, idle drivers) − 1)),
// both counted over the cell and its 8 neighbours. Idle drivers come from the live index in memory;
// open jobs from one query per interval, each account's counting at most SURGE_ACCOUNT_CAP in a block
// and none before it is JOB_GRACE_MS old. With Redis, one instance computes each step under a short
// lock and every instance quotes from the state it wrote; without Redis, the process computes alone.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { VehicleType } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { EARTH_RADIUS_M } from '../matching/driver-index.js';

const METRES_PER_DEGREE = (EARTH_RADIUS_M * Math.PI) / 180;

/**
 * An open job counts toward demand only once it is this old (contract section 18: a job cancelled
 * within 60 s of its creation never counts). Cancelling a PENDING package is free, so without it
 * jobs created and cancelled between two steps could push the multiplier up for nothing.
 */
export const JOB_GRACE_MS = 60_000;

export interface OpenJob {
  vehicleType: VehicleType;
  /** The account that created it: one account's jobs count at most the cap toward a block's demand. */
  accountId: string;
  lat: number;
  lng: number;
}

/** Counts idle eligible drivers in a lat/lng box (DriverIndex.countIdle). */
export type IdleCounter = (
  vehicleType: VehicleType,
  south: number,
  west: number,
  north: number,
  east: number,
) => number;

/**
 * A square grid of `cellMeters`: rows of equal height in latitude, and in each row columns of equal
 * width on the ground (so narrower in degrees than at the equator). The neighbours in the rows above
 * and below are the three cells around the same longitude.
 */
export class SurgeGrid {
  private readonly rowDeg: number;

  constructor(readonly cellMeters: number) {
    this.rowDeg = cellMeters / METRES_PER_DEGREE;
  }

  private colDeg(row: number): number {
    const centre = ((row + 0.5) * this.rowDeg * Math.PI) / 180;
    return this.cellMeters / (METRES_PER_DEGREE * Math.max(0.01, Math.cos(centre)));
  }

  cellOf(lat: number, lng: number): [row: number, col: number] {
    const row = Math.floor(lat / this.rowDeg);
    return [row, Math.floor(lng / this.colDeg(row))];
  }

  /** The cell and its 8 neighbours, as 3 rows: [row, first col, last col]. */
  block(row: number, col: number): [number, number, number][] {
    const centreLng = (col + 0.5) * this.colDeg(row);
    const rows: [number, number, number][] = [];
    for (let r = row - 1; r <= row + 1; r++) {
      const c = r === row ? col : Math.floor(centreLng / this.colDeg(r));
      rows.push([r, c - 1, c + 1]);
    }
    return rows;
  }

  /** The lat/lng box of columns colLo..colHi of a row: [south, west, north, east]. */
  box(row: number, colLo: number, colHi: number): [number, number, number, number] {
    const w = this.colDeg(row);
    return [row * this.rowDeg, colLo * w, (row + 1) * this.rowDeg, (colHi + 1) * w];
  }
}

export const cellKey = (vehicleType: VehicleType, row: number, col: number) => `${vehicleType}:${row}:${col}`;

/**
 * The target in tenths: 10 × clamp(1 + 0.25 × (jobs ÷ max(1, drivers) − 1)) rounded half up, in
 * integers: 10 × (1 + 0.25 × (j/d − 1)) = (15d + 5j) / 2d.
 */
export function targetTenths(jobs: number, idleDrivers: number, maxTenths: number): number {
  const d = Math.max(1, idleDrivers);
  const tenths = Math.floor((32 * d + 10 * jobs) / (4 * d));
  return Math.min(maxTenths, Math.max(10, tenths));
}

/**
 * One step: every cell that has a multiplier above 1.0 or an open job in its block moves one tenth
 * toward its target. A block's demand is the sum over accounts of min(accountCap, the account's jobs
 * in the block): one account flooding a cell with cheap PENDING packages moves it no further than
 * `accountCap` jobs would. Returns the cells above 1.0 (the others are 1.0 and not kept).
 */
export function stepSurge(
  previous: ReadonlyMap<string, number>,
  grid: SurgeGrid,
  jobs: readonly OpenJob[],
  countIdle: IdleCounter,
  maxTenths: number,
  accountCap: number,
): Map<string, number> {
  // Per cell, the jobs of each account in it.
  const jobsPerCell = new Map<string, Map<string, number>>();
  const candidates = new Map<string, [VehicleType, number, number]>();
  for (const job of jobs) {
    const [row, col] = grid.cellOf(job.lat, job.lng);
    const key = cellKey(job.vehicleType, row, col);
    let accounts = jobsPerCell.get(key);
    if (!accounts) jobsPerCell.set(key, (accounts = new Map()));
    accounts.set(job.accountId, (accounts.get(job.accountId) ?? 0) + 1);
    for (const [r, lo, hi] of grid.block(row, col)) {
      for (let c = lo; c <= hi; c++) candidates.set(cellKey(job.vehicleType, r, c), [job.vehicleType, r, c]);
    }
  }
  for (const key of previous.keys()) {
    if (candidates.has(key)) continue;
    const [type, row, col] = key.split(':');
    candidates.set(key, [type as VehicleType, Number(row), Number(col)]);
  }

  const next = new Map<string, number>();
  const perAccount = new Map<string, number>();
  for (const [key, [vehicleType, row, col]] of candidates) {
    let idle = 0;
    perAccount.clear();
    for (const [r, lo, hi] of grid.block(row, col)) {
      for (let c = lo; c <= hi; c++) {
        for (const [account, n] of jobsPerCell.get(cellKey(vehicleType, r, c)) ?? [])
          perAccount.set(account, (perAccount.get(account) ?? 0) + n);
      }
      idle += countIdle(vehicleType, ...grid.box(r, lo, hi));
    }
    let open = 0;
    for (const n of perAccount.values()) open += Math.min(accountCap, n);
    const current = Math.min(maxTenths, previous.get(key) ?? 10);
    const target = targetTenths(open, idle, maxTenths);
    const moved = current + Math.sign(target - current);
    if (moved > 10) next.set(key, moved);
  }
  return next;
}

interface SharedState {
  at: number;
  cells: [string, number][];
}

export interface SurgeOptions {
  cellMeters: number;
  intervalMs: number;
  maxTenths: number;
  /** SURGE_ACCOUNT_CAP: the most jobs one account counts for in a block's demand. */
  accountCap: number;
  clock: Clock;
  logger: Logger;
  /** The open jobs created at or before the instant given. */
  openJobs: (createdBefore: Date) => Promise<OpenJob[]>;
  countIdle: IdleCounter;
  redis?: Redis;
  redisKeyPrefix?: string;
  /** Called after this instance wrote a new shared state (to tell the others). */
  onShared?: () => void;
}

export class Surge {
  readonly grid: SurgeGrid;
  private cells = new Map<string, number>();
  /** When the state was computed (epoch ms; 0: never). */
  private computedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<boolean> | undefined;
  private readonly instanceId = randomUUID();

  constructor(private readonly options: SurgeOptions) {
    this.grid = new SurgeGrid(options.cellMeters);
  }

  private key(name: string): string {
    return `${this.options.redisKeyPrefix ?? ''}surge:${name}`;
  }

  /** The multiplier in tenths at a pickup point for a vehicle type (10 when it does not surge). */
  tenthsAt(vehicleType: VehicleType, lat: number, lng: number): number {
    if (this.cells.size === 0) return 10;
    const [row, col] = this.grid.cellOf(lat, lng);
    return this.cells.get(cellKey(vehicleType, row, col)) ?? 10;
  }

  /** The cells above 1.0 (for tests and diagnostics). */
  snapshot(): Map<string, number> {
    return new Map(this.cells);
  }

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /**
   * One step, if a step is due (the last was at least 90 % of an interval ago: timers drift, and
   * with Redis the instances tick at different moments). Returns whether this instance computed it.
   */
  tick(): Promise<boolean> {
    this.running ??= this.step()
      .catch((err) => {
        this.options.logger.warn(
          { err: (err as Error).message },
          'surge step failed; keeping the previous multipliers',
        );
        return false;
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async step(): Promise<boolean> {
    const { redis, intervalMs, clock } = this.options;
    const due = (at: number) => clock.nowMs() - at >= intervalMs * 0.9;
    if (!redis) {
      if (!due(this.computedAt)) return false;
      await this.compute();
      return true;
    }
    const locked = await redis.set(
      this.key('lock'),
      this.instanceId,
      'PX',
      Math.max(1, Math.floor(intervalMs * 0.9)),
      'NX',
    );
    const shared = await this.readShared();
    if (locked !== 'OK' || (shared && !due(shared.at))) {
      if (shared) this.adopt(shared);
      return false;
    }
    if (shared) this.adopt(shared);
    await this.compute();
    const state: SharedState = { at: this.computedAt, cells: [...this.cells] };
    // Kept a few intervals: a state nobody refreshes any more (every instance gone) expires.
    await redis.set(this.key('state'), JSON.stringify(state), 'PX', intervalMs * 10);
    this.options.onShared?.();
    return true;
  }

  private async compute(): Promise<void> {
    const { openJobs, countIdle, maxTenths, accountCap, clock } = this.options;
    const jobs = await openJobs(new Date(clock.nowMs() - JOB_GRACE_MS));
    this.cells = stepSurge(this.cells, this.grid, jobs, countIdle, maxTenths, accountCap);
    this.computedAt = clock.nowMs();
  }

  /** Takes the state another instance shared (Redis); without Redis, nothing to do. */
  async refresh(): Promise<void> {
    if (!this.options.redis) return;
    try {
      const shared = await this.readShared();
      if (shared) this.adopt(shared);
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message },
        'reading the shared surge state failed; keeping the previous multipliers',
      );
    }
  }

  private async readShared(): Promise<SharedState | undefined> {
    const raw = await this.options.redis!.get(this.key('state'));
    if (!raw) return undefined;
    const state = JSON.parse(raw) as SharedState;
    return typeof state.at === 'number' && Array.isArray(state.cells) ? state : undefined;
  }

  private adopt(state: SharedState): void {
    if (state.at < this.computedAt) return;
    this.cells = new Map(state.cells);
    this.computedAt = state.at;
  }
}
