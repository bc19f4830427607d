// Routes (contract section 24): a driver's maxActiveJobs (admin, its company), vehicle capacities,
// the route of its active packages with ETAs from the router, and the driver's reorder (versioned).
import type { DB } from '../../db/database.js';
import type { VehicleType } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { DriversService } from '../drivers/drivers.service.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import type { Router } from '../routing/router.js';
import { routeStops, type RouteStop } from './route-model.js';
import { newlyLate, pickupAfterDropoff, timeline, type Durations, type Point } from './route-plan.js';
import type { RoutesRepository } from './routes.repository.js';

const driverNotFound = () => notFound('Driver not found', 'DRIVER_NOT_FOUND');
const iso = (ms: number) => new Date(ms).toISOString();
const kindName = (s: RouteStop) => (s.kind === 'PICKUP' ? 'pickup' : 'drop-off');

export interface RouteView {
  id: string;
  version: number;
  stops: {
    id: string;
    jobId: string;
    kind: 'PICKUP' | 'DROPOFF';
    location: Point;
    address: string;
    window?: { start: string | null; end: string | null };
    eta: string | null;
    status: 'PENDING' | 'DONE';
  }[];
  distanceMeters: number;
  durationSeconds: number;
}

interface Loaded {
  version: number;
  vehicleType: VehicleType;
  start: Point | null;
  done: RouteStop[];
  pending: RouteStop[];
}

export class RoutesService {
  constructor(
    private readonly deps: {
      db: DB;
      repo: RoutesRepository;
      router: Router;
      clock: Clock;
      live: Pick<LiveDrivers, 'reload' | 'index'>;
      bus: Bus;
      drivers: Pick<DriversService, 'getDriver'>;
    },
  ) {}

  /** PATCH /admin/drivers/:id (companyId null) and PATCH /companies/me/drivers/:id (its own drivers only: else 404). */
  async setMaxActiveJobs(driverId: string, maxActiveJobs: number, companyId: string | null) {
    if (!(await this.deps.repo.setMaxActiveJobs(driverId, maxActiveJobs, companyId, this.deps.clock.now())))
      throw driverNotFound();
    await this.deps.live.reload(driverId);
    this.deps.bus.publishToOthers('driver.changed', { driverId });
    return { ...(await this.deps.drivers.getDriver(driverId)), maxActiveJobs };
  }

  async listCapacities() {
    return { items: (await this.deps.repo.listCapacities()).map(toCapacity) };
  }

  async putCapacity(vehicleType: VehicleType, body: { parcels: number; kg: number }) {
    return toCapacity(await this.deps.repo.putCapacity(vehicleType, body.parcels, body.kg, this.deps.clock.now()));
  }

  /** GET /drivers/:id/route: admins, and the driver's company; anyone else 404. */
  async routeFor(auth: AuthContext, driverId: string): Promise<RouteView> {
    const driver = await this.deps.repo.driver(this.deps.db, driverId);
    const allowed =
      auth.role === 'ADMIN' ||
      auth.userId === driverId ||
      (auth.role === 'COMPANY' && driver?.company_id === auth.userId);
    if (!driver || !allowed) throw driverNotFound();
    return this.route(driverId);
  }

  /** The driver's route: done stops, then the pending ones in order with their ETAs from the router. */
  async route(driverId: string): Promise<RouteView> {
    const r = await this.load(driverId);
    const stops = [...r.done, ...r.pending];
    let distanceMeters = 0;
    let durationSeconds = 0;
    const etas: (number | null)[] = r.done.map(() => null);
    if (r.pending.length) {
      const start = r.start ?? r.pending[0]!.location;
      const points = [start, ...r.pending.map((s) => s.location)];
      const matrix = await this.deps.router.matrix(points, points, r.vehicleType);
      const d: Durations = (from, to) => matrix.durations[from]![to]!;
      const order = r.pending.map((_, k) => k + 1);
      const t = timeline(this.deps.clock.nowMs(), order, r.pending, d);
      etas.push(...t.arrivals);
      durationSeconds = t.durationSeconds;
      let at = 0;
      for (const to of order) {
        distanceMeters += matrix.distances[at]![to]!;
        at = to;
      }
    }
    return {
      id: driverId,
      version: r.version,
      stops: stops.map((s, k) => ({
        id: s.id,
        jobId: s.jobId,
        kind: s.kind,
        location: s.location,
        address: s.address,
        ...(s.windowStart !== null || s.windowEnd !== null
          ? {
              window: {
                start: s.windowStart === null ? null : iso(s.windowStart),
                end: s.windowEnd === null ? null : iso(s.windowEnd),
              },
            }
          : {}),
        eta: etas[k] === null || etas[k] === undefined ? null : iso(etas[k]),
        status: s.status,
      })),
      distanceMeters,
      durationSeconds,
    };
  }

