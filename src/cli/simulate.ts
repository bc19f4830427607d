// `npm run simulate`: a virtual fleet and demand against a running instance, through the public API
// and the driver WebSocket only (no database, no server code), for demos, webhook trials and load.
import { open, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

type VehicleType = 'BIKE' | 'CAR' | 'VAN' | 'TRUCK';
type JobType = 'PACKAGE' | 'RIDE';
interface LatLng {
  lat: number;
  lng: number;
}

const HELP = `npm run simulate -- [options]
  --url URL                 the instance (default http://localhost:3000; env SIM_URL)
  --drivers N               simulated drivers (default 20)
  --orders-per-minute N     new jobs per minute, packages and rides (default 10)
  --ride-share F            share of jobs that are rides, 0..1 (default 0.3)
  --duration D              e.g. 90s, 2m (default: until Ctrl-C)
  --area=LAT,LNG,KM         centre and radius of the area (default Nairobi: -1.2864,36.8172,8; use = before a negative latitude)
  --speed N                 simulated time runs N times faster (default 1)
  --seed N                  repeatable runs (default 1)
  --decline F               share of offers a driver declines (default 0.1)
  --no-nearby               drivers take only offers and pushes, never look at the nearby jobs list
  --webhook URL             make sure the simulated business has a webhook endpoint at URL (all events)
  --sms-file PATH           where the instance writes SMS (file transport; env SMS_FILE, default ./data/sms.log)
  --json                    print the summary as one JSON line
Admin sign-in: ADMIN_EMAIL / ADMIN_PASSWORD (env).`;

// --- options ---------------------------------------------------------------------------------

function parseDurationMs(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(raw.trim());
  if (!m) throw new Error(`not a duration: ${raw} (use 30s, 2m, 1h)`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

export interface SimOptions {
  url: string;
  drivers: number;
  ordersPerMinute: number;
  rideShare: number;
  durationMs: number | undefined;
  centre: LatLng;
  radiusKm: number;
  speed: number;
  seed: number;
  decline: number;
  smsFile: string;
  json: boolean;
  lookNearby: boolean;
  webhook: string | undefined;
  adminEmail: string;
  adminPassword: string;
}

function options(argv: string[], env: NodeJS.ProcessEnv): SimOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      drivers: { type: 'string' },
      'orders-per-minute': { type: 'string' },
      'ride-share': { type: 'string' },
      duration: { type: 'string' },
      area: { type: 'string' },
      speed: { type: 'string' },
      seed: { type: 'string' },
      decline: { type: 'string' },
      'sms-file': { type: 'string' },
      json: { type: 'boolean' },
      'no-nearby': { type: 'boolean' },
      webhook: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const num = (name: string, raw: string | undefined, fallback: number, min: number, max: number) => {
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return value;
  };
  const area = (values.area ?? env.SIM_AREA ?? '-1.2864,36.8172,8').split(',').map(Number);
  if (area.length !== 3 || area.some((n) => !Number.isFinite(n)) || Math.abs(area[0]) > 85 || Math.abs(area[1]) > 180 || area[2] <= 0 || area[2] > 100) {
    throw new Error('--area must be LAT,LNG,KM (radius up to 100 km)');
  }
  const adminEmail = env.ADMIN_EMAIL;
  const adminPassword = env.ADMIN_PASSWORD;
  if (!adminEmail || !adminPassword) throw new Error('set ADMIN_EMAIL and ADMIN_PASSWORD: the simulator signs in as the admin to approve its accounts');
  const duration = values.duration ?? env.SIM_DURATION;
  return {
    url: (values.url ?? env.SIM_URL ?? 'http://localhost:3000').replace(/\/$/, ''),
    drivers: Math.round(num('drivers', values.drivers, 20, 1, 100_000)),
    ordersPerMinute: num('orders-per-minute', values['orders-per-minute'], 10, 0, 100_000),
    rideShare: num('ride-share', values['ride-share'], 0.3, 0, 1),
    durationMs: duration ? parseDurationMs(duration) : undefined,
    centre: { lat: area[0], lng: area[1] },
    radiusKm: area[2],
    speed: num('speed', values.speed, 1, 0.1, 1000),
    seed: Math.round(num('seed', values.seed, 1, 0, 2 ** 31)),
    decline: num('decline', values.decline, 0.1, 0, 1),
    smsFile: values['sms-file'] ?? env.SMS_FILE ?? './data/sms.log',
    json: Boolean(values.json),
    lookNearby: !values['no-nearby'],
    webhook: values.webhook,
    adminEmail,
    adminPassword,
  };
}

// --- small pieces ----------------------------------------------------------------------------

/** mulberry32: a tiny seeded generator, so that --seed repeats a run's choices. */
function rng(seed: number): () => number {
  let a = seed >>> 0 || 1;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const EARTH_M = 6_371_000;
const rad = (d: number) => (d * Math.PI) / 180;
function distanceM(a: LatLng, b: LatLng): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_M * Math.asin(Math.sqrt(h));
}
function pointIn(random: () => number, centre: LatLng, radiusKm: number): LatLng {
  const r = radiusKm * 1000 * Math.sqrt(random());
  const theta = random() * 2 * Math.PI;
  const dLat = (r * Math.cos(theta)) / EARTH_M;
  const dLng = (r * Math.sin(theta)) / (EARTH_M * Math.cos(rad(centre.lat)));
  return { lat: round6(centre.lat + (dLat * 180) / Math.PI), lng: round6(centre.lng + (dLng * 180) / Math.PI) };
}
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
/** Moves `from` towards `to` by at most `meters`; returns the new point and whether it arrived. */
function step(from: LatLng, to: LatLng, meters: number): { at: LatLng; arrived: boolean } {
  const d = distanceM(from, to);
  if (d <= meters || d < 1) return { at: to, arrived: true };
  const f = meters / d;
  return { at: { lat: round6(from.lat + (to.lat - from.lat) * f), lng: round6(from.lng + (to.lng - from.lng) * f) }, arrived: false };
}

// Town speeds (m/s), as the service's own ETA estimate assumes.
const SPEED_MPS: Record<VehicleType, number> = { BIKE: 25 / 3.6, CAR: 30 / 3.6, VAN: 25 / 3.6, TRUCK: 20 / 3.6 };
const VEHICLES: VehicleType[] = ['BIKE', 'BIKE', 'CAR', 'CAR', 'VAN', 'TRUCK'];

function percentile(sorted: number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// --- the API client --------------------------------------------------------------------------

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message?: string; code?: string } | undefined,
    what: string,
  ) {
    super(`${what}: ${status} ${body?.code ?? ''} ${body?.message ?? ''}`.trim());
  }
}

