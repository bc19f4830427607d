// What shapes jobs: driver positions, dispatch, pricing, ratings and tips, tracking links, address search.
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface DriversConfig {
  /** A driver whose last position is older is not matched. */
  locationTtlMs: number;
  /** km/h a position may imply from the last accepted one (contract section 19); null: not checked (MAX_PLAUSIBLE_SPEED=off). */
  maxPlausibleSpeedKmh: number | null;
}

export type DispatchMode = 'offer' | 'broadcast' | 'off';
const DISPATCH_MODES: DispatchMode[] = ['offer', 'broadcast', 'off'];

export interface DispatchConfig {
  /** offer: each job offered to one driver at a time; broadcast: nearby pushes only; off: neither. */
  mode: DispatchMode;
  offerTtlMs: number;
  radiusMeters: number;
  maxRadiusMeters: number;
  retryIntervalMs: number;
  /** A job released more than this many times is flagged for an admin (contract section 13). */
  maxReleases: number;
  /** Section 24: a package is offered to a driver on a route when its stops add at most this (BATCH_MAX_DETOUR). */
  batchMaxDetourMs: number;
}

/** Pricing (contract section 18): distances in metres, the surge cap in tenths (20 is ×2.0). */
export interface PricingConfig {
  quoteTtlMs: number;
  surgeCellMeters: number;
  surgeIntervalMs: number;
  surgeMaxTenths: number;
  surgeAccountCap: number;
  maxTripDistanceMeters: number;
}

/**
 * Ratings and tips (contract section 20): drivers whose average is below alertBelowTenths (40 is 4.0)
 * with at least 20 ratings are listed for admins; a tip is at most tipMaxShareBasisPoints of the price (5000 is 50 %).
 */
export interface RatingsConfig {
  alertBelowTenths: number;
  tipMaxShareBasisPoints: number;
}

/** Live tracking (contract section 14): links are publicBaseUrl + /t/ + token. */
export interface TrackingConfig {
  publicBaseUrl: string;
  intervalMs: number;
}

/** Address search (GET /geocode): a Nominatim- or Photon-compatible service; off without a URL. */
export interface GeocoderConfig {
  url: string | undefined;
  kind: 'nominatim' | 'photon';
  timeoutMs: number;
  cacheTtlMs: number;
}

export function readDrivers(r: EnvReader): DriversConfig {
  return {
    locationTtlMs: r.duration('DRIVER_LOCATION_TTL', '2m', '1d'),
    maxPlausibleSpeedKmh: readMaxPlausibleSpeed(r),
  };
}

/** MAX_PLAUSIBLE_SPEED's default (contract section 19), km/h. */
export const DEFAULT_MAX_PLAUSIBLE_SPEED_KMH = 250;

function readMaxPlausibleSpeed(r: EnvReader): number | null {
  const raw = r.str('MAX_PLAUSIBLE_SPEED', String(DEFAULT_MAX_PLAUSIBLE_SPEED_KMH)).trim();
  if (raw.toLowerCase() === 'off') return null;
  const kmh = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (kmh >= 10 && kmh <= 100_000) return kmh;
  r.problem(`MAX_PLAUSIBLE_SPEED must be a speed in km/h from 10 to 100000, or off (got "${raw}")`);
  return DEFAULT_MAX_PLAUSIBLE_SPEED_KMH;
}

export function readPricing(r: EnvReader): PricingConfig {
  const surgeMaxRaw = r.str('SURGE_MAX', '2.0');
  let surgeMaxTenths = 20;
  if (/^\d+(\.\d)?$/.test(surgeMaxRaw) && Number(surgeMaxRaw) >= 1 && Number(surgeMaxRaw) <= 10)
    surgeMaxTenths = Math.round(Number(surgeMaxRaw) * 10);
  else r.problem(`SURGE_MAX must be a multiplier from 1.0 to 10.0 with at most one decimal (got "${surgeMaxRaw}")`);
  return {
    quoteTtlMs: r.duration('QUOTE_TTL', '10m', '1d'),
    surgeCellMeters: r.distance('SURGE_CELL', '2km', 100, 50_000),
    surgeIntervalMs: r.duration('SURGE_INTERVAL', '1m', '1h'),
    surgeMaxTenths,
    surgeAccountCap: r.int('SURGE_ACCOUNT_CAP', 3, 1, 1_000_000),
    maxTripDistanceMeters: r.distance('MAX_TRIP_DISTANCE', '300km', 1000, 5_000_000),
  };
}

