// Booking ahead (contract section 22) for the simulator: the instance's clock (CLOCK_RATE), the windows
// of the jobs it books ahead, and the run's recurring jobs, whose occurrences it walks like its own jobs.
import { pointIn } from './geo.js';
import type { JobRecord, LatLng, VehicleType, Window } from './model.js';
import type { SimOptions } from './options.js';

const MINUTE = 60_000;
/** A scheduled ride's driver is on time when at the pickup by scheduledAt plus this (section 23's driver.not_at_pickup). */
export const RIDE_PICKUP_GRACE_MS = 5 * MINUTE;

/**
 * The instance's time. With CLOCK_RATE=R it runs R times faster than real time from CLOCK_ANCHOR; when
 * the simulator is not given the anchor it learns the instance's time from the first `createdAt` it is
 * answered (to within half that request's round trip, times R) and counts on from there at R.
 */
export class ServerClock {
  private base: { server: number; real: number; uncertainty: number } | undefined;
  private readonly anchored: boolean;
  private readonly samples: { server: number; real: number }[] = [];

  constructor(
    readonly rate: number,
    anchorMs?: number,
  ) {
    if (anchorMs !== undefined) this.base = { server: anchorMs, real: anchorMs, uncertainty: 0 };
    this.anchored = anchorMs !== undefined;
  }

  /** Known: windows can be booked in the instance's time. */
  get known(): boolean {
    return this.base !== undefined;
  }

  /** An instant the instance stamped (an object's createdAt) in the answer to a request sent at realSent. */
  observe(serverIso: string | undefined, realSent: number, realReceived: number): void {
    const server = serverIso ? Date.parse(serverIso) : NaN;
    if (!Number.isFinite(server)) return;
    const real = (realSent + realReceived) / 2;
    const uncertainty = ((realReceived - realSent) / 2) * this.rate;
    // Without the anchor, the quickest answer so far tells the instance's time best.
    if (!this.anchored && (!this.base || uncertainty < this.base.uncertainty))
      this.base = { server, real, uncertainty };
    if (this.samples.length < 10_000) this.samples.push({ server, real });
  }

  nowMs(real = Date.now()): number {
    return this.base ? this.base.server + (real - this.base.real) * this.rate : real;
  }

  /** Real milliseconds until the instance's clock reads serverMs (plus what the estimate may be off by). */
  realMsUntil(serverMs: number): number {
    return (serverMs + (this.base?.uncertainty ?? 0) - this.nowMs()) / this.rate;
  }