interface Stats {
  requests: number;
  byStatus: Map<number, number>;
  rateLimited: number;
  serverErrors: number;
  networkErrors: number;
}

class Api {
  readonly stats: Stats = { requests: 0, byStatus: new Map(), rateLimited: 0, serverErrors: 0, networkErrors: 0 };
  constructor(
    readonly base: string,
    private readonly speed: number,
  ) {}

  /** One call; a 429 waits for its Retry-After and tries again (up to 5 times), so does a 503. */
  async call<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.base}/api${path}`, {
          method,
          headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        this.stats.networkErrors++;
        if (attempt >= 3) throw err;
        await sleep(500 * attempt);
        continue;
      }
      this.stats.requests++;
      this.stats.byStatus.set(res.status, (this.stats.byStatus.get(res.status) ?? 0) + 1);
      const text = await res.text();
      const parsed = text ? (JSON.parse(text) as unknown) : undefined;
      if (res.status >= 500) this.stats.serverErrors++;
      if ((res.status === 429 || res.status === 503) && attempt < 5) {
        if (res.status === 429) this.stats.rateLimited++;
        const retryAfter = Number(res.headers.get('retry-after') ?? '1');
        await sleep(Math.min(60_000, Math.max(250, (Number.isFinite(retryAfter) ? retryAfter : 1) * 1000)));
        continue;
      }
      if (res.status >= 400) throw new ApiError(res.status, parsed as ApiError['body'], `${method} ${path}`);
      return parsed as T;
    }
  }

  wsUrl(token: string): string {
    return `${this.base.replace(/^http/, 'ws')}/api/drivers/me/stream?access_token=${encodeURIComponent(token)}`;
  }

  /** Simulated pauses are `speed` times shorter. */
  pause(simMs: number): Promise<void> {
    return sleep(simMs / this.speed);
  }
}

/** Reads codes that the instance's `file` SMS transport appends, from where the file ended before. */
class SmsInbox {
  constructor(private readonly file: string) {}
  async mark(): Promise<number> {
    try {
      return (await stat(this.file)).size;
    } catch {
      return 0;
    }
  }
  async code(phone: string, from: number, timeoutMs = 10_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const handle = await open(this.file, 'r').catch(() => undefined);
      if (handle) {
        try {
          const { size } = await handle.stat();
          const buffer = Buffer.alloc(Math.max(0, size - from));
          await handle.read(buffer, 0, buffer.length, from);
          const lines = buffer.toString('utf8').split('\n').reverse();
          for (const line of lines) {
            if (!line.includes(phone)) continue;
            const message = JSON.parse(line) as { to: string; text: string };
            const code = /\b(\d{6})\b/.exec(message.text)?.[1];
            if (message.to === phone && code) return code;
          }
        } finally {
          await handle.close();
        }
      }
      await sleep(50);
    }
    throw new Error(`no SMS code for ${phone} in ${this.file}: is the instance running with SMS_TRANSPORT=file and SMS_FILE=${this.file}?`);
  }
}

// --- accounts --------------------------------------------------------------------------------

interface Session {
  userId: string;
  accessToken: string;
  refreshToken: string;
}

interface Account {
  email: string;
  phone: string;
  password: string;
  role: 'DRIVER' | 'BUSINESS' | 'CUSTOMER';
  firstName: string;
  lastName: string;
  extra: Record<string, unknown>;
}

class Accounts {
  private admin: Session | undefined;
  constructor(
    private readonly api: Api,
    private readonly sms: SmsInbox,
    private readonly opts: SimOptions,
    private readonly countryId: string,
  ) {}

  async login(identifier: string, password: string, phoneHint?: string): Promise<Session> {
    const mark = await this.sms.mark();
    const started = await this.api.call<{ sessionId: string; phone: string }>('POST', '/auth/login', { identifier, password });
    const code = await this.sms.code(phoneHint ?? started.phone, mark);
    const verified = await this.api.call<{ accessToken: string; refreshToken: string; user: { id: string } }>('POST', '/auth/login/verify-otp', {
      sessionId: started.sessionId,
      phone: started.phone,
      code,
    });
    return { userId: verified.user.id, accessToken: verified.accessToken, refreshToken: verified.refreshToken };
  }

  async signInAdmin(): Promise<Session> {
    this.admin = await this.login(this.opts.adminEmail, this.opts.adminPassword);
    return this.admin;
  }

  /** Logs in an account made by an earlier run, or registers it (and has the admin approve it). */
  async ensure(account: Account): Promise<Session> {
    try {
      return await this.login(account.email, account.password, account.phone);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 401 && err.status !== 403)) throw err;
      if (err.status === 403) {
        await this.approve(account.email);
        return this.login(account.email, account.password, account.phone);
      }
    }
    const mark = await this.sms.mark();
    const otp = await this.api.call<{ sessionId: string }>('POST', '/auth/register/send-otp', { phone: account.phone });
    const code = await this.sms.code(account.phone, mark);
    const registered = await this.api.call<{ user: { id: string; status: string } }>('POST', '/auth/register', {
      sessionId: otp.sessionId,
      phone: account.phone,
      code,
      email: account.email,
      password: account.password,
      firstName: account.firstName,
      lastName: account.lastName,
      role: account.role,
      countryId: this.countryId,
      ...account.extra,
    });
    if (registered.user.status === 'PENDING_APPROVAL') await this.adminCall('POST', `/admin/users/${registered.user.id}/approve`);
    return this.login(account.email, account.password, account.phone);
  }

  private async approve(email: string): Promise<void> {
    for (const status of ['PENDING_APPROVAL', 'REJECTED']) {
      let cursor: string | null = null;
      do {
        const page: { items: { id: string; email: string }[]; nextCursor: string | null } = await this.adminCall(
          'GET',
          `/admin/users?status=${status}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        const user = page.items.find((u) => u.email.toLowerCase() === email.toLowerCase());
        if (user) {
          await this.adminCall('POST', `/admin/users/${user.id}/approve`);
          return;
        }
        cursor = page.nextCursor;
      } while (cursor);
    }
    throw new Error(`${email} cannot log in and is not waiting for approval (suspended?)`);
  }

  async adminCall<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.admin) throw new Error('admin not signed in');
    try {
      return await this.api.call<T>(method, path, body, this.admin.accessToken);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        await this.refresh(this.admin);
        return this.api.call<T>(method, path, body, this.admin.accessToken);
      }
      throw err;
    }
  }

  async refresh(session: Session): Promise<void> {
    const { accessToken } = await this.api.call<{ accessToken: string }>('POST', '/auth/refresh', { refreshToken: session.refreshToken });
    session.accessToken = accessToken;
  }
}