export function readDispatch(r: EnvReader): DispatchConfig {
  const [radiusMeters, maxRadiusMeters] = r.ascending([
    ['DISPATCH_RADIUS', r.distance('DISPATCH_RADIUS', '5km', 1, 100_000)],
    ['DISPATCH_MAX_RADIUS', r.distance('DISPATCH_MAX_RADIUS', '15km', 1, 100_000)],
  ]);
  return {
    mode: r.oneOf('DISPATCH_MODE', DISPATCH_MODES, 'offer', { lowercase: true }),
    offerTtlMs: r.duration('DISPATCH_OFFER_TTL', '20s', '10m'),
    radiusMeters,
    maxRadiusMeters,
    retryIntervalMs: r.duration('DISPATCH_RETRY_INTERVAL', '30s', '1h'),
    maxReleases: r.int('DISPATCH_MAX_RELEASES', 3, 0, 1000),
    batchMaxDetourMs: r.duration('BATCH_MAX_DETOUR', '8m', '2h'),
  };
}

export function readTracking(r: EnvReader, { port }: ServerConfig): TrackingConfig {
  return { publicBaseUrl: publicBaseUrl(r, port), intervalMs: r.duration('TRACKING_INTERVAL', '3s', '10m') };
}

/** Tracking links are this + /t/ + a token: nothing after the path to append to. */
function publicBaseUrl(r: EnvReader, port: number): string {
  const raw = r.get('PUBLIC_BASE_URL');
  if (raw === undefined) return `http://localhost:${port}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username) {
    r.problem(`PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials (got "${raw}")`);
    return `http://localhost:${port}`;
  }
  return url.href.replace(/\/+$/, '');
}

export function readRatings(r: EnvReader): RatingsConfig {
  const alertRaw = r.str('RATING_ALERT_BELOW', '4.0');
  let alertBelowTenths = 40;
  if (/^\d(\.\d)?$/.test(alertRaw) && Number(alertRaw) >= 1 && Number(alertRaw) <= 5)
    alertBelowTenths = Math.round(Number(alertRaw) * 10);
  else r.problem(`RATING_ALERT_BELOW must be a rating from 1.0 to 5.0 with at most one decimal (got "${alertRaw}")`);
  // 50% or 0.5: a share of the price from 1 % to 100 %, in basis points.
  const shareRaw = r.str('TIP_MAX_SHARE', '50%');
  let tipMaxShareBasisPoints = 5000;
  const percent = /^(\d{1,3}(?:\.\d{1,2})?)%$/.exec(shareRaw);
  const fraction = /^(0(?:\.\d{1,4})?|1(?:\.0{1,4})?)$/.exec(shareRaw);
  const bp = percent ? Math.round(Number(percent[1]) * 100) : fraction ? Math.round(Number(fraction[1]) * 10_000) : NaN;
  if (Number.isInteger(bp) && bp >= 100 && bp <= 10_000) tipMaxShareBasisPoints = bp;
  else r.problem(`TIP_MAX_SHARE must be a share of the price from 1% to 100%, written 50% or 0.5 (got "${shareRaw}")`);
  return { alertBelowTenths, tipMaxShareBasisPoints };
}

export function readGeocoder(r: EnvReader): GeocoderConfig {
  const raw = r.get('GEOCODER_URL');
  let url: string | undefined;
  if (raw !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(raw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.hash)
      r.problem(`GEOCODER_URL must be an http(s) URL without a fragment (got "${raw}")`);
    else url = parsed.href.replace(/\/+$/, '');
  }
  return {
    url,
    kind: r.oneOf('GEOCODER_KIND', ['nominatim', 'photon'] as const, 'nominatim', { lowercase: true }),
    timeoutMs: r.duration('GEOCODER_TIMEOUT', '5s', '1m'),
    cacheTtlMs: r.duration('GEOCODER_CACHE_TTL', '10m', '1d'),
  };
}