  /** The rate the instance's answers show (the slope of their createdAt over real time), over 10 s or more. */
  observedRate(): number | null {
    const n = this.samples.length;
    if (n < 3 || this.samples[n - 1].real - this.samples[0].real < 10_000) return null;
    const mean = (f: (x: { server: number; real: number }) => number) => this.samples.reduce((a, x) => a + f(x), 0) / n;
    const mr = mean((x) => x.real);
    const ms = mean((x) => x.server);
    const cov = mean((x) => (x.real - mr) * (x.server - ms));
    const variance = mean((x) => (x.real - mr) ** 2);
    return Math.round((cov / variance) * 10) / 10;
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
export const windowBody = (w: Window) => ({ start: iso(w.start), end: iso(w.end) });

/**
 * A job booked ahead: a package's pickup window (an hour, starting on a 5-minute mark from 1 minute to
 * `aheadMs` ahead) and drop-off window (from the same start to 2 hours after the pickup window); a
 * ride's scheduledAt from 35 minutes (RIDE_SCHEDULE_MIN_AHEAD is 30m by default) to 35 minutes + `aheadMs`.
 */
export function bookAhead(
  random: () => number,
  nowMs: number,
  aheadMs: number,
  isRide: boolean,
): Pick<JobRecord, 'pickupWindow' | 'dropoffWindow' | 'scheduledAt'> {
  const slot = 5 * MINUTE;
  if (isRide) return { scheduledAt: Math.ceil((nowMs + 35 * MINUTE + random() * aheadMs) / slot) * slot };
  const start = Math.ceil((nowMs + MINUTE + random() * aheadMs) / slot) * slot;
  return {
    pickupWindow: { start, end: start + 60 * MINUTE },
    dropoffWindow: { start, end: start + 180 * MINUTE },
  };
}

/** The instant (the instance's time) from which the driver does the pickup step: never before the window. */
export function pickupFrom(job: JobRecord): number | undefined {
  if (job.type === 'PACKAGE' && job.pickupWindow)
    return job.lateOnPurpose ? job.pickupWindow.end + MINUTE : job.pickupWindow.start;
  if (job.type === 'RIDE' && job.scheduledAt !== undefined)
    return job.lateOnPurpose ? job.scheduledAt + RIDE_PICKUP_GRACE_MS + MINUTE : job.scheduledAt;
  return undefined;
}

interface Occurrence {
  at: string;
  state: string;
  packageId: string | null;
  pickupWindow?: { start: string; end: string } | null;
  dropoffWindow?: { start: string; end: string } | null;
}

/**
 * --recurring N: N recurring jobs of the business (`FREQ=HOURLY` at a minute of the seed's choosing, an
 * hour's pickup window, three hours to deliver), created through `POST /recurring-jobs` at the start and
 * deleted at the end (which cancels their PENDING packages still to come). Their occurrences' packages
 * are read from `GET /recurring-jobs/:id` (the next 10) and walked like the run's own jobs.
 */
export class RecurringJobs {
  readonly ids: string[] = [];

  constructor(
    /** A call as the business. */
    private readonly call: <T>(method: string, path: string, body?: unknown) => Promise<T>,
    private readonly opts: SimOptions,
    private readonly countryId: string,
  ) {}

  async create(random: () => number, clock: ServerClock): Promise<void> {
    const vehicles: VehicleType[] = ['BIKE', 'CAR', 'VAN'];
    for (let i = 0; i < this.opts.recurring; i++) {
      const stop = (at: LatLng, name: string) => ({
        location: at,
        address: `${name} street`,
        contactName: name,
        contactPhone: '+254722000111',
      });
      const minute = Math.floor(random() * 12) * 5;
      const sent = Date.now();
      const created = await this.call<{ id: string; createdAt?: string }>('POST', '/recurring-jobs', {
        rule: `FREQ=HOURLY;BYMINUTE=${minute}`,
        template: {
          pickup: stop(pointIn(random, this.opts.centre, this.opts.radiusKm), 'Sender'),
          dropoff: stop(pointIn(random, this.opts.centre, this.opts.radiusKm), 'Recipient'),
          vehicleType: vehicles[i % vehicles.length],
          countryId: this.countryId,
          parcel: { description: 'Simulated recurring parcel', size: 'SMALL' },
          reference: `sim-recurring-${i}`,
          pickupWindow: { startOffset: 'PT0S', endOffset: 'PT1H' },
          dropoffWindow: { startOffset: 'PT0S', endOffset: 'PT3H' },
        },
      });
      clock.observe(created.createdAt, sent, Date.now());
      this.ids.push(created.id);
    }
  }

  /** The occurrences made so far whose packages the run does not know yet, as job records. */
  async newJobs(known: (id: string) => boolean): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const id of this.ids) {
      const job = await this.call<{ template: RecurringTemplate; nextOccurrences: Occurrence[] }>(
        'GET',
        `/recurring-jobs/${id}`,
        undefined,
      );
      for (const o of job.nextOccurrences) {
        if (!o.packageId || o.state !== 'CREATED' || known(o.packageId)) continue;
        const window = (w: Occurrence['pickupWindow']) =>
          w ? { start: Date.parse(w.start), end: Date.parse(w.end) } : undefined;
        found.push({
          type: 'PACKAGE',
          id: o.packageId,
          createdAt: Date.now(),
          pickup: job.template.pickup.location,
          dropoff: job.template.dropoff.location,
          vehicleType: job.template.vehicleType,
          pickupWindow: window(o.pickupWindow),
          dropoffWindow: window(o.dropoffWindow),
          recurring: true,
        });
      }
    }
    return found;
  }

  async deleteAll(): Promise<void> {
    for (const id of this.ids) await this.call('DELETE', `/recurring-jobs/${id}`);
  }
}

interface RecurringTemplate {
  pickup: { location: LatLng };
  dropoff: { location: LatLng };
  vehicleType: VehicleType;
}
