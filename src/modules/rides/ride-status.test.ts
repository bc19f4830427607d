import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRideTransition, RIDE_ACTORS, RIDE_STATUSES } from './ride-status.js';

// Every allowed (from, to, actor) triple, written out by hand from contract section 10.
const ALLOWED: Record<string, string> = {
  'REQUESTED>ACCEPTED>DRIVER': 'ride.accepted',
  'ACCEPTED>ARRIVED>ASSIGNED_DRIVER': 'ride.arrived',
  'ARRIVED>IN_PROGRESS>ASSIGNED_DRIVER': 'ride.started',
  'IN_PROGRESS>COMPLETED>ASSIGNED_DRIVER': 'ride.completed',
  'REQUESTED>CANCELLED>CUSTOMER': 'ride.cancelled',
  'REQUESTED>CANCELLED>ADMIN': 'ride.cancelled',
  'ACCEPTED>CANCELLED>CUSTOMER': 'ride.cancelled',
  'ACCEPTED>CANCELLED>ASSIGNED_DRIVER': 'ride.cancelled',
  'ACCEPTED>CANCELLED>ADMIN': 'ride.cancelled',
  'ARRIVED>CANCELLED>CUSTOMER': 'ride.cancelled',
  'ARRIVED>CANCELLED>ASSIGNED_DRIVER': 'ride.cancelled',
  'ARRIVED>CANCELLED>ADMIN': 'ride.cancelled',
  'REQUESTED>EXPIRED>SYSTEM': 'ride.expired',
};
const PAIRS = new Set(Object.keys(ALLOWED).map((k) => k.split('>').slice(0, 2).join('>')));

test('ride transitions: every (from, to, actor) triple', () => {
  let checked = 0;
  for (const from of RIDE_STATUSES) {
    for (const to of RIDE_STATUSES) {
      for (const actor of RIDE_ACTORS) {
        const key = `${from}>${to}>${actor}`;
        const result = checkRideTransition(from, to, actor);
        if (ALLOWED[key]) assert.deepEqual(result, { ok: true, event: ALLOWED[key] }, key);
        else assert.deepEqual(result, { ok: false, reason: PAIRS.has(`${from}>${to}`) ? 'ACTOR' : 'STATUS' }, key);
        checked += 1;
      }
    }
  }
  assert.equal(checked, 7 * 7 * 6);
});

test('final ride statuses have no way out', () => {
  for (const from of ['COMPLETED', 'CANCELLED', 'EXPIRED'] as const) {
    for (const to of RIDE_STATUSES) {
      for (const actor of RIDE_ACTORS) assert.equal(checkRideTransition(from, to, actor).ok, false);
    }
  }
});
