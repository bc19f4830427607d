// The run: the simulated business, customer and fleet, the demand loop and the tally for the report.
import { seededAccount, type Accounts, type Session } from './accounts.js';
import { ApiError, sleep, type Api } from './client.js';
import { SimDriver } from './driver.js';
import { DEFAULT_MAX_PLAUSIBLE_SPEED_KMH } from '../../config/jobs.js';
import { pointIn, rng, SPEED_MPS, VEHICLES } from './geo.js';
import type { JobRecord, Money } from './model.js';
import type { SimOptions } from './options.js';
import { assess, readAlerts, readFacts } from './punctuality.js';
import { countJobs, summarize, type Summary, type TimeReport } from './report.js';
import { bookAhead, pickupFrom, RecurringJobs, ServerClock, windowBody } from './schedule.js';

export class Simulation {
  private readonly random: () => number;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly drivers: SimDriver[] = [];
  readonly offers = { received: 0, accepted: 0, declined: 0, lapsed: 0, withdrawn: 0 };
  readonly nearby = { tried: 0, won: 0 };
  quoted = 0;
  offersSeen = false;
  readonly errors: string[] = [];
  private stopping = false;
  private readonly started = Date.now();
  /** The instance's time (CLOCK_RATE): jobs booked ahead are booked in it. */
  readonly clock: ServerClock;
  private recurring: RecurringJobs | undefined;
  private time: TimeReport;

  constructor(
    readonly api: Api,
    readonly accounts: Accounts,
    readonly opts: SimOptions,
    readonly countryId: string,
  ) {
    this.random = rng(opts.seed);
    this.clock = new ServerClock(opts.clockRate, opts.clockAnchorMs);
    this.time = { scheduled: null, late: null, alerts: null, clock: { rate: opts.clockRate, observedRate: null } };
  }

  get stopped(): boolean {
    return this.stopping;
  }

  note(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (this.errors.length < 50) this.errors.push(message);
  }

