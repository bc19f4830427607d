// Owns the live driver index of this process: loads it from PostgreSQL, keeps it current from the
// bus, shares positions between instances through Redis, and writes positions behind to PostgreSQL.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Counter, Gauge } from 'prom-client';
import { subscribe, type Subscription } from '../../shared/redis.js';
import { isDatabaseUnavailable } from '../../db/availability.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import type { RedisHealth } from '../../shared/redis.js';
import { isDataException } from '../../shared/errors.js';
import {
  DriverIndex,
  serviceTypesOf,
  type DriverAttributes,
  type DriverRecord,
  type Position,
} from './driver-index.js';
import type { DriverLocationsRepository, LiveRow } from './driver-locations.repository.js';

/** How often dirty positions go to PostgreSQL, and to the other instances through Redis. */
export const DB_FLUSH_INTERVAL_MS = 1000;
export const REDIS_FLUSH_INTERVAL_MS = 50;
/** Drivers read per query when the index is (re)loaded. */
const LOAD_PAGE = 5000;
/** How often drivers with a stale position leave the grid. */
const STALE_SWEEP_INTERVAL_MS = 30_000;
/** While Redis is down, how often the index is read again from PostgreSQL (the other instances' write-behind). */
export const REDIS_DOWN_RELOAD_INTERVAL_MS = 2000;
/**
 * Rows per UPDATE. Between two statements of one write-behind batch the writer rests as long as the
 * last one took: the database spends at most half its time on positions, in bursts of a few ms
 * rather than one long one (on a machine shared with the database, a burst of 80-100 ms delayed
 * every request behind it). Not when stopping: then everything is written at once.
 */
export const DB_BATCH_ROWS = 500;

export interface FlushStats {
  rows: number;
  durationMs: number;
  /** How far the database copy lagged: from the first report this batch took in to its commit. */
  maxLagMs: number;
}

/** Who hears of drivers here; given at construction (the composition root wires them). */
export interface LiveDriversHooks {
  /** A driver reported a position or came online here (dispatch offers it what waits nearby). */
  onAvailable?: (driverId: string, cameOnline: boolean) => void;
  /** Every position applied here, reported to this instance or received from another (tracking streams). */
  onPosition?: (driverId: string, position: Position) => void;
}

/** What the live index needs (built in src/services.ts). */
export interface LiveDriversDeps {
  repo: DriverLocationsRepository;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  /** Shares positions between instances when set. */
  redis: Redis | undefined;
  redisHealth: RedisHealth | undefined;
  config: Pick<Config, 'redis' | 'drivers'>;
}

export class LiveDrivers {
  readonly index = new DriverIndex();
  private readonly instanceId = randomUUID();
  /** Positions not yet written, newest per driver, and when the oldest of them was reported (performance.now()). */
  private dirty = new Map<string, Position>();
  private dirtySince = 0;
  private outgoing = new Map<string, Position>();
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: (() => void)[] = [];
  private subscription: Subscription | undefined;
  private unwatch: (() => void) | undefined;
  private resyncing: Promise<void> | undefined;
  private resyncAgain = false;
  private flushing: Promise<void> | undefined;
  private stopping = false;
  private started: Promise<void> | undefined;
  /** Called after each write-behind batch (benchmarks read the lag from it). */
  onFlush: ((stats: FlushStats) => void) | undefined;
  private readonly onAvailable: LiveDriversHooks['onAvailable'];
  private readonly onPosition: LiveDriversHooks['onPosition'];
  /** Positions applied to the index since start (HTTP and WebSocket; not those from other instances). */
  positionsApplied = 0;

  private readonly repo: DriverLocationsRepository;

  constructor(
    private readonly deps: LiveDriversDeps,
    hooks: LiveDriversHooks = {},
  ) {
    this.onAvailable = hooks.onAvailable;
    this.onPosition = hooks.onPosition;
    this.repo = deps.repo;
    const index = this.index;
    new Gauge({
      name: 'drivers_online',
      help: 'ACTIVE drivers that are ONLINE, as this instance sees them',
      registers: [deps.registry],
      collect() {
        this.set(index.onlineCount);
      },
    });
    // Counted in a plain field (every position pays it) and handed to Prometheus when scraped.
    let counted = 0;
    const applied = () => this.positionsApplied;
    new Counter({
      name: 'driver_positions_total',
      help: 'Driver positions reported to this instance and applied (older ones are ignored)',
      registers: [deps.registry],
      collect() {
        this.inc(applied() - counted);
        counted = applied();
      },
    });
  }

