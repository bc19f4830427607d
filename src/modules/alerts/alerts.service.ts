// Alerts (contract section 23): the lateness monitor's turn (every SLA_INTERVAL on every instance; one
// instance at a time takes it, and the job-and-kind key makes a second raise impossible anyway), and
// what the routes do: the list each role sees, acknowledge and resolve with an audit row.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DB } from '../../db/database.js';
import type { AlertKind, AlertState } from '../../db/tables/alerts.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import { parseBound } from '../../shared/period-bound.js';
import type { AlertsConfig } from '../../config/alerts.js';
import type { ActiveJobRow, AlertRow, AlertsRepository, NewAlert, WatchChange } from './alerts.repository.js';
import { evaluate, slaOf, type MonitoredJob, type Sla, type SlaFacts, type Watch } from './sla.js';
import type { AlertResponse, AlertsQuery } from './alerts.schemas.js';

export interface AlertsServiceDeps {
  db: DB;
  repo: AlertsRepository;
  clock: Clock;
  bus: Bus;
  logger: Logger;
  config: AlertsConfig;
}

const alertNotFound = () => notFound('Alert not found', 'ALERT_NOT_FOUND');

export function toAlertResponse(row: AlertRow): AlertResponse {
  return {
    id: row.id,
    kind: row.kind,
    jobType: row.job_type,
    jobId: row.job_id,
    ...(row.driver_id ? { driverId: row.driver_id } : {}),
    raisedAt: row.raised_at.toISOString(),
    details: (typeof row.details === 'string' ? JSON.parse(row.details) : row.details) as Record<string, unknown>,
    state: row.state,
    ...(row.state_by ? { by: row.state_by } : {}),
    ...(row.state_at ? { at: row.state_at.toISOString() } : {}),
  };
}

const point = (lat: number | null, lng: number | null) => (lat === null || lng === null ? null : { lat, lng });

function monitored(r: ActiveJobRow): MonitoredJob {
  const watch: Watch | null =
    r.watch_driver_id && r.anchor_ms !== null
      ? {
          driverId: r.watch_driver_id,
          anchor: point(r.anchor_lat, r.anchor_lng),
          anchorAtMs: r.anchor_ms,
          arrivedAtMs: r.arrived_ms,
        }
      : null;
  return {
    jobType: r.job_type,
    jobId: r.job_id,
    status: r.status,
    vehicleType: r.vehicle_type,
    createdAtMs: r.created_ms,
    pickupWindowStartMs: r.pickup_start_ms,
    pickupWindowEndMs: r.pickup_end_ms,
    dropoffWindowEndMs: r.dropoff_end_ms,
    scheduledAtMs: r.scheduled_ms,
    durationSeconds: r.duration_seconds,
    pickup: { lat: r.pickup_lat, lng: r.pickup_lng },
    dropoff: { lat: r.dropoff_lat, lng: r.dropoff_lng },
    driverId: r.driver_id,
    driver: r.driver_id ? point(r.driver_lat, r.driver_lng) : null,
    businessId: r.business_id,
    driverCompanyId: r.driver_company_id,
    dispatchState: r.dispatch_state,
    enteredAtMs: r.entered_ms,
    offers: Number(r.offers),
    watch,
    // PGlite and pg both give text[] as an array; a literal ('{a,b}') is read too.
    raised: Array.isArray(r.raised) ? r.raised : r.raised ? r.raised.replace(/^\{|\}$/g, '').split(',') : [],
  };
}

export class AlertsService {
  constructor(private readonly deps: AlertsServiceDeps) {}

  /** The `sla` field of a job (null when it is not active), from columns its read already has. */
  sla(facts: SlaFacts): Sla | null {
    return slaOf(facts, this.deps.clock.nowMs(), this.deps.config);
  }