  job(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  async run(): Promise<Summary> {
    const { opts } = this;
    // Vehicles move --speed times faster in real time, and the server checks positions in real time.
    const fastestKmh = Math.max(...Object.values(SPEED_MPS)) * 3.6 * opts.speed;
    if (fastestKmh > DEFAULT_MAX_PLAUSIBLE_SPEED_KMH) {
      process.stderr.write(
        `note: at --speed ${opts.speed} vehicles move up to ${Math.round(fastestKmh)} km/h in real time; a server with the default MAX_PLAUSIBLE_SPEED (${DEFAULT_MAX_PLAUSIBLE_SPEED_KMH} km/h) ignores their positions: start it with MAX_PLAUSIBLE_SPEED=off (docs/simulator.md)\n`,
      );
    }
    const prefix = `sim${opts.seed}`;
    // Accounts are deterministic per seed, so a second run reuses them.
    const business = await this.accounts.ensure(
      seededAccount(opts.seed, 'BUSINESS', {
        businessName: `Simulated Parcels ${opts.seed}`,
        businessAddress: 'Simulated Road 1',
      }),
    );
    if (opts.webhook) await this.ensureWebhook(business, opts.webhook);
    const customer = await this.accounts.ensure(seededAccount(opts.seed, 'CUSTOMER', {}));
    if (opts.recurring > 0) {
      this.recurring = new RecurringJobs(
        (method, path, body) => this.accounts.callAs(business, method, path, body),
        opts,
        this.countryId,
      );
      await this.recurring.create(rng(opts.seed * 31 + 5), this.clock);
    }

    const driverRandom = rng(opts.seed * 7919 + 1);
    const concurrency = 8;
    let next = 0;
    const startDriver = async () => {
      while (next < opts.drivers && !this.stopping) {
        const i = next++;
        const vehicleType = VEHICLES[i % VEHICLES.length];
        const driver = new SimDriver(
          this,
          i,
          vehicleType,
          pointIn(driverRandom, opts.centre, opts.radiusKm),
          rng(opts.seed * 104_729 + i),
        );
        try {
          await driver.start({
            email: `${prefix}-driver-${i}@sim.example`,
            phone: `+25471${String((opts.seed * 10_007 + i) % 10_000_000).padStart(7, '0')}`,
            password: `${prefix}-Driver-pass-${i}`,
            role: 'DRIVER',
            firstName: `Driver${i}`,
            lastName: 'Simulated',
            extra: { vehicleType, vehiclePlate: `SIM ${i}`, serviceTypes: ['RIDE', 'PACKAGE_DELIVERY'] },
          });
          this.drivers.push(driver);
        } catch (err) {
          this.note(err);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, startDriver));
    if (opts.maxActiveJobs !== undefined) await this.setMaxActiveJobs(opts.maxActiveJobs);

    const progress = setInterval(() => this.progress(), 2000);
    // The recurring jobs' occurrences become packages on the instance's schedule: learn them as they come.
    void this.pollRecurring();
    const recurringTimer = setInterval(() => void this.pollRecurring(), 5000);
    const until = opts.durationMs ? Date.now() + opts.durationMs : Infinity;
    const stopOnSignal = () => (this.stopping = true);
    process.once('SIGINT', stopOnSignal);
    const orderGap = opts.ordersPerMinute > 0 ? 60_000 / opts.ordersPerMinute : Infinity;
    const inFlight = new Set<Promise<void>>();
    let due = Date.now();
    while (!this.stopping && Date.now() < until) {
      if (Date.now() >= due && Number.isFinite(orderGap)) {
        due += orderGap;
        const p = this.order(business, customer).catch((err) => this.note(err));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        continue;
      }
      await sleep(Math.max(5, Math.min(250, due - Date.now(), until - Date.now())));
    }
    this.stopping = true;
    clearInterval(progress);
    clearInterval(recurringTimer);
    process.off('SIGINT', stopOnSignal);
    await Promise.all(inFlight);
    await Promise.all(this.drivers.map((d) => d.stop()));
    await this.readTime();
    return this.summary();
  }

  private polling: Promise<void> | undefined;

  /** Learns the recurring jobs' new occurrences (one reading at a time; callers share it). */
  pollRecurring(): Promise<void> {
    if (!this.recurring) return Promise.resolve();
    const recurring = this.recurring;
    this.polling ??= (async () => {
      try {
        for (const job of await recurring.newJobs((id) => this.jobs.has(id))) this.jobs.set(job.id, job);
      } catch (err) {
        this.note(err);
      } finally {
        this.polling = undefined;
      }
    })();
    return this.polling;
  }

  /** A job offered to a driver: one of the run's, or an occurrence of its recurring jobs made since the last look. */
  async resolve(jobId: string): Promise<JobRecord | undefined> {
    if (!this.jobs.has(jobId)) await this.pollRecurring();
    return this.jobs.get(jobId);
  }

  /** --max-active-jobs: each simulated driver's maxActiveJobs (section 24's routes), set by the admin. */
  private async setMaxActiveJobs(maxActiveJobs: number): Promise<void> {
    for (const driver of this.drivers) {
      try {
        await this.accounts.adminCall('PATCH', `/admin/drivers/${driver.userId}`, { maxActiveJobs });
      } catch (err) {
        if (err instanceof ApiError && (err.status === 400 || err.status === 404)) {
          this.stopping = true;
          await Promise.all(this.drivers.map((d) => d.stop()));
          throw new SetupError(
            `--max-active-jobs: the instance refused maxActiveJobs (${err.message}); it needs routes (contract section 24, PATCH /admin/drivers/:id { maxActiveJobs })`,
          );
        }
        throw err;
      }
    }
  }

  /** After the run: the booked-ahead jobs read back from the instance, the alerts, the recurring jobs deleted. */
  private async readTime(): Promise<void> {
    const read = <T>(path: string) => this.accounts.adminCall<T>('GET', path);
    const jobs = [...this.jobs.values()];
    const booked = jobs.filter((j) => pickupFrom(j) !== undefined);
    const nowMs = this.clock.nowMs();
    try {
      if (booked.length) {
        const { punctuality, late } = assess(booked, await readFacts(read, booked), nowMs);
        this.time.scheduled = punctuality;
        this.time.late = late;
      }
      this.time.alerts = await readAlerts(read, (id) => this.jobs.has(id));
    } catch (err) {
      this.note(err);
    }
    this.time.clock.observedRate = this.clock.observedRate();
    await this.recurring?.deleteAll().catch((err) => this.note(err));
  }

  /** Real milliseconds before the driver may do the pickup step of a job booked ahead (0: now). */
  realMsUntilPickup(job: JobRecord): number {
    const from = pickupFrom(job);
    return from === undefined ? 0 : Math.max(0, this.clock.realMsUntil(from));
  }

  private async ensureWebhook(business: Session, url: string): Promise<void> {
    const { items } = await this.accounts.callAs<{ items: { id: string; url: string; enabled: boolean }[] }>(
      business,
      'GET',
      '/webhooks?limit=100',
      undefined,
    );
    const existing = items.find((e) => e.url === url);
    if (existing && existing.enabled) return;
    if (existing) await this.accounts.callAs(business, 'PATCH', `/webhooks/${existing.id}`, { enabled: true });
    else {
      const created = await this.accounts.callAs<{ secret: string }>(business, 'POST', '/webhooks', {
        url,
        description: 'simulator',
      });
      // Shown once by the API: the receiver needs it to check signatures.
      process.stderr.write(`webhook endpoint ${url} created; its secret: ${created.secret}\n`);
    }
  }

  private async order(business: Session, customer: Session): Promise<void> {
    const { opts } = this;
    const isRide = this.chance(opts.rideShare);
    const pickup = pointIn(this.random, opts.centre, opts.radiusKm);
    const dropoff = pointIn(this.random, opts.centre, opts.radiusKm);
    const vehicleType = isRide
      ? this.chance(0.8)
        ? 'CAR'
        : 'BIKE'
      : VEHICLES[Math.floor(this.random() * VEHICLES.length)];
    // Booked ahead (--scheduled-share), once the instance's time is known (from its first answer).
    const ahead = opts.scheduledShare > 0 && this.chance(opts.scheduledShare);
    const booked =
      ahead && this.clock.known ? bookAhead(this.random, this.clock.nowMs(), opts.bookAheadMs, isRide) : {};
    const when = {
      ...(booked.pickupWindow ? { pickupWindow: windowBody(booked.pickupWindow) } : {}),
      ...(booked.dropoffWindow ? { dropoffWindow: windowBody(booked.dropoffWindow) } : {}),
      ...(booked.scheduledAt !== undefined ? { scheduledAt: new Date(booked.scheduledAt).toISOString() } : {}),
    };
    const lateOnPurpose =
      Object.keys(booked).length > 0 && opts.lateShare > 0 && this.chance(opts.lateShare) ? true : undefined;
    // As the apps do: the price first, then the order with the quote that locks it.
    const quote = await this.accounts.callAs<{ id: string; amount: number }>(
      isRide ? customer : business,
      'POST',
      '/quotes',
      {
        kind: isRide ? 'RIDE' : 'PACKAGE',
        pickup: { location: pickup },
        dropoff: { location: dropoff },
        vehicleType,
        countryId: this.countryId,
        ...when,
      },
    );
    this.quoted++;
    const createdAt = Date.now();
    if (isRide) {
      const ride = await this.accounts.callAs<{ id: string; price: Money | null; createdAt: string }>(
        customer,
        'POST',
        '/rides',
        {
          pickupLocation: pickup,
          destinationLocation: dropoff,
          vehicleType,
          countryId: this.countryId,
          quoteId: quote.id,
          ...when,
        },
      );
      this.clock.observe(ride.createdAt, createdAt, Date.now());
      this.jobs.set(ride.id, {
        type: 'RIDE',
        id: ride.id,
        createdAt,
        pickup,
        dropoff,
        vehicleType,
        price: ride.price ?? undefined,
        ...booked,
        lateOnPurpose,
      });
      return;
    }
    const withCode = this.chance(0.3);
    // Cash on delivery (--cod-share): 1 to 5 times the price, in the country's currency (well below its codMax).
    const cod =
      opts.codShare > 0 && this.chance(opts.codShare)
        ? Math.max(1, Math.round(quote.amount * (1 + 4 * this.random())))
        : undefined;
    const contact = (name: string) => ({ address: `${name} street`, contactName: name, contactPhone: '+254722000111' });
    const pkg = await this.accounts.callAs<{
      id: string;
      deliveryCode?: string;
      price: Money | null;
      createdAt: string;
    }>(business, 'POST', '/packages', {
      pickup: { location: pickup, ...contact('Sender') },
      dropoff: { location: dropoff, ...contact('Recipient') },
      vehicleType,
      countryId: this.countryId,
      parcel: { description: 'Simulated parcel', size: this.chance(0.5) ? 'SMALL' : 'MEDIUM' },
      reference: `sim-${Date.now().toString(36)}`,
      requireDeliveryCode: withCode,
      quoteId: quote.id,
      ...(cod !== undefined ? { cashOnDelivery: { amount: cod } } : {}),
      ...when,
    });
    this.clock.observe(pkg.createdAt, createdAt, Date.now());
    const job: JobRecord = {
      type: 'PACKAGE',
      id: pkg.id,
      createdAt,
      pickup,
      dropoff,
      vehicleType,
      deliveryCode: pkg.deliveryCode,
      cashOnDelivery: cod,
      price: pkg.price ?? undefined,
      ...booked,
      lateOnPurpose,
    };
    this.jobs.set(pkg.id, job);
    // A few senders change their mind while the package waits for a driver.
    if (this.chance(0.03)) {
      await this.api.pause(5_000 + this.random() * 30_000);
      if (job.assignedAt || this.stopping) return;
      try {
        await this.accounts.callAs(business, 'POST', `/packages/${pkg.id}/cancel`, {
          reason: 'Changed my mind (simulated)',
        });
        job.outcome = 'CANCELLED';
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409)) throw err; // a driver took it meanwhile
      }
    }
  }

  assigned(job: JobRecord): void {
    job.assignedAt ??= Date.now();
  }

  private progress(): void {
    if (this.opts.json) return;
    const c = countJobs([...this.jobs.values()]);
    const online = this.drivers.filter((d) => d.online).length;
    process.stderr.write(
      `drivers online ${online}/${this.opts.drivers}  jobs open ${c.open}  assigned ${c.assigned}  delivered ${c.completed}  failed ${c.failed}  cancelled ${c.cancelled}  offers ${this.offers.received}  errors ${this.api.stats.serverErrors}\n`,
    );
  }

  summary(): Summary {
    return summarize({
      startedMs: this.started,
      jobs: [...this.jobs.values()],
      quoted: this.quoted,
      drivers: { wanted: this.opts.drivers, online: this.drivers.length },
      offers: this.offers,
      nearby: this.nearby,
      stats: this.api.stats,
      errors: this.errors,
      time: this.time,
    });
  }
}

/** A set-up the instance refuses (the run cannot be what was asked for): exit 1 with its message. */
export class SetupError extends Error {}
