// Live tracking of packages and rides (contract section 14): tracking links, the public view behind
// them, and the snapshots the streams follow.
import { windowView } from '../scheduling/windows.js';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { json } from '../../db/json.js';
import type { StatusHistoryItemJson, StopJson } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { forbidden } from '../../shared/errors.js';
import { newerPosition, type DriverIndex } from '../matching/driver-index.js';
import { FINAL_PACKAGE_STATUSES } from '../packages/package-status.js';
import type { PackageRow, PackagesRepository } from '../packages/packages.repository.js';
import { canSee, packageNotFound } from '../packages/package-views.js';
import type { LocalesService } from '../locales/locales.service.js';
import type { RecipientOfSms } from '../packages/package-creation.js';
import type { RecipientNotifier } from '../packages/packages.service.js';
import type { SmsService } from '../sms/sms.service.js';
import { FINAL_RIDE_STATUSES } from '../rides/ride-status.js';
import type { RideRow, RidesRepository } from '../rides/rides.repository.js';
import { rideNotFound, RideService } from '../rides/rides.service.js';
import { decodeCursor, MAX_REPLAY, publicState, statusFrame, type JobSnapshot, type JobType } from './tracking-hub.js';
import { TrackingTokens } from './tracking-tokens.js';
import type { TrackingRepository } from './tracking.repository.js';

/** A link stops working this long after its package reached a final status. */
export const TRACKING_AFTER_FINAL_MS = 24 * 60 * 60_000;
const BACKFILL_BATCH = 500;
/** The account stream replays missed status events from at most this far back (else `resync`). */
export const ACCOUNT_REPLAY_WINDOW_MS = 60 * 60_000;

export interface TrackingServiceDeps {
  repo: TrackingRepository;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  sms: SmsService;
  locales: LocalesService;
  links: TrackingTokens;
  packagesRepo: PackagesRepository;
  ridesRepo: RidesRepository;
  driverIndex: DriverIndex;
  driverLocationTtlMs: number;
  /**
   * Section 24: a package on its driver's route, the route's ETA for its drop-off (router ETAs) and the
   * pending stops before it; undefined when the job is not on the route.
   */
  routeEta?: (driverId: string, jobId: string) => Promise<{ etaSeconds: number; stopsBefore: number } | undefined>;
}

export class TrackingService implements RecipientNotifier {
  constructor(private readonly deps: TrackingServiceDeps) {}

  /** The package a link points to, while it works: unknown, revoked and expired links are all undefined. */
  async resolve(token: string): Promise<JobSnapshot | undefined> {
    if (!TrackingTokens.wellFormed(token)) return undefined;
    const id = await this.deps.repo.getPackageIdByTokenHash(TrackingTokens.hash(token));
    if (!id) return undefined;
    const snap = await this.snapshot('PACKAGE', id);
    if (!snap || (snap.final && this.deps.clock.nowMs() - Date.parse(snap.updatedAt) >= TRACKING_AFTER_FINAL_MS))
      return undefined;
    return snap;
  }

  /**
   * The public view. A package whose driver holds several jobs (section 24, batching): its ETA is the
   * route's for its drop-off, with the stops before it (`stopsBefore`; null otherwise).
   */
  async publicView(snap: JobSnapshot) {
    const view: ReturnType<typeof publicState> & { stopsBefore?: number } = publicState(
      snap,
      this.deps.clock.nowMs(),
      this.deps.driverLocationTtlMs,
    );
    const onRoute = snap.driverId ? (this.deps.driverIndex.get(snap.driverId)?.activeJobs ?? 0) > 1 : false;
    if (onRoute && !snap.final && snap.jobType === 'PACKAGE' && this.deps.routeEta) {
      const route = await this.deps.routeEta(snap.driverId!, snap.jobId);
      if (route) {
        view.etaSeconds = route.etaSeconds;
        view.stopsBefore = route.stopsBefore;
      }
    }
    return view;
  }

  /** A job the caller may read (else 404, as for the object itself). */
  async visible(jobType: JobType, id: string, auth: AuthContext): Promise<JobSnapshot> {
    const snap = await this.snapshot(jobType, id);
    if (!snap || !snap.canSee(auth)) throw jobType === 'PACKAGE' ? packageNotFound() : rideNotFound();
    return snap;
  }

  /**
   * The account stream's missed status events after `lastEventId`, across every job the account may
   * read, as frames in the order they happened; undefined when they cannot be replayed (an unknown
   * id, older than the window, or more than MAX_REPLAY of them): the client then gets `resync`.
   * Events in the same millisecond as the last one seen may come twice (same id).
   */
  async missedStatuses(auth: AuthContext, lastEventId: string): Promise<string[] | undefined> {
    const cursor = decodeCursor(lastEventId);
    if (!cursor || cursor.seq < 1) return undefined;
    const { repo, clock } = this.deps;
    const seen = await repo.getHistoryItemAt(cursor.jobId, cursor.seq - 1);
    const since = seen ? Date.parse(seen) : NaN;
    if (!Number.isFinite(since) || clock.nowMs() - since > ACCOUNT_REPLAY_WINDOW_MS) return undefined;
    const rows = await repo.listStatusEventsSince({
      since: new Date(since),
      userId: auth.userId,
      all: auth.role === 'ADMIN',
      limit: MAX_REPLAY + 2,
    });
    const missed = rows.filter((r) => !(r.job_id === cursor.jobId && r.seq <= cursor.seq));
    if (missed.length > MAX_REPLAY) return undefined;
    return missed.map((r) =>
      statusFrame(r.job_type, r.job_id, r.seq, {
        status: r.status,
        at: new Date(r.at).toISOString(),
        ...(r.reason === null ? {} : { reason: r.reason }),
        ...(r.reason_code === null ? {} : { reasonCode: r.reason_code }),
      }),
    );
  }