  /**
   * One turn of the monitor: one read of every active job, the rules in memory, then the new alerts,
   * their webhooks and the drivers' memory written in the same transaction. Returns the alerts raised
   * (none when another instance holds the turn).
   */
  async monitor(): Promise<AlertRow[]> {
    const { db, repo, clock, config } = this.deps;
    const nowMs = clock.nowMs();
    const now = new Date(nowMs);
    const raised = await db.transaction().execute(async (trx) => {
      if (!(await repo.tryLock(trx))) return { inserted: [] as AlertRow[], hooks: 0 };
      const rows = await repo.activeJobs(trx);
      const alerts: NewAlert[] = [];
      const watches: WatchChange[] = [];
      for (const row of rows) {
        const job = monitored(row);
        const { raise, watch } = evaluate(job, nowMs, config);
        for (const r of raise)
          alerts.push({
            id: randomUUID(),
            kind: r.kind,
            jobType: job.jobType,
            jobId: job.jobId,
            driverId: job.driverId,
            businessId: job.businessId,
            details: JSON.stringify(r.details),
          });
        if (watch) {
          if (watch !== job.watch)
            watches.push({
              jobType: job.jobType,
              jobId: job.jobId,
              driverId: watch.driverId,
              anchorLat: watch.anchor?.lat ?? null,
              anchorLng: watch.anchor?.lng ?? null,
              anchorAt: new Date(watch.anchorAtMs).toISOString(),
              arrivedAt: watch.arrivedAtMs === null ? null : new Date(watch.arrivedAtMs).toISOString(),
            });
        }
      }
      await repo.saveWatches(trx, watches);
      await repo.dropWatches(trx);
      const inserted = await repo.insertAlerts(trx, alerts, now);
      const forPackages = inserted.filter((a) => a.job_type === 'PACKAGE' && a.business_id !== null);
      const statuses = await repo.packageStatuses(
        trx,
        forPackages.map((a) => a.job_id),
      );
      const hooks = await repo.insertWebhooks(
        trx,
        forPackages.map((a) => ({
          businessId: a.business_id!,
          packageId: a.job_id,
          payload: alertWebhookPayload(a, statuses.get(a.job_id) ?? 'PENDING'),
        })),
        now,
      );
      return { inserted, hooks };
    });
    if (raised.hooks > 0) this.deps.bus.publish('webhooks.wake', {});
    for (const a of raised.inserted) {
      this.deps.logger.info({ alertId: a.id, kind: a.kind, jobType: a.job_type, jobId: a.job_id }, 'alert raised');
      this.announce(a);
    }
    return raised.inserted;
  }

  private announce(row: AlertRow): void {
    this.deps.bus.publish('alert.changed', {
      alert: toAlertResponse(row) as unknown as Record<string, unknown>,
      businessId: row.business_id,
      driverCompanyId: row.driver_company_id,
    });
  }

  async list(auth: AuthContext, query: AlertsQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.list(auth, {
      state: query.state,
      kind: query.kind as AlertKind | undefined,
      from: query.from !== undefined ? parseBound('from', query.from) : undefined,
      to: query.to !== undefined ? parseBound('to', query.to) : undefined,
      cursor: decodeCursor(query.cursor),
      limit,
    });
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.raised_at })),
      limit,
      toAlertResponse,
    );
  }

  acknowledge(auth: AuthContext, id: string): Promise<AlertResponse> {
    return this.move(auth, id, 'ACKNOWLEDGE');
  }

  resolve(auth: AuthContext, id: string): Promise<AlertResponse> {
    return this.move(auth, id, 'RESOLVE');
  }

  /**
   * OPEN → ACKNOWLEDGED, OPEN or ACKNOWLEDGED → RESOLVED, each with its audit row in the change's
   * transaction. Acknowledging an acknowledged alert changes nothing (200); a resolved one is 409.
   */
  private async move(auth: AuthContext, id: string, action: 'ACKNOWLEDGE' | 'RESOLVE'): Promise<AlertResponse> {
    const { db, repo, clock } = this.deps;
    const to: AlertState = action === 'ACKNOWLEDGE' ? 'ACKNOWLEDGED' : 'RESOLVED';
    const current = await repo.getVisible(auth, id);
    if (!current) throw alertNotFound();
    if (current.state === 'RESOLVED') throw conflict('Alert is already resolved', 'ALERT_RESOLVED');
    if (current.state === to) return toAlertResponse(current);
    const at = clock.now();
    const moved = await db.transaction().execute(async (trx) => {
      if (!(await repo.setState(trx, { id, from: [current.state], to, by: auth.userId, at }))) return false;
      await repo.audit(trx, {
        id: randomUUID(),
        alertId: id,
        action,
        from: current.state,
        to,
        actorId: auth.userId,
        actorRole: auth.role,
        at,
      });
      return true;
    });
    // Changed by someone else meanwhile: decided again on its new state (states only move forward).
    if (!moved) return this.move(auth, id, action);
    const row = { ...current, state: to, state_by: auth.userId, state_at: at };
    this.announce(row);
    return toAlertResponse(row);
  }
}

/** Who follows an alert on the account stream: admins, the package's business, the driver's company. */
export function mayFollowAlert(
  e: { businessId: string | null; driverCompanyId: string | null },
  auth: AuthContext,
): boolean {
  if (auth.role === 'ADMIN') return true;
  if (auth.role === 'BUSINESS') return e.businessId === auth.userId;
  return auth.role === 'COMPANY' && e.driverCompanyId === auth.userId;
}

/** Section 23's body: section 11's four fields and the alert (the one stated exception to the four). */
export function alertWebhookPayload(
  alert: Pick<AlertRow, 'id' | 'kind' | 'job_id' | 'raised_at'>,
  status: string,
): string {
  return JSON.stringify({
    event: 'alert.raised',
    delivery_id: alert.job_id,
    status,
    timestamp: alert.raised_at.toISOString(),
    alert: { id: alert.id, kind: alert.kind },
  });
}