// --- the run ---------------------------------------------------------------------------------

interface JobRecord {
  type: JobType;
  id: string;
  createdAt: number;
  assignedAt?: number;
  deliveryCode?: string;
  pickup: LatLng;
  dropoff: LatLng;
  vehicleType: VehicleType;
  outcome?: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  /** Left over from an earlier run (not counted; its delivery code, if any, is unknown). */
  adopted?: boolean;
  /** The price locked from its quote, and a completed ride's final fare. */
  price?: Money;
  fare?: Money;
}

interface Money {
  amount: number;
  currency: string;
}

/** Per currency, in its minor unit (cents for KES). */
export interface CurrencyTotals {
  currency: string;
  orders: number;
  priceSum: number;
  priceAverage: number;
  rideFares: number;
  rideFareSum: number;
}

export interface Summary {
  durationSeconds: number;
  drivers: { wanted: number; online: number };
  jobs: { created: number; packages: number; rides: number; assigned: number; completed: number; failed: number; cancelled: number; open: number };
  offers: { received: number; accepted: number; declined: number; lapsed: number; withdrawn: number };
  nearbyAccepts: { tried: number; won: number };
  assignSeconds: { p50: number | null; p95: number | null; p99: number | null };
  prices: { quoted: number; byCurrency: CurrencyTotals[] };
  requests: { total: number; rateLimited: number; serverErrors: number; networkErrors: number; byStatus: Record<string, number> };
  errors: string[];
}

