import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJson, decodeParams, deviceKeyOf, KNOT_MS, parseTimestamp } from './osmand-decode.js';

const KEY = `dk_${'a'.repeat(32)}`;

test('timestamps: Unix seconds (below 2^31), milliseconds, Traccar text (UTC) and ISO 8601 with its offset', () => {
  assert.equal(parseTimestamp('1764212400'), '2025-11-27T03:00:00.000Z');
  assert.equal(parseTimestamp(1764212400), '2025-11-27T03:00:00.000Z');
  assert.equal(parseTimestamp('1764212400123'), '2025-11-27T03:00:00.123Z');
  assert.equal(parseTimestamp('1764212400.5'), '2025-11-27T03:00:00.500Z');
  assert.equal(parseTimestamp('2025-11-27 03:00:00'), '2025-11-27T03:00:00.000Z');
  assert.equal(parseTimestamp('2025-11-27T06:00:00+03:00'), '2025-11-27T03:00:00.000Z');
  for (const bad of ['yesterday', '', '-5', '2025-13-45 99:00:00', 'NaN', '1e400'])
    assert.ok(parseTimestamp(bad) instanceof Error, bad);
});

test('query form: names and units as Traccar reads them', () => {
  const d = decodeParams({
    id: KEY,
    lat: '-1.5',
    lon: '36.25',
    speed: '10',
    bearing: '90',
    accuracy: '5',
    altitude: '1600',
    batt: '80',
  });
  assert.ok(d.ok);
  assert.deepEqual(d.message, {
    type: 'location',
    lat: -1.5,
    lng: 36.25,
    speed: 10 * KNOT_MS,
    heading: 90,
    accuracy: 5,
  });
  const alt = decodeParams({ deviceid: KEY, location: '1.25,2.5', heading: '45' });
  assert.ok(alt.ok);
  assert.equal(alt.key, KEY);
  assert.deepEqual(alt.message, { type: 'location', lat: 1.25, lng: 2.5, heading: 45 });
  // A repeated pair: its first value.
  const repeated = decodeParams({ id: [KEY, 'other'], lat: ['1', '2'], lon: '3' });
  assert.ok(repeated.ok && repeated.key === KEY && repeated.message.lat === 1);
  // The platforms' "unknown": left out.
  const unknown = decodeParams({ id: KEY, lat: '1', lon: '2', speed: '-1', bearing: '-1', accuracy: '-1' });
  assert.ok(unknown.ok);
  assert.deepEqual(unknown.message, { type: 'location', lat: 1, lng: 2 });
});

test('query form: a missing key is 401, bad values 400', () => {
  assert.deepEqual(decodeParams({ lat: '1', lon: '2' }), {
    ok: false,
    status: 401,
    message: 'Missing device key (id)',
  });
  assert.deepEqual(decodeParams({ id: KEY, lat: '1' }), {
    ok: false,
    status: 400,
    message: 'lat and lon are required',
  });
  assert.deepEqual(decodeParams({ id: KEY, lat: '1x', lon: '2' }), {
    ok: false,
    status: 400,
    message: 'lat must be a number',
  });
  assert.deepEqual(decodeParams({ id: KEY, lat: '1', lon: '2', speed: 'fast' }), {
    ok: false,
    status: 400,
    message: 'speed must be a number',
  });
  assert.deepEqual(decodeParams({ id: KEY, lat: 'Infinity', lon: '2' }), {
    ok: false,
    status: 400,
    message: 'lat must be a number',
  });
  assert.equal(decodeParams({ id: 'x'.repeat(129), lat: '1', lon: '2' }).ok, false);
});

test('JSON form of newer Traccar Clients', () => {
  const d = decodeJson(
    {
      device_id: KEY,
      location: {
        timestamp: '2025-11-27T03:00:00.000Z',
        coords: { latitude: 1, longitude: 2, speed: 3, heading: 4, accuracy: 5, altitude: 6 },
        is_moving: true,
      },
    },
    {},
  );
  assert.ok(d.ok);
  assert.deepEqual(d.message, {
    type: 'location',
    lat: 1,
    lng: 2,
    speed: 3,
    heading: 4,
    accuracy: 5,
    recordedAt: '2025-11-27T03:00:00.000Z',
  });
  assert.equal(decodeJson({ location: { coords: { latitude: 1, longitude: 2 } } }, { id: KEY }).ok, true);
  assert.deepEqual(decodeJson({ device_id: KEY }, {}), {
    ok: false,
    status: 400,
    message: 'location must be an object',
  });
  assert.deepEqual(decodeJson({ device_id: KEY, location: {} }, {}), {
    ok: false,
    status: 400,
    message: 'location.coords must be an object',
  });
  assert.deepEqual(decodeJson({ device_id: KEY, location: { coords: { latitude: '1', longitude: 2 } } }, {}), {
    ok: false,
    status: 400,
    message: 'location.coords.latitude must be a number',
  });
  assert.deepEqual(
    decodeJson({ device_id: KEY, location: { timestamp: 'soon', coords: { latitude: 1, longitude: 2 } } }, {}),
    {
      ok: false,
      status: 400,
      message: 'location.timestamp must be Unix seconds, milliseconds or an ISO 8601 date',
    },
  );
});

test('the key of a request, in whichever form it came', () => {
  assert.equal(deviceKeyOf(undefined, { id: KEY }), KEY);
  assert.equal(deviceKeyOf({ device_id: KEY }, {}), KEY);
  assert.equal(deviceKeyOf({ id: KEY }, {}), KEY);
  assert.equal(deviceKeyOf({ deviceid: [KEY] }, {}), KEY);
  assert.equal(deviceKeyOf(['x'], {}), undefined);
  assert.equal(deviceKeyOf({ device_id: 42 }, {}), undefined);
});
