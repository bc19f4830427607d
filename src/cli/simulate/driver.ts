// One simulated driver: online over the WebSocket, answering offers, driving its job to the end.
import WebSocket from 'ws';
import type { Account, Session } from './accounts.js';
import { ApiError, sleep } from './client.js';
import { pointIn, SPEED_MPS, step } from './geo.js';
import type { JobRecord, JobType, LatLng, Money, VehicleType } from './model.js';
import type { Simulation } from './simulation.js';

type Phase = 'IDLE' | 'TO_PICKUP' | 'AT_PICKUP' | 'TO_DROPOFF';

export class SimDriver {
  private session!: Session;
  private socket: WebSocket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private position: LatLng;
  private wander: LatLng;
  private job: JobRecord | undefined;
  private phase: Phase = 'IDLE';
  private busy = false;
  private readonly lapsedOffers = new Set<string>();
  private idleTicks = 0;
  /** A ride's arrival is sent (AT_PICKUP). */
  private arrived = false;
  online = false;

  constructor(
    private readonly sim: Simulation,
    readonly index: number,
    private readonly vehicleType: VehicleType,
    start: LatLng,
    private readonly random: () => number,
  ) {
    this.position = start;
    this.wander = start;
  }

  async start(account: Account): Promise<void> {
    this.session = await this.sim.accounts.ensure(account);
    await this.call('POST', '/drivers/me/availability', { status: 'ONLINE' });
    await this.call('POST', '/drivers/me/location', this.position);
    await this.adoptActiveJob();
    await this.connect();
    this.online = true;
    this.timer = setInterval(() => void this.tick(), this.tickMs);
    this.timer.unref();
  }