  /**
   * The hash of newest positions, and the channel announcing them: one name, hence one slot of a
   * cluster, so both go in one MULTI (the name is unchanged from before clusters: no rolling-deploy gap).
   */
  private get positionsKey() {
    return `${this.deps.config.redis.keyPrefix}drivers:positions`;
  }

  start(): Promise<void> {
    this.started ??= this.doStart();
    return this.started;
  }

  private async doStart(): Promise<void> {
    const { bus } = this.deps;
    await this.loadDrivers();

    const redis = this.deps.redis;
    if (redis) {
      // The shared truth for positions newer than the write-behind copy: overlay it, then follow.
      const subscription = await subscribe(redis, this.positionsKey, (raw) => this.receive(raw));
      this.subscription = subscription;
      // Positions published while it is away are missed: the health's recovery resynchronises (bus.resync).
      this.unwatch = this.deps.redisHealth?.watch('positions', subscription.connection, () => subscription.check());
      // Newer than PostgreSQL's copy when an instance stopped before its write-behind ran: written back,
      // so that they outlive Redis.
      await this.loadSharedPositions(true);
      this.timers.push(setInterval(() => void this.publishPositions(), REDIS_FLUSH_INTERVAL_MS));
      // Meanwhile the other instances' positions and changes reach this one only through PostgreSQL.
      this.timers.push(
        setInterval(() => {
          if (this.deps.redisHealth?.up === false) void this.resync();
        }, REDIS_DOWN_RELOAD_INTERVAL_MS),
      );
    }

    this.unsubscribe.push(
      bus.subscribe('driver.changed', ({ driverId }) => void this.reload(driverId)),
      bus.subscribe('driver.job', ({ driverId, busy, jobType }) => {
        const rec = this.index.get(driverId);
        if (rec) this.index.jobChanged(driverId, busy, jobType);
        // A driver holding several jobs (section 24): its counts are read again from PostgreSQL.
        if (!rec || rec.maxActiveJobs > 1) void this.reload(driverId);
      }),
      bus.subscribe('user.changed', ({ userId, status }) => {
        if (status !== undefined) this.index.setActive(userId, status === 'ACTIVE');
        void this.reload(userId);
      }),
      bus.subscribe('bus.resync', () => void this.resync()),
    );
    this.timers.push(setInterval(() => void this.flush(), DB_FLUSH_INTERVAL_MS));
    this.timers.push(setInterval(() => this.evictStale(), STALE_SWEEP_INTERVAL_MS));
    for (const timer of this.timers) timer.unref();
  }

  /** Takes drivers whose position is older than DRIVER_LOCATION_TTL out of the grid (they cannot be matched). */
  evictStale(): number {
    return this.index.evictStale(this.deps.clock.nowMs() - this.deps.config.drivers.locationTtlMs);
  }

  /** Reads every driver from PostgreSQL into the index (a position only replaces an older one). */
  private async loadDrivers(): Promise<void> {
    // In pages: one result of 100k rows was ~100 MB of garbage at its peak, and the heap kept it.
    let after: string | undefined;
    for (;;) {
      const rows = await this.repo.listPage(LOAD_PAGE, after);
      for (const row of rows) this.apply(row);
      if (rows.length < LOAD_PAGE) return;
      after = rows[rows.length - 1]!.user_id;
    }
  }