  /** Tracking (section 24): the route's ETA for the job's drop-off, seconds from now, and the pending stops before it. */
  async dropoffEta(driverId: string, jobId: string): Promise<{ etaSeconds: number; stopsBefore: number } | undefined> {
    const route = await this.route(driverId);
    const pending = route.stops.filter((s) => s.status === 'PENDING');
    const k = pending.findIndex((s) => s.jobId === jobId && s.kind === 'DROPOFF');
    if (k < 0 || !pending[k]!.eta) return undefined;
    const etaSeconds = Math.max(0, Math.round((Date.parse(pending[k]!.eta!) - this.deps.clock.nowMs()) / 1000));
    return { etaSeconds, stopsBefore: k };
  }

  /**
   * PUT /drivers/me/route/order: the pending stops in the driver's order. 409 ROUTE_CHANGED when the
   * version is old; 409 naming the stop when a drop-off would come before its pickup or a promised window
   * that held would break (on the straight estimate, as dispatch checks it).
   */
  async reorder(driverId: string, body: { version: number; stopIds: string[] }): Promise<RouteView> {
    const r = await this.load(driverId);
    if (body.version !== r.version) throw routeChanged(r.version);
    const byId = new Map(r.pending.map((s) => [s.id, s]));
    const seen = new Set<string>();
    const next: RouteStop[] = [];
    for (const id of body.stopIds) {
      const stop = byId.get(id);
      if (!stop || seen.has(id))
        throw badRequest(`stopIds: ${id} is not a pending stop of this route, or is listed twice`);
      seen.add(id);
      next.push(stop);
    }
    if (next.length !== r.pending.length) throw badRequest('stopIds must list every pending stop of the route once');
    const wrong = pickupAfterDropoff(next);
    if (wrong >= 0) {
      const s = next[wrong]!;
      throw conflict(
        `Stop ${s.id} (the drop-off of job ${s.jobId}) would come before its pickup`,
        'PICKUP_AFTER_DROPOFF',
      );
    }
    const nowMs = this.deps.clock.nowMs();
    const start = r.start ?? r.pending[0]?.location ?? { lat: 0, lng: 0 };
    const points = [start, ...r.pending.map((s) => s.location)];
    const matrix = await this.deps.router.matrix(points, points, r.vehicleType);
    const d: Durations = (from, to) => matrix.durations[from]![to]!;
    const index = new Map(r.pending.map((s, k) => [s.id, k + 1]));
    const before = timeline(
      nowMs,
      r.pending.map((_, k) => k + 1),
      r.pending,
      d,
    );
    const after = timeline(
      nowMs,
      next.map((s) => index.get(s.id)!),
      next,
      d,
    );
    const late = newlyLate(before, r.pending, after, next);
    if (late >= 0) {
      const s = next[late]!;
      throw conflict(
        `Stop ${s.id} (the ${kindName(s)} of job ${s.jobId}) would be reached at ${iso(after.arrivals[late]!)}, after its window ends at ${iso(s.windowEnd!)}`,
        'WINDOW_BROKEN',
      );
    }
    const saved = await this.deps.repo.saveOrder(
      this.deps.db,
      driverId,
      r.version,
      next.map((s) => s.id),
      true,
      this.deps.clock.now(),
    );
    if (saved === undefined) throw routeChanged((await this.deps.repo.route(this.deps.db, driverId)).version);
    return this.route(driverId);
  }

  /** The route's stops as stored, new stops placed (and that order stored, same version). */
  private async load(driverId: string): Promise<Loaded> {
    const { db, repo, clock } = this.deps;
    const driver = await repo.driver(db, driverId);
    if (!driver) throw driverNotFound();
    const [packages, stored] = await Promise.all([repo.activePackages(db, driverId), repo.route(db, driverId)]);
    const live = this.deps.live.index.get(driverId)?.position;
    const start =
      live ??
      (driver.last_lat !== null && driver.last_lng !== null ? { lat: driver.last_lat, lng: driver.last_lng } : null);
    const nowMs = clock.nowMs();
    const stops = routeStops(packages, stored.stopOrder, start, nowMs, driver.vehicle_type);
    if (stops.changed && stored.version > 0)
      await repo.saveOrder(
        db,
        driverId,
        stored.version,
        stops.pending.map((s) => s.id),
        false,
        clock.now(),
      );
    return {
      version: stored.version,
      vehicleType: driver.vehicle_type,
      start: start ? { lat: start.lat, lng: start.lng } : null,
      done: stops.done,
      pending: stops.pending,
    };
  }
}

const routeChanged = (version: number) =>
  conflict(`The route changed (it is at version ${version}): read it again`, 'ROUTE_CHANGED');

const toCapacity = (r: { vehicle_type: VehicleType; parcels: number; kg: number; updated_at: Date }) => ({
  vehicleType: r.vehicle_type,
  parcels: r.parcels,
  kg: Number(r.kg),
  updatedAt: new Date(r.updated_at).toISOString(),
});