class Simulation {
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
    const prefix = `sim${opts.seed}`;
    // Accounts are deterministic per seed, so a second run reuses them.
    const business = await this.accounts.ensure({
      email: `${prefix}-business@sim.example`,
      phone: `+2547200${String(opts.seed % 100_000).padStart(5, '0')}`,
      password: `${prefix}-Business-pass`,
      role: 'BUSINESS',
      firstName: 'Simulated',
      lastName: 'Business',
      extra: { businessName: `Simulated Parcels ${opts.seed}`, businessAddress: 'Simulated Road 1' },
    });
    if (opts.webhook) await this.ensureWebhook(business, opts.webhook);
    const customer = await this.accounts.ensure({
      email: `${prefix}-customer@sim.example`,
      phone: `+2547210${String(opts.seed % 100_000).padStart(5, '0')}`,
      password: `${prefix}-Customer-pass`,
      role: 'CUSTOMER',
      firstName: 'Simulated',
      lastName: 'Customer',
      extra: {},
    });

    const driverRandom = rng(opts.seed * 7919 + 1);
    const concurrency = 8;
    let next = 0;
    const startDriver = async () => {
      while (next < opts.drivers && !this.stopping) {
        const i = next++;
        const vehicleType = VEHICLES[i % VEHICLES.length];
        const driver = new SimDriver(this, i, vehicleType, pointIn(driverRandom, opts.centre, opts.radiusKm), rng(opts.seed * 104_729 + i));
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
    const { items } = await this.api.call<{ items: { id: string; url: string; enabled: boolean }[] }>('GET', '/webhooks?limit=100', undefined, business.accessToken);
    const existing = items.find((e) => e.url === url);
    if (existing && existing.enabled) return;
    if (existing) await this.api.call('PATCH', `/webhooks/${existing.id}`, { enabled: true }, business.accessToken);
    else {
      const created = await this.api.call<{ secret: string }>('POST', '/webhooks', { url, description: 'simulator' }, business.accessToken);
      // Shown once by the API: the receiver needs it to check signatures.
      process.stderr.write(`webhook endpoint ${url} created; its secret: ${created.secret}\n`);
    }
  }

  private async order(business: Session, customer: Session): Promise<void> {
    const { opts } = this;
    const isRide = this.chance(opts.rideShare);
    const pickup = pointIn(this.random, opts.centre, opts.radiusKm);
    const dropoff = pointIn(this.random, opts.centre, opts.radiusKm);
    const vehicleType = isRide ? (this.chance(0.8) ? 'CAR' : 'BIKE') : VEHICLES[Math.floor(this.random() * VEHICLES.length)];
    // As the apps do: the price first, then the order with the quote that locks it.
    const quote = await this.api.call<{ id: string }>(
      'POST',
      '/quotes',
      { kind: isRide ? 'RIDE' : 'PACKAGE', pickup: { location: pickup }, dropoff: { location: dropoff }, vehicleType, countryId: this.countryId },
      (isRide ? customer : business).accessToken,
    );
    this.quoted++;
    const createdAt = Date.now();
    if (isRide) {
      const ride = await this.api.call<{ id: string; price: Money | null }>(
        'POST',
        '/rides',
        { pickupLocation: pickup, destinationLocation: dropoff, vehicleType, countryId: this.countryId, quoteId: quote.id },
        customer.accessToken,
      );
      this.jobs.set(ride.id, { type: 'RIDE', id: ride.id, createdAt, pickup, dropoff, vehicleType, price: ride.price ?? undefined });
      return;
    }
    const withCode = this.chance(0.3);
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
      },
      business.accessToken,
    );
    const job: JobRecord = { type: 'PACKAGE', id: pkg.id, createdAt, pickup, dropoff, vehicleType, deliveryCode: pkg.deliveryCode, price: pkg.price ?? undefined };
    this.jobs.set(pkg.id, job);
    // A few senders change their mind while the package waits for a driver.
    if (this.chance(0.03)) {
      await this.api.pause(5_000 + this.random() * 30_000);
      if (job.assignedAt || this.stopping) return;
      try {
        await this.api.call('POST', `/packages/${pkg.id}/cancel`, { reason: 'Changed my mind (simulated)' }, business.accessToken);
        job.outcome = 'CANCELLED';
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409)) throw err; // a driver took it meanwhile
      }
    }
  }

  assigned(job: JobRecord): void {
    job.assignedAt ??= Date.now();
  }

  private counts() {
    const all = [...this.jobs.values()];
    return {
      created: all.length,
      packages: all.filter((j) => j.type === 'PACKAGE').length,
      rides: all.filter((j) => j.type === 'RIDE').length,
      assigned: all.filter((j) => j.assignedAt).length,
      completed: all.filter((j) => j.outcome === 'COMPLETED').length,
      failed: all.filter((j) => j.outcome === 'FAILED').length,
      cancelled: all.filter((j) => j.outcome === 'CANCELLED').length,
      open: all.filter((j) => !j.outcome).length,
    };
  }

  private progress(): void {
    if (this.opts.json) return;
    const c = this.counts();
    const online = this.drivers.filter((d) => d.online).length;
    process.stderr.write(
      `drivers online ${online}/${this.opts.drivers}  jobs open ${c.open}  assigned ${c.assigned}  delivered ${c.completed}  failed ${c.failed}  cancelled ${c.cancelled}  offers ${this.offers.received}  errors ${this.api.stats.serverErrors}\n`,
    );
  }

  private prices(): Summary['prices'] {
    const byCurrency = new Map<string, CurrencyTotals>();
    for (const job of this.jobs.values()) {
      if (!job.price) continue;
      const c = job.price.currency;
      const t = byCurrency.get(c) ?? { currency: c, orders: 0, priceSum: 0, priceAverage: 0, rideFares: 0, rideFareSum: 0 };
      t.orders++;
      t.priceSum += job.price.amount;
      if (job.fare) {
        t.rideFares++;
        t.rideFareSum += job.fare.amount;
      }
      byCurrency.set(c, t);
    }
    for (const t of byCurrency.values()) t.priceAverage = Math.round(t.priceSum / t.orders);
    return { quoted: this.quoted, byCurrency: [...byCurrency.values()] };
  }

  summary(): Summary {
    const waits = [...this.jobs.values()].filter((j) => j.assignedAt).map((j) => (j.assignedAt! - j.createdAt) / 1000).sort((a, b) => a - b);
    const s = this.api.stats;
    return {
      durationSeconds: Math.round((Date.now() - this.started) / 100) / 10,
      drivers: { wanted: this.opts.drivers, online: this.drivers.length },
      jobs: this.counts(),
      offers: { ...this.offers },
      nearbyAccepts: { ...this.nearby },
      assignSeconds: { p50: percentile(waits, 50), p95: percentile(waits, 95), p99: percentile(waits, 99) },
      prices: this.prices(),
      requests: { total: s.requests, rateLimited: s.rateLimited, serverErrors: s.serverErrors, networkErrors: s.networkErrors, byStatus: Object.fromEntries(s.byStatus) },
      errors: this.errors,
    };
  }
}

