// Routes in SQL (contract section 24): a driver's maxActiveJobs, vehicle capacities, a route's active
// packages and its stored order and version (driver_routes; the version is also bumped by the trigger
// of migration 0030 whenever one of the driver's packages changes status or driver).
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { VehicleType } from '../../db/schema.js';
import { PACKAGE_KG } from '../jobs/driver-claims.repository.js';

export const ACTIVE_PACKAGE = ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'] as const;

/** What a route's stops are built from: a package's stops, windows and load. */
const STOP_COLUMNS = [
  'p.id',
  'p.status',
  'p.pickup',
  'p.dropoff',
  'p.pickup_window_start',
  'p.pickup_window_end',
  'p.dropoff_window_start',
  'p.dropoff_window_end',
  PACKAGE_KG.as('kg'),
] as const;

export class RoutesRepository {
  constructor(private readonly db: DB) {}

  /** Sets the driver's maximum; with companyId, only a driver of that company. Whether a driver matched. */
  async setMaxActiveJobs(driverId: string, max: number, companyId: string | null, now: Date): Promise<boolean> {
    let q = this.db
      .updateTable('driver_profiles')
      .set({ max_active_jobs: max, updated_at: now })
      .where('user_id', '=', driverId);
    if (companyId !== null) q = q.where('company_id', '=', companyId);
    const result = await q.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  listCapacities() {
    return this.db
      .selectFrom('vehicle_capacities')
      .select(['vehicle_type', 'parcels', 'kg', 'updated_at'])
      .orderBy('vehicle_type')
      .execute();
  }

  capacity(db: Executor, vehicleType: VehicleType) {
    return db
      .selectFrom('vehicle_capacities')
      .select(['vehicle_type', 'parcels', 'kg', 'updated_at'])
      .where('vehicle_type', '=', vehicleType)
      .executeTakeFirst();
  }

  putCapacity(vehicleType: VehicleType, parcels: number, kg: number, now: Date) {
    return this.db
      .insertInto('vehicle_capacities')
      .values({ vehicle_type: vehicleType, parcels, kg, updated_at: now })
      .onConflict((oc) => oc.column('vehicle_type').doUpdateSet({ parcels, kg, updated_at: now }))
      .returning(['vehicle_type', 'parcels', 'kg', 'updated_at'])
      .executeTakeFirstOrThrow();
  }

  /** The driver's profile fields a route needs. */
  driver(db: Executor, driverId: string) {
    return db
      .selectFrom('driver_profiles')
      .select([
        'user_id',
        'company_id',
        'vehicle_type',
        'max_active_jobs',
        'active_jobs',
        'active_job_type',
        'last_lat',
        'last_lng',
        'last_location_at',
      ])
      .where('user_id', '=', driverId)
      .executeTakeFirst();
  }

  /** The driver's active packages, oldest assignment first, with their load (section 24). */
  activePackages(db: Executor, driverId: string) {
    return db
      .selectFrom('packages as p')
      .select([...STOP_COLUMNS, 'p.updated_at', 'p.created_at'])
      .where('p.driver_id', '=', driverId)
      .where('p.status', 'in', ACTIVE_PACKAGE)
      .orderBy('p.created_at')
      .orderBy('p.id')
      .execute();
  }

  /** The route's stored row (none before the driver's first job: version 0, no order). */
  async route(db: Executor, driverId: string): Promise<{ version: number; stopOrder: string[] }> {
    const row = await db
      .selectFrom('driver_routes')
      .select(['version', 'stop_order'])
      .where('driver_id', '=', driverId)
      .executeTakeFirst();
    if (!row) return { version: 0, stopOrder: [] };
    const order = typeof row.stop_order === 'string' ? (JSON.parse(row.stop_order) as string[]) : row.stop_order;
    return { version: row.version, stopOrder: order };
  }

  /**
   * Stores an order when the version is still `version`: `bump` for the driver's reorder (a change of
   * the route), not for the order the service completes for stops new since the last one. The new
   * version, or undefined when the route changed meanwhile.
   */
  async saveOrder(
    db: Executor,
    driverId: string,
    version: number,
    stopOrder: string[],
    bump: boolean,
    now: Date,
  ): Promise<number | undefined> {
    const order = JSON.stringify(stopOrder);
    if (version === 0) {
      // No row yet (no job ever changed): created; a concurrent creation wins and this one is stale.
      const row = await db
        .insertInto('driver_routes')
        .values({ driver_id: driverId, version: bump ? 1 : 0, stop_order: sql`${order}::jsonb`, updated_at: now })
        .onConflict((oc) => oc.column('driver_id').doNothing())
        .returning('version')
        .executeTakeFirst();
      return row?.version;
    }
    const row = await db
      .updateTable('driver_routes')
      .set((eb) => ({
        stop_order: sql`${order}::jsonb`,
        version: bump ? eb('version', '+', 1) : eb.ref('version'),
        updated_at: now,
      }))
      .where('driver_id', '=', driverId)
      .where('version', '=', version)
      .returning('version')
      .executeTakeFirst();
    return row?.version;
  }

  /** The package batching evaluates: its stops, windows and weight. */
  packageForBatch(db: Executor, id: string) {
    return db
      .selectFrom('packages as p')
      .select([
        'p.id',
        'p.pickup',
        'p.dropoff',
        'p.pickup_window_start',
        'p.pickup_window_end',
        'p.dropoff_window_start',
        'p.dropoff_window_end',
        PACKAGE_KG.as('kg'),
      ])
      .where('p.id', '=', id)
      .executeTakeFirst();
  }

  /** The routes of several drivers at once (dispatch's candidates on a route): profile and capacity, active packages, stored order. */
  async routesOf(db: Executor, driverIds: readonly string[]) {
    // The caller passes at least one id (`in ()` is not SQL).
    const [drivers, packages, orders] = await Promise.all([
      db
        .selectFrom('driver_profiles as d')
        .innerJoin('vehicle_capacities as c', 'c.vehicle_type', 'd.vehicle_type')
        .select([
          'd.user_id',
          'd.vehicle_type',
          'd.active_jobs',
          'd.max_active_jobs',
          'c.parcels as capacity_parcels',
          'c.kg as capacity_kg',
        ])
        .where('d.user_id', 'in', driverIds)
        .execute(),
      db
        .selectFrom('packages as p')
        .select(['p.driver_id', ...STOP_COLUMNS])
        .where('p.driver_id', 'in', driverIds)
        .where('p.status', 'in', ACTIVE_PACKAGE)
        .orderBy('p.created_at')
        .orderBy('p.id')
        .execute(),
      db.selectFrom('driver_routes').select(['driver_id', 'stop_order']).where('driver_id', 'in', driverIds).execute(),
    ]);
    const out = new Map<string, { driver: (typeof drivers)[number]; packages: typeof packages; stopOrder: string[] }>();
    for (const d of drivers) out.set(d.user_id, { driver: d, packages: [], stopOrder: [] });
    for (const p of packages) out.get(p.driver_id!)?.packages.push(p);
    for (const o of orders) {
      const r = out.get(o.driver_id);
      if (r) r.stopOrder = typeof o.stop_order === 'string' ? (JSON.parse(o.stop_order) as string[]) : o.stop_order;
    }
    return out;
  }
}