  /** Replaces a package's link (its creator or an admin); the old one is 404 at once, its streams end. */
  async rotate(id: string, auth: AuthContext): Promise<{ trackingUrl: string }> {
    const row = await this.deps.packagesRepo.load(id);
    if (!row || !canSee(row, auth)) throw packageNotFound();
    if (auth.role !== 'ADMIN' && auth.userId !== row.created_by)
      throw forbidden('Only the creator or an admin may replace the tracking link', 'ACTION_NOT_ALLOWED');
    const nonce = randomBytes(16).toString('base64url');
    await this.deps.repo.setTrackingToken(id, nonce, this.deps.links.hashFor(id, nonce));
    this.deps.bus.publish('tracking.rotated', { packageId: id });
    return { trackingUrl: this.deps.links.url(id, nonce) };
  }

  /** SMS to the drop-off contact (notifyRecipient), in their language; a failed message never fails the request. */
  notify(moment: 'CREATED' | 'IN_TRANSIT', to: RecipientOfSms, trackingUrl: string): void {
    this.deps.locales
      .forRecipient(to)
      .then((locale) =>
        this.deps.sms.send(to.phone, { template: `tracking.${moment}`, locale, values: { url: trackingUrl } }),
      )
      .catch((err: Error) => this.deps.logger.warn({ err: err.message, moment }, 'tracking link SMS failed'));
  }

  /**
   * Packages written without a token hash (before migration 0012, or by an older version) get one,
   * one UPDATE per batch (one per row took 37 s for 100k packages, all of it right after the start
   * that followed an upgrade). A row whose link was rotated meanwhile keeps its new hash. Returns
   * how many it gave a hash.
   */
  async backfillTokens(): Promise<number> {
    let done = 0;
    for (;;) {
      const rows = await this.deps.repo.listPackagesWithoutTokenHash(BACKFILL_BATCH);
      if (rows.length > 0) {
        done += await this.deps.repo.setMissingTokenHashes(
          rows.map((r) => ({
            id: r.id,
            nonce: r.tracking_nonce,
            hash: this.deps.links.hashFor(r.id, r.tracking_nonce),
          })),
        );
      }
      if (rows.length < BACKFILL_BATCH) return done;
    }
  }

  snapshot = async (jobType: JobType, id: string): Promise<JobSnapshot | undefined> => {
    if (jobType === 'PACKAGE') {
      const row = await this.deps.packagesRepo.load(id);
      return row && this.packageSnapshot(row);
    }
    const row = await this.deps.ridesRepo.load(id);
    return row && this.rideSnapshot(row);
  };

  private packageSnapshot(row: PackageRow): JobSnapshot {
    return {
      ...this.common(row),
      jobType: 'PACKAGE',
      final: FINAL_PACKAGE_STATUSES.includes(row.status),
      pickup: json<StopJson>(row.pickup).location,
      dropoff: json<StopJson>(row.dropoff).location,
      promised: {
        pickupWindow: windowView(row.pickup_window_start, row.pickup_window_end),
        dropoffWindow: windowView(row.dropoff_window_start, row.dropoff_window_end),
        scheduledAt: null,
        timeZone: row.time_zone,
      },
      canSee: (auth) => canSee(row, auth),
    };
  }

  private rideSnapshot(row: RideRow): JobSnapshot {
    return {
      ...this.common(row),
      jobType: 'RIDE',
      final: FINAL_RIDE_STATUSES.includes(row.status),
      pickup: { lat: row.pickup_lat, lng: row.pickup_lng },
      dropoff: { lat: row.destination_lat, lng: row.destination_lng },
      promised: {
        pickupWindow: null,
        dropoffWindow: null,
        scheduledAt: row.scheduled_at ? row.scheduled_at.toISOString() : null,
        timeZone: row.time_zone,
      },
      canSee: (auth) => RideService.canSee(row, auth),
    };
  }

  private common(row: PackageRow | RideRow) {
    const hasDriver = row.driver_id !== null && row.driver_vehicle_type !== null;
    const stored = {
      last_lat: row.driver_lat,
      last_lng: row.driver_lng,
      last_heading: row.driver_heading,
      last_speed: row.driver_speed,
      last_location_at: row.driver_location_at,
    };
    return {
      jobId: row.id,
      status: row.status as string,
      history: json<StatusHistoryItemJson[]>(row.status_history),
      driverId: row.driver_id,
      driver: hasDriver
        ? {
            firstName: row.driver_first_name ?? '',
            vehicleType: row.driver_vehicle_type!,
            vehiclePlate: row.driver_vehicle_plate ?? '',
          }
        : null,
      position: hasDriver ? newerPosition(this.deps.driverIndex.get(row.driver_id!)?.position, stored) : null,
      updatedAt: row.updated_at.toISOString(),
    };
  }
}
