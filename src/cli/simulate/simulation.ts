// The run: the simulated business, customer and fleet, the demand loop and the tally for the report.
import { seededAccount, type Accounts, type Session } from './accounts.js';
import { ApiError, sleep, type Api } from './client.js';
import { SimDriver } from './driver.js';
import { DEFAULT_MAX_PLAUSIBLE_SPEED_KMH } from '../../config/jobs.js';
import { pointIn, rng, SPEED_MPS, VEHICLES } from './geo.js';
import type { JobRecord, Money } from './model.js';
import type { SimOptions } from './options.js';
import { countJobs, summarize, type Summary } from './report.js';

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

  constructor(
    readonly api: Api,
    readonly accounts: Accounts,
    readonly opts: SimOptions,
    readonly countryId: string,
  ) {
    this.random = rng(opts.seed);
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

    const progress = setInterval(() => this.progress(), 2000);
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
    process.off('SIGINT', stopOnSignal);
    await Promise.all(inFlight);
    await Promise.all(this.drivers.map((d) => d.stop()));
    return this.summary();
  }

  private async ensureWebhook(business: Session, url: string): Promise<void> {
    const { items } = await this.api.call<{ items: { id: string; url: string; enabled: boolean }[] }>(
      'GET',
      '/webhooks?limit=100',
      undefined,
      business.accessToken,
    );
    const existing = items.find((e) => e.url === url);
    if (existing && existing.enabled) return;
    if (existing) await this.api.call('PATCH', `/webhooks/${existing.id}`, { enabled: true }, business.accessToken);
    else {
      const created = await this.api.call<{ secret: string }>(
        'POST',
        '/webhooks',
        { url, description: 'simulator' },
        business.accessToken,
      );
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
    // As the apps do: the price first, then the order with the quote that locks it.
    const quote = await this.api.call<{ id: string; amount: number }>(
      'POST',
      '/quotes',
      {
        kind: isRide ? 'RIDE' : 'PACKAGE',
        pickup: { location: pickup },
        dropoff: { location: dropoff },
        vehicleType,
        countryId: this.countryId,
      },
      (isRide ? customer : business).accessToken,
    );
    this.quoted++;
    const createdAt = Date.now();
    if (isRide) {
      const ride = await this.api.call<{ id: string; price: Money | null }>(
        'POST',
        '/rides',
        {
          pickupLocation: pickup,
          destinationLocation: dropoff,
          vehicleType,
          countryId: this.countryId,
          quoteId: quote.id,
        },
        customer.accessToken,
      );
      this.jobs.set(ride.id, {
        type: 'RIDE',
        id: ride.id,
        createdAt,
        pickup,
        dropoff,
        vehicleType,
        price: ride.price ?? undefined,
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
    const pkg = await this.api.call<{ id: string; deliveryCode?: string; price: Money | null }>(
      'POST',
      '/packages',
      {
        pickup: { location: pickup, ...contact('Sender') },
        dropoff: { location: dropoff, ...contact('Recipient') },
        vehicleType,
        countryId: this.countryId,
        parcel: { description: 'Simulated parcel', size: this.chance(0.5) ? 'SMALL' : 'MEDIUM' },
        reference: `sim-${Date.now().toString(36)}`,
        requireDeliveryCode: withCode,
        quoteId: quote.id,
        ...(cod !== undefined ? { cashOnDelivery: { amount: cod } } : {}),
      },
      business.accessToken,
    );
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
    };
    this.jobs.set(pkg.id, job);
    // A few senders change their mind while the package waits for a driver.
    if (this.chance(0.03)) {
      await this.api.pause(5_000 + this.random() * 30_000);
      if (job.assignedAt || this.stopping) return;
      try {
        await this.api.call(
          'POST',
          `/packages/${pkg.id}/cancel`,
          { reason: 'Changed my mind (simulated)' },
          business.accessToken,
        );
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
    });
  }
}
