// The simulator's command line: options, their defaults and limits, and the help text.
import { parseArgs } from 'node:util';
import type { LatLng } from './model.js';

export const HELP = `npm run simulate -- [options]
  --url URL                 the instance (default http://localhost:3000; env SIM_URL)
  --drivers N               simulated drivers (default 20)
  --orders-per-minute N     new jobs per minute, packages and rides (default 10)
  --ride-share F            share of jobs that are rides, 0..1 (default 0.3)
  --duration D              e.g. 90s, 2m (default: until Ctrl-C)
  --area=LAT,LNG,KM         centre and radius of the area (default Nairobi: -1.2864,36.8172,8; use = before a negative latitude)
  --speed N                 simulated time runs N times faster (default 1)
  --seed N                  repeatable runs (default 1)
  --decline F               share of offers a driver declines (default 0.1)
  --cod-share F             share of business packages with cash on delivery, 0..1 (default 0): 1 to 5 times the
                            price, confirmed by the driver as cashCollected at delivery
  --no-nearby               drivers take only offers and pushes, never look at the nearby jobs list
  --scheduled-share F       share of jobs booked ahead, 0..1 (default 0): packages with a pickup and a drop-off
                            window, rides with scheduledAt, starting up to --book-ahead from now
  --book-ahead D            how far ahead scheduled jobs start, at most (simulated time; default 2h)
  --recurring N             recurring jobs (hourly pickups) the business creates at the start, deleted at the end
                            (default 0)
  --clock-rate R            the instance runs with CLOCK_RATE=R (and CLOCK_ANCHOR, env, if set): windows are
                            booked in its time, and --speed defaults to R
  --late-share F            share of scheduled jobs whose driver waits at the pickup until its window has
                            ended, on purpose (default 0; to see lateness reported and alerts raised)
  --max-active-jobs N       PATCH each simulated driver's maxActiveJobs (needs routes, contract section 24)
  --webhook URL             make sure the simulated business has a webhook endpoint at URL (all events)
  --sms-file PATH           where the instance writes SMS (file transport; env SMS_FILE, default ./data/sms.log)
  --json                    print the summary as one JSON line
Admin sign-in: ADMIN_EMAIL / ADMIN_PASSWORD (env).`;

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
  codShare: number;
  smsFile: string;
  json: boolean;
  lookNearby: boolean;
  webhook: string | undefined;
  /** Section 22: share of jobs booked ahead, how far ahead at most (simulated ms), recurring templates. */
  scheduledShare: number;
  bookAheadMs: number;
  recurring: number;
  /** The instance's CLOCK_RATE and CLOCK_ANCHOR (epoch ms; undefined: learnt from its answers). */
  clockRate: number;
  clockAnchorMs: number | undefined;
  lateShare: number;
  maxActiveJobs: number | undefined;
  adminEmail: string;
  adminPassword: string;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): SimOptions {
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
      'cod-share': { type: 'string' },
      'sms-file': { type: 'string' },
      json: { type: 'boolean' },
      'no-nearby': { type: 'boolean' },
      webhook: { type: 'string' },
      'scheduled-share': { type: 'string' },
      'book-ahead': { type: 'string' },
      recurring: { type: 'string' },
      'clock-rate': { type: 'string' },
      'late-share': { type: 'string' },
      'max-active-jobs': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const num = (name: string, raw: string | undefined, fallback: number, min: number, max: number) => {
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isFinite(value) || value < min || value > max)
      throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return value;
  };
  const area = (values.area ?? env.SIM_AREA ?? '-1.2864,36.8172,8').split(',').map(Number);
  if (
    area.length !== 3 ||
    area.some((n) => !Number.isFinite(n)) ||
    Math.abs(area[0]) > 85 ||
    Math.abs(area[1]) > 180 ||
    area[2] <= 0 ||
    area[2] > 100
  ) {
    throw new Error('--area must be LAT,LNG,KM (radius up to 100 km)');
  }
  const adminEmail = env.ADMIN_EMAIL;
  const adminPassword = env.ADMIN_PASSWORD;
  if (!adminEmail || !adminPassword)
    throw new Error('set ADMIN_EMAIL and ADMIN_PASSWORD: the simulator signs in as the admin to approve its accounts');
  const duration = values.duration ?? env.SIM_DURATION;
  const clockRate = num('clock-rate', values['clock-rate'] ?? env.CLOCK_RATE, 1, 1, 10_000);
  const anchor = env.CLOCK_ANCHOR ? Date.parse(env.CLOCK_ANCHOR) : undefined;
  if (anchor !== undefined && !Number.isFinite(anchor))
    throw new Error(`CLOCK_ANCHOR must be an RFC 3339 instant (got "${env.CLOCK_ANCHOR}")`);
  const bookAheadMs = parseDurationMs(values['book-ahead'] ?? '2h');
  if (bookAheadMs < 60_000 || bookAheadMs > 30 * 86_400_000) throw new Error('--book-ahead must be from 1m to 720h');
  return {
    url: (values.url ?? env.SIM_URL ?? 'http://localhost:3000').replace(/\/$/, ''),
    drivers: Math.round(num('drivers', values.drivers, 20, 1, 100_000)),
    ordersPerMinute: num('orders-per-minute', values['orders-per-minute'], 10, 0, 100_000),
    rideShare: num('ride-share', values['ride-share'], 0.3, 0, 1),
    durationMs: duration ? parseDurationMs(duration) : undefined,
    centre: { lat: area[0], lng: area[1] },
    radiusKm: area[2],
    speed: num('speed', values.speed, Math.min(clockRate, 1000), 0.1, 1000),
    seed: Math.round(num('seed', values.seed, 1, 0, 2 ** 31)),
    decline: num('decline', values.decline, 0.1, 0, 1),
    codShare: num('cod-share', values['cod-share'], 0, 0, 1),
    smsFile: values['sms-file'] ?? env.SMS_FILE ?? './data/sms.log',
    json: Boolean(values.json),
    lookNearby: !values['no-nearby'],
    webhook: values.webhook,
    scheduledShare: num('scheduled-share', values['scheduled-share'], 0, 0, 1),
    bookAheadMs,
    recurring: Math.round(num('recurring', values.recurring, 0, 0, 100)),
    clockRate,
    clockAnchorMs: anchor,
    lateShare: num('late-share', values['late-share'], 0, 0, 1),
    maxActiveJobs:
      values['max-active-jobs'] === undefined
        ? undefined
        : Math.round(num('max-active-jobs', values['max-active-jobs'], 1, 1, 100)),
    adminEmail,
    adminPassword,
  };
}