type Phase = 'IDLE' | 'TO_PICKUP' | 'TO_DROPOFF';

class SimDriver {
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
      if (this.sim.chance(this.sim.opts.decline)) {
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
    const { items } = await this.call<{ items: { jobType: JobType; id: string }[] }>('GET', '/drivers/me/jobs/nearby?limit=10');
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
    type Active = { jobType: JobType; id: string; status: string; vehicleType: VehicleType; pickupLocation: LatLng; destinationLocation: LatLng };
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
  }

  private finish(outcome: 'COMPLETED' | 'FAILED' | 'CANCELLED'): void {
    if (this.job) this.job.outcome = outcome;
    this.job = undefined;
    this.phase = 'IDLE';
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
      } else if (this.job) {
        const target = this.phase === 'TO_PICKUP' ? this.job.pickup : this.job.dropoff;
        const moved = step(this.position, target, meters);
        this.position = moved.at;
        if (moved.arrived) await this.arrive(this.job);
      }
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ type: 'location', ...this.position }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && this.job) {
        // The job moved on without us (cancelled by its creator): drop it.
        this.finish('CANCELLED');
      } else this.sim.note(err);
    } finally {
      this.busy = false;
    }
  }

  private async arrive(job: JobRecord): Promise<void> {
    const base = job.type === 'PACKAGE' ? `/packages/${job.id}` : `/rides/${job.id}`;
    if (this.phase === 'TO_PICKUP') {
      if (job.type === 'PACKAGE') {
        await this.call('POST', `${base}/pickup`);
        await this.sim.api.pause(30_000);
        await this.call('POST', `${base}/start`);
      } else {
        await this.call('POST', `${base}/arrive`);
        await this.sim.api.pause(30_000);
        await this.call('POST', `${base}/start`);
      }
      this.phase = 'TO_DROPOFF';
      return;
    }
    if (job.type === 'PACKAGE' && (this.sim.chance(0.03) || job.adopted)) {
      await this.call('POST', `${base}/fail`, { reason: 'Recipient not available (simulated)' });
      this.finish('FAILED');
      return;
    }
    if (job.type === 'PACKAGE') await this.call('POST', `${base}/deliver`, job.deliveryCode ? { deliveryCode: job.deliveryCode, recipientName: 'Recipient' } : { recipientName: 'Recipient' });
    else job.fare = (await this.call<{ fare: Money | null }>('POST', `${base}/complete`)).fare ?? undefined;
    this.finish('COMPLETED');
  }
}