  get userId(): string {
    return this.session.userId;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.socket?.close();
    this.online = false;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    try {
      return await this.sim.api.call<T>(method, path, body, this.session.accessToken);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && err.body?.code === 'TOKEN_EXPIRED') {
        await this.sim.accounts.refresh(this.session);
        return this.sim.api.call<T>(method, path, body, this.session.accessToken);
      }
      throw err;
    }
  }

  private connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.sim.api.wsUrl(this.session.accessToken));
      socket.once('open', () => {
        this.socket = socket;
        resolve();
      });
      socket.once('error', reject);
      socket.on('message', (data) => {
        let message: Record<string, unknown>;
        try {
          message = JSON.parse(String(data)) as Record<string, unknown>;
        } catch {
          return;
        }
        void this.onMessage(message).catch((err) => this.sim.note(err));
      });
      socket.on('close', () => {
        if (this.socket !== socket || this.sim.stopped) return;
        // Reconnect (a new access token if the old one expired).
        this.socket = undefined;
        void (async () => {
          await sleep(1000);
          if (this.sim.stopped) return;
          await this.sim.accounts.refresh(this.session).catch(() => undefined);
          await this.connect().catch((err) => this.sim.note(err));
        })();
      });
    });
  }

  private async onMessage(message: Record<string, unknown>): Promise<void> {
    if (message.type === 'offer') {
      const offer = message.offer as { id: string; jobId: string; jobType: JobType };
      this.sim.offers.received++;
      this.sim.offersSeen = true;
      if (this.busy || this.job) return; // let it lapse
      await this.sim.api.pause(1000 + this.random() * 4000);
      // A job this run does not know (another run's): declined, never taken and left.
      const known = (await this.sim.resolve(offer.jobId)) !== undefined;
      if (!known || this.sim.chance(this.sim.opts.decline)) {
        try {
          await this.call('POST', `/offers/${offer.id}/decline`);
          this.sim.offers.declined++;
        } catch (err) {
          this.offerFailed(offer.id, err);
        }
        return;
      }
      this.busy = true;
      try {
        await this.call('POST', `/offers/${offer.id}/accept`);
        this.sim.offers.accepted++;
        this.take(offer.jobId);
      } catch (err) {
        this.offerFailed(offer.id, err);
      } finally {
        this.busy = false;
      }
    } else if (message.type === 'offer.withdrawn') {
      // The server says how the offer closed: LAPSED (nobody answered in time) or WITHDRAWN (taken otherwise).
      if (message.state === 'LAPSED') this.lapsed(message.offerId as string);
      else this.sim.offers.withdrawn++;
    } else if (message.type === 'job.nearby') {
      if (this.busy || this.job) return;
      const jobType = message.jobType as JobType;
      const jobId = message.jobId as string;
      this.busy = true;
      this.sim.nearby.tried++;
      try {
        await this.sim.api.pause(500 + this.random() * 3000);
        await this.call('POST', `/${jobType === 'PACKAGE' ? 'packages' : 'rides'}/${jobId}/accept`);
        this.sim.nearby.won++;
        this.take(jobId);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409)) throw err; // lost the race: normal
      } finally {
        this.busy = false;
      }
    } else if (message.type === 'job.updated' && this.job && message.jobId === this.job.id) {
      // Cancelled or failed by someone else.
      if (message.status === 'CANCELLED' || message.status === 'FAILED') this.finish(message.status);
    }
  }

  private async lookNearby(): Promise<void> {
    const { items } = await this.call<{ items: { jobType: JobType; id: string }[] }>(
      'GET',
      '/drivers/me/jobs/nearby?limit=10',
    );
    const mine = items.find((item) => this.sim.job(item.id));
    if (!mine) return;
    this.sim.nearby.tried++;
    try {
      await this.call('POST', `/${mine.jobType === 'PACKAGE' ? 'packages' : 'rides'}/${mine.id}/accept`);
      this.sim.nearby.won++;
      this.take(mine.id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    }
  }

  /** A job left to this driver by an earlier run is walked to its end first. */
  private async adoptActiveJob(): Promise<void> {
    type Active = {
      jobType: JobType;
      id: string;
      status: string;
      vehicleType: VehicleType;
      pickupLocation: LatLng;
      destinationLocation: LatLng;
    };
    const { active } = await this.call<{ active: Active | null }>('GET', '/drivers/me/jobs');
    if (!active) return;
    const job: JobRecord = {
      type: active.jobType,
      id: active.id,
      createdAt: Date.now(),
      pickup: active.pickupLocation,
      dropoff: active.destinationLocation,
      vehicleType: active.vehicleType,
      adopted: true,
    };
    this.job = job;
    this.phase = ['ASSIGNED', 'ACCEPTED'].includes(active.status) ? 'TO_PICKUP' : 'TO_DROPOFF';
    this.arrived = false;
    if (active.status === 'PICKED_UP') await this.call('POST', `/packages/${active.id}/start`);
    if (active.status === 'ARRIVED') await this.call('POST', `/rides/${active.id}/start`);
  }

  private offerFailed(offerId: string, err: unknown): void {
    if (err instanceof ApiError && err.status === 409) {
      if (/LAPSED/i.test(`${err.body?.code}`)) this.lapsed(offerId);
      else if (/WITHDRAWN/i.test(`${err.body?.code}`)) return; // counted when the offer.withdrawn message came
      return;
    }
    this.sim.note(err);
  }

  /** An offer that lapsed: told by the socket, by a 409 answer, or both; counted once. */
  private lapsed(offerId: string): void {
    if (this.lapsedOffers.has(offerId)) return;
    this.lapsedOffers.add(offerId);
    this.sim.offers.lapsed++;
  }

  private take(jobId: string): void {
    const job = this.sim.job(jobId);
    if (!job) return; // a job of another run: leave it
    this.sim.assigned(job);
    this.job = job;
    this.phase = 'TO_PICKUP';
    this.arrived = false;
  }

  private finish(outcome: 'COMPLETED' | 'FAILED' | 'CANCELLED'): void {
    if (this.job) this.job.outcome = outcome;
    this.job = undefined;
    this.phase = 'IDLE';
    this.arrived = false;
  }

  /** A position every 3 s of simulated time, but no more than one a second of real time. */
  private get tickMs(): number {
    return Math.min(3000, Math.max(1000, 3000 / this.sim.opts.speed));
  }

  /** Each tick: move (the vehicle's speed × simulated time), report, act on arrival. */
  private async tick(): Promise<void> {
    if (this.busy || this.sim.stopped) return;
    this.busy = true;
    try {
      const meters = SPEED_MPS[this.vehicleType] * (this.tickMs / 1000) * this.sim.opts.speed;
      if (this.phase === 'IDLE') {
        const moved = step(this.position, this.wander, meters / 4);
        this.position = moved.at;
        if (moved.arrived) this.wander = pointIn(this.random, this.sim.opts.centre, this.sim.opts.radiusKm);
        // A driver app looks at the nearby jobs now and then: jobs created while every driver was busy.
        // Once offers arrive the instance dispatches: drivers wait for theirs instead of racing for jobs.
        if (++this.idleTicks % 5 === 0 && this.sim.opts.lookNearby && !this.sim.offersSeen) await this.lookNearby();
      } else if (this.job && this.phase === 'AT_PICKUP') await this.atPickup(this.job);
      else if (this.job) {
        const target = this.phase === 'TO_PICKUP' ? this.job.pickup : this.job.dropoff;
        const moved = step(this.position, target, meters);
        this.position = moved.at;
        if (moved.arrived) await this.arrive(this.job);
      }
      if (this.socket?.readyState === WebSocket.OPEN)
        this.socket.send(JSON.stringify({ type: 'location', ...this.position }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && this.job) {
        // The job moved on without us (cancelled by its creator): drop it.
        this.finish('CANCELLED');
      } else this.sim.note(err);
    } finally {
      this.busy = false;
    }
  }

  /**
   * At the pickup: a job booked ahead waits there for its window (a ride is marked arrived at once and
   * waits for scheduledAt to start); one made late on purpose (--late-share) waits until the window has
   * ended, a ride before even saying it arrived. Positions keep being sent while it waits.
   */
  private async atPickup(job: JobRecord): Promise<void> {
    const base = job.type === 'PACKAGE' ? `/packages/${job.id}` : `/rides/${job.id}`;
    const wait = this.sim.realMsUntilPickup(job);
    if (job.type === 'RIDE' && !this.arrived) {
      if (job.lateOnPurpose && wait > 0) return;
      await this.call('POST', `${base}/arrive`);
      this.arrived = true;
    }
    if (wait > 0) return;
    if (job.type === 'PACKAGE') await this.call('POST', `${base}/pickup`);
    await this.sim.api.pause(30_000);
    await this.call('POST', `${base}/start`);
    this.phase = 'TO_DROPOFF';
  }

  private async arrive(job: JobRecord): Promise<void> {
    const base = job.type === 'PACKAGE' ? `/packages/${job.id}` : `/rides/${job.id}`;
    if (this.phase === 'TO_PICKUP') {
      this.phase = 'AT_PICKUP';
      await this.atPickup(job);
      return;
    }
    if (job.type === 'PACKAGE' && (this.sim.chance(0.03) || job.adopted)) {
      await this.call('POST', `${base}/fail`, { reason: 'Recipient not available (simulated)' });
      this.finish('FAILED');
      return;
    }
    if (job.type === 'PACKAGE') {
      // The driver confirms the cash on delivery it collected (section 21).
      const cash = job.cashOnDelivery !== undefined ? { cashCollected: job.cashOnDelivery } : {};
      await this.call('POST', `${base}/deliver`, {
        ...(job.deliveryCode ? { deliveryCode: job.deliveryCode } : {}),
        recipientName: 'Recipient',
        ...cash,
      });
    } else job.fare = (await this.call<{ fare: Money | null }>('POST', `${base}/complete`)).fare ?? undefined;
    this.finish('COMPLETED');
  }
}
