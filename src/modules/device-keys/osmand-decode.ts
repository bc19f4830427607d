// Traccar Client's OsmAnd protocol, decoded into the driver position message (pure). Three forms, as
// Traccar's own OsmAnd decoder reads them:
// - the query string, or the same pairs as a form-urlencoded body: `id` (or `deviceid`), `lat`,
//   `lon` (or `location=lat,lon`), `timestamp` (Unix seconds, milliseconds, or a date text),
//   `speed` in knots, `bearing` (or `heading`) in degrees, `accuracy` in metres; other pairs
//   (altitude, batt, charge, hdop ...) are ignored;
// - the JSON body of newer Traccar Clients: `{ device_id, location: { timestamp, coords: {
//   latitude, longitude, speed (m/s), heading, accuracy } } }`.
// A negative speed, heading or accuracy is the platforms' "unknown" and is left out.

export const KNOT_MS = 1852 / 3600;
const MAX_KEY_LENGTH = 128;

export interface LocationMessage {
  type: 'location';
  lat: number;
  lng: number;
  heading?: number;
  speed?: number;
  accuracy?: number;
  recordedAt?: string;
}

export type Decoded =
  { ok: true; key: string; message: LocationMessage } | { ok: false; status: 400 | 401; message: string };

type Params = Record<string, unknown>;

const bad = (message: string): Decoded => ({ ok: false, status: 400, message });

/** The first value of a query or form pair (a repeated pair's first value, as Traccar's decoder reads it). */
function first(params: Params, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = params[name];
    const one = Array.isArray(value) ? value[0] : value;
    if (typeof one === 'string' && one !== '') return one;
    if (typeof one === 'number') return String(one);
  }
  return undefined;
}

function number(text: string | undefined, name: string): number | undefined | Error {
  if (text === undefined) return undefined;
  if (!/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(text)) return new Error(`${name} must be a number`);
  return Number(text);
}

/** Unix seconds (below 2^31, as Traccar reads it) or milliseconds, or a date text (UTC unless it says otherwise). */
export function parseTimestamp(value: string | number): string | Error {
  let ms: number;
  const text = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const n = Number(text);
    ms = n < 2 ** 31 ? n * 1000 : n;
  } else {
    // "2026-11-27 03:00:00" (Traccar's text form) is UTC; ISO 8601 keeps its own offset.
    const iso = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
    ms = /^\d{4}-\d{2}-\d{2}/.test(iso) ? Date.parse(iso) : NaN;
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > 8.64e15)
    return new Error('timestamp must be Unix seconds, milliseconds or an ISO 8601 date');
  return new Date(ms).toISOString();
}

function keyOf(text: unknown): string | undefined {
  return typeof text === 'string' && text.length > 0 && text.length <= MAX_KEY_LENGTH ? text : undefined;
}

/** Builds the message from numbers already read; speeds in m/s. */
function build(
  key: string | undefined,
  fields: { lat?: number; lng?: number; speed?: number; heading?: number; accuracy?: number; recordedAt?: string },
): Decoded {
  if (key === undefined) return { ok: false, status: 401, message: 'Missing device key (id)' };
  if (fields.lat === undefined || fields.lng === undefined) return bad('lat and lon are required');
  const message: LocationMessage = { type: 'location', lat: fields.lat, lng: fields.lng };
  if (fields.speed !== undefined && fields.speed >= 0) message.speed = fields.speed;
  if (fields.heading !== undefined && fields.heading >= 0) message.heading = fields.heading;
  if (fields.accuracy !== undefined && fields.accuracy >= 0) message.accuracy = fields.accuracy;
  if (fields.recordedAt !== undefined) message.recordedAt = fields.recordedAt;
  return { ok: true, key, message };
}

/** The device key of a request in any of the three forms (undefined when it has none, or a silly one). */
export function deviceKeyOf(body: unknown, query: Params): string | undefined {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Params) : {};
  return keyOf(b.device_id) ?? keyOf(first(b, 'id', 'deviceid')) ?? keyOf(first(query, 'id', 'deviceid'));
}

/** The query-string (and form body) form. */
export function decodeParams(params: Params): Decoded {
  const key = keyOf(first(params, 'id', 'deviceid'));
  const read: Record<string, number | undefined> = {};
  let lat = first(params, 'lat');
  let lon = first(params, 'lon');
  const location = first(params, 'location');
  if ((lat === undefined || lon === undefined) && location !== undefined) [lat, lon] = location.split(',');
  const texts = {
    lat,
    lon,
    speed: first(params, 'speed'),
    heading: first(params, 'bearing', 'heading'),
    accuracy: first(params, 'accuracy'),
  };
  for (const [name, text] of Object.entries(texts)) {
    const n = number(text, name);
    if (n instanceof Error) return key === undefined ? build(key, {}) : bad(n.message);
    read[name] = n;
  }
  let recordedAt: string | undefined;
  const timestamp = first(params, 'timestamp');
  if (timestamp !== undefined) {
    const parsed = parseTimestamp(timestamp);
    if (parsed instanceof Error) return key === undefined ? build(key, {}) : bad(parsed.message);
    recordedAt = parsed;
  }
  return build(key, {
    lat: read.lat,
    lng: read.lon,
    speed: read.speed === undefined ? undefined : read.speed * KNOT_MS,
    heading: read.heading,
    accuracy: read.accuracy,
    recordedAt,
  });
}

/** The JSON form; the key may also come in the query (`id`). */
export function decodeJson(body: Params, query: Params): Decoded {
  const key = keyOf(body.device_id) ?? keyOf(first(query, 'id', 'deviceid'));
  if (key === undefined) return build(undefined, {});
  const location = body.location;
  if (!location || typeof location !== 'object' || Array.isArray(location)) return bad('location must be an object');
  const { coords, timestamp } = location as Params;
  if (!coords || typeof coords !== 'object' || Array.isArray(coords)) return bad('location.coords must be an object');
  const c = coords as Params;
  const fields: Record<string, number | undefined> = {};
  for (const [name, value] of [
    ['latitude', c.latitude],
    ['longitude', c.longitude],
    ['speed', c.speed],
    ['heading', c.heading],
    ['accuracy', c.accuracy],
  ] as const) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) return bad(`location.coords.${name} must be a number`);
    fields[name] = value;
  }
  let recordedAt: string | undefined;
  if (timestamp !== undefined && timestamp !== null) {
    if (typeof timestamp !== 'string' && typeof timestamp !== 'number') return bad('location.timestamp must be a date');
    const parsed = parseTimestamp(timestamp);
    if (parsed instanceof Error) return bad(`location.${parsed.message}`);
    recordedAt = parsed;
  }
  return build(key, {
    lat: fields.latitude,
    lng: fields.longitude,
    speed: fields.speed,
    heading: fields.heading,
    accuracy: fields.accuracy,
    recordedAt,
  });
}
