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
    codShare: num('cod-share', values['cod-share'], 0, 0, 1),
    smsFile: values['sms-file'] ?? env.SMS_FILE ?? './data/sms.log',
    json: Boolean(values.json),
    lookNearby: !values['no-nearby'],
    webhook: values.webhook,
    adminEmail,
    adminPassword,
  };
}