function printSummary(summary: Summary, json: boolean): void {
  if (json) {
    console.log(JSON.stringify(summary));
    return;
  }
  const s = summary;
  const fmt = (n: number | null) => (n === null ? '-' : `${n.toFixed(1)} s`);
  console.log(
    [
      `simulated ${s.durationSeconds} s: ${s.drivers.online}/${s.drivers.wanted} drivers online`,
      `jobs: ${s.jobs.created} created (${s.jobs.packages} packages, ${s.jobs.rides} rides), ${s.jobs.assigned} assigned, ${s.jobs.completed} completed, ${s.jobs.failed} failed, ${s.jobs.cancelled} cancelled, ${s.jobs.open} open`,
      `offers: ${s.offers.received} received, ${s.offers.accepted} accepted, ${s.offers.declined} declined, ${s.offers.lapsed} lapsed, ${s.offers.withdrawn} withdrawn; nearby accepts ${s.nearbyAccepts.won}/${s.nearbyAccepts.tried} won`,
      `creation → assignment: p50 ${fmt(s.assignSeconds.p50)}, p95 ${fmt(s.assignSeconds.p95)}, p99 ${fmt(s.assignSeconds.p99)}`,
      `prices (minor units): ${s.prices.quoted} quoted` +
        s.prices.byCurrency.map((c) => `; ${c.currency} ${c.orders} orders, sum ${c.priceSum}, average ${c.priceAverage}, ${c.rideFares} ride fares, sum ${c.rideFareSum}`).join(''),
      `requests: ${s.requests.total}, ${s.requests.rateLimited} rate limited (waited), ${s.requests.serverErrors} server errors, ${s.requests.networkErrors} network errors`,
      ...(s.errors.length ? ['errors:', ...s.errors.slice(0, 10).map((e) => `  ${e}`)] : []),
    ].join('\n'),
  );
}

async function main(): Promise<number> {
  let opts: SimOptions;
  try {
    opts = options(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`simulate: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const api = new Api(opts.url, opts.speed);
  let countryId: string;
  try {
    const countries = await api.call<{ items: { id: string; code: string }[] }>('GET', '/countries');
    const kenya = countries.items.find((c) => c.code === 'KE') ?? countries.items[0];
    if (!kenya) throw new Error('the instance has no countries');
    countryId = kenya.id;
  } catch (err) {
    console.error(`simulate: cannot reach ${opts.url}: ${(err as Error).message}`);
    return 1;
  }
  const accounts = new Accounts(api, new SmsInbox(opts.smsFile), opts, countryId);
  try {
    await accounts.signInAdmin();
  } catch (err) {
    console.error(`simulate: the admin sign-in was refused: ${(err as Error).message}`);
    return 1;
  }
  const sim = new Simulation(api, accounts, opts, countryId);
  const summary = await sim.run();
  printSummary(summary, opts.json);
  return summary.requests.serverErrors > 0 ? 1 : 0;
}

process.exitCode = await main();