  private async loadSharedPositions(writeBack = false): Promise<void> {
    let cursor = '0';
    do {
      const [next, fields] = await this.deps.redis!.hscan(this.positionsKey, cursor, 'COUNT', LOAD_PAGE);
      cursor = next;
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const id = fields[i]!;
        const p = decodePosition(fields[i + 1]!);
        if (p && this.index.setPosition(id, p) && writeBack) this.markDirty(id, p);
      }
    } while (cursor !== '0');
  }

  private markDirty(driverId: string, position: Position): void {
    if (this.dirty.size === 0) this.dirtySince = performance.now();
    this.dirty.set(driverId, position);
  }

  /**
   * While and after Redis was away: availability, jobs and accounts are in PostgreSQL first, so read
   * every driver again; missed positions come from the Redis hash when it answers.
   */
  private resync(): Promise<void> {
    if (this.resyncing) {
      // It may have read before the latest change: once more when it ends.
      this.resyncAgain = true;
      return this.resyncing;
    }
    this.resyncing = (async () => {
      try {
        await this.loadDrivers();
        const health = this.deps.redisHealth;
        if (health?.up) {
          // Redis may go away between two pages: that is an outage (logged once by the health, and
          // read again by the resync when it is back), not an error of this process.
          await this.loadSharedPositions().catch((err: unknown) => health.failure('positions', err));
        }
      } catch (err) {
        if (!isDatabaseUnavailable(err)) this.deps.logger.error({ err }, 'resynchronising the driver index failed');
      } finally {
        this.resyncing = undefined;
        if (this.resyncAgain) {
          this.resyncAgain = false;
          void this.resync();
        }
      }
    })();
    return this.resyncing;
  }

  /** Stops the timers and writes everything still pending (Redis, then PostgreSQL). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    await this.publishPositions();
    this.unwatch?.();
    this.subscription?.close();
    await this.flush();
    // Kept for retries until now; at shutdown they can only be reported.
    if (this.dirty.size)
      this.deps.logger.error({ rows: this.dirty.size }, 'driver positions not written before shutdown');
  }

  /** The driver's live record, loaded from the database when this instance has not seen it yet. */
  async ensure(driverId: string): Promise<DriverRecord | undefined> {
    return this.index.get(driverId) ?? (await this.reload(driverId));
  }

  /** Reads the driver from the database into the index (or out of it when it is gone). */
  async reload(driverId: string): Promise<DriverRecord | undefined> {
    try {
      const row = await this.repo.getById(driverId);
      if (!row) {
        this.index.remove(driverId);
        return undefined;
      }
      return this.apply(row);
    } catch (err) {
      if (!isDatabaseUnavailable(err)) this.deps.logger.error({ err, driverId }, 'reloading a driver failed');
      return this.index.get(driverId);
    }
  }

  /**
   * Records a position reported by the driver. An update older than the one held is ignored; a
   * recordedAt in the future counts as now (`at`: positionTime, when the caller has it already).
   * Returns whether it was applied.
   */
  report(
    driverId: string,
    input: { lat: number; lng: number; heading?: number; speed?: number; recordedAt?: string },
    at = this.positionTime(input.recordedAt),
  ): boolean {
    const position: Position = {
      lat: input.lat,
      lng: input.lng,
      heading: input.heading ?? null,
      speed: input.speed ?? null,
      at,
    };
    if (!this.index.setPosition(driverId, position)) return false;
    this.positionsApplied += 1;
    this.markDirty(driverId, position);
    if (this.deps.redis) this.outgoing.set(driverId, position);
    this.onAvailable?.(driverId, false);
    this.onPosition?.(driverId, position);
    return true;
  }

  /** The time a reported position is held at: its recordedAt, but never in the future nor more than a day old. */
  positionTime(recordedAt: string | undefined): number {
    const now = this.deps.clock.nowMs();
    if (recordedAt === undefined) return now;
    const parsed = Date.parse(recordedAt);
    // A report older than a day can never be matched; keep it old but within what PostgreSQL stores.
    return Number.isFinite(parsed) && parsed < now ? Math.max(parsed, now - 86_400_000) : now;
  }

  /** Applies an availability change here at once; other instances reload it (driver.changed). */
  setOnline(driverId: string, online: boolean): void {
    this.index.setOnline(driverId, online);
    this.deps.bus.publishToOthers('driver.changed', { driverId });
    if (online) this.onAvailable?.(driverId, true);
  }

  /** Writes the dirty positions to PostgreSQL: one multi-row UPDATE per batch, never one per ping. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.dirty.size ? this.flush() : undefined));
    if (this.dirty.size === 0) return Promise.resolve();
    const batch = this.dirty;
    const since = this.dirtySince;
    this.dirty = new Map();
    this.flushing = this.write(batch, since).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(batch: Map<string, Position>, since: number): Promise<void> {
    const started = performance.now();
    const entries = [...batch];
    try {
      for (let i = 0; i < entries.length; i += DB_BATCH_ROWS) {
        const statementStarted = performance.now();
        await this.repo.writePositions(entries.slice(i, i + DB_BATCH_ROWS));
        if (!this.stopping && i + DB_BATCH_ROWS < entries.length) await delay(performance.now() - statementStarted);
      }
      const done = performance.now();
      this.onFlush?.({ rows: entries.length, durationMs: done - started, maxLagMs: done - since });
    } catch (err) {
      // A data error (class 22) would fail every retry of the batch: drop it rather than block all drivers.
      if (isDataException(err)) {
        this.deps.logger.error(
          { err: (err as Error).message, rows: entries.length },
          'driver positions refused by the database; batch dropped',
        );
        return;
      }
      // The database being away is logged once by the pool's watcher; the batch is kept and retried.
      if (!isDatabaseUnavailable(err)) {
        this.deps.logger.error(
          { err: (err as Error).message, rows: entries.length },
          'writing driver positions failed; will retry',
        );
      }
      // Put the batch back unless a newer position arrived meanwhile.
      this.dirtySince = this.dirty.size ? Math.min(this.dirtySince, since) : since;
      for (const [id, queued] of entries) {
        const newer = this.dirty.get(id);
        if (!newer || newer.at < queued.at) this.dirty.set(id, queued);
      }
    }
  }

  private async publishPositions(): Promise<void> {
    const redis = this.deps.redis;
    // While Redis is down the newest position per driver waits here (and goes to PostgreSQL meanwhile).
    if (!redis || this.outgoing.size === 0 || this.deps.redisHealth?.up === false) return;
    const batch = this.outgoing;
    this.outgoing = new Map();
    const fields: string[] = [];
    const list: unknown[] = [];
    for (const [id, p] of batch) {
      fields.push(id, encodePosition(p));
      list.push([id, p.lat, p.lng, p.heading, p.speed, p.at]);
    }
    try {
      const message = JSON.stringify({ from: this.instanceId, positions: list });
      const multi = redis.multi().hset(this.positionsKey, ...fields);
      await (
        redis.isCluster ? multi.spublish(this.positionsKey, message) : multi.publish(this.positionsKey, message)
      ).exec();
    } catch (err) {
      this.deps.redisHealth?.failure('positions publish', err);
      for (const [id, p] of batch) if (!this.outgoing.has(id)) this.outgoing.set(id, p);
    }
  }

  private receive(raw: string): void {
    try {
      const { from, positions } = JSON.parse(raw) as {
        from: string;
        positions: [string, number, number, number | null, number | null, number][];
      };
      if (from === this.instanceId) return;
      for (const [id, lat, lng, heading, speed, at] of positions) {
        const position = { lat, lng, heading, speed, at };
        if (!this.index.get(id)) {
          void this.reload(id).then(() => this.index.setPosition(id, position) && this.onPosition?.(id, position));
        } else if (this.index.setPosition(id, position)) this.onPosition?.(id, position);
      }
    } catch (err) {
      this.deps.logger.warn({ err: (err as Error).message }, 'bad positions message');
    }
  }

  private apply(row: LiveRow): DriverRecord {
    const attrs: DriverAttributes = {
      id: row.user_id,
      firstName: row.first_name,
      vehicleType: row.vehicle_type,
      vehiclePlate: row.vehicle_plate,
      rating: row.rating,
      countryId: row.country_id,
      serviceTypes: serviceTypesOf(row.service_mask),
      active: row.active,
      online: row.online,
      busy: row.busy,
      activeJobs: row.active_jobs,
      maxActiveJobs: row.max_active_jobs,
      onRide: row.active_job_type === 'RIDE',
    };
    const position =
      row.last_lat !== null && row.last_lng !== null && row.last_location_ms !== null
        ? {
            lat: row.last_lat,
            lng: row.last_lng,
            heading: row.last_heading,
            speed: row.last_speed,
            at: row.last_location_ms,
          }
        : null;
    return this.index.upsert(attrs, position);
  }
}

function encodePosition(p: Position): string {
  return JSON.stringify([p.lat, p.lng, p.heading, p.speed, p.at]);
}

function decodePosition(value: string): Position | undefined {
  try {
    const [lat, lng, heading, speed, at] = JSON.parse(value) as [number, number, number | null, number | null, number];
    if (typeof lat !== 'number' || typeof lng !== 'number' || typeof at !== 'number') return undefined;
    return { lat, lng, heading, speed, at };
  } catch {
    return undefined;
  }
}
