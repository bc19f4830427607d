import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPackageTransition, PACKAGE_ACTORS, PACKAGE_STATUSES } from '../packages/package-status.js';

// Every allowed (from, to, actor) triple, written out by hand from contract section 9.
const ALLOWED: Record<string, string> = {
  'PENDING>ASSIGNED>DRIVER': 'delivery.assigned',
  'PENDING>ASSIGNED>COMPANY': 'delivery.assigned',
  'PENDING>ASSIGNED>ADMIN': 'delivery.assigned',
  'ASSIGNED>PICKED_UP>ASSIGNED_DRIVER': 'delivery.picked_up',
  'PICKED_UP>IN_TRANSIT>ASSIGNED_DRIVER': 'delivery.in_transit',
  'IN_TRANSIT>DELIVERED>ASSIGNED_DRIVER': 'delivery.delivered',
  'ASSIGNED>FAILED>ASSIGNED_DRIVER': 'delivery.failed',
  'ASSIGNED>FAILED>ADMIN': 'delivery.failed',
  'PICKED_UP>FAILED>ASSIGNED_DRIVER': 'delivery.failed',
  'PICKED_UP>FAILED>ADMIN': 'delivery.failed',
  'IN_TRANSIT>FAILED>ASSIGNED_DRIVER': 'delivery.failed',
  'IN_TRANSIT>FAILED>ADMIN': 'delivery.failed',
  'PENDING>CANCELLED>CREATOR': 'delivery.cancelled',
  'PENDING>CANCELLED>ADMIN': 'delivery.cancelled',
  'ASSIGNED>CANCELLED>CREATOR': 'delivery.cancelled',
  'ASSIGNED>CANCELLED>ADMIN': 'delivery.cancelled',
};
// (from, to) pairs that exist for some actor: another actor gets ACTOR (403), everything else STATUS (409).
const PAIRS = new Set(Object.keys(ALLOWED).map((k) => k.split('>').slice(0, 2).join('>')));

test('package transitions: every (from, to, actor) triple', () => {
  let checked = 0;
  for (const from of PACKAGE_STATUSES) {
    for (const to of PACKAGE_STATUSES) {
      for (const actor of PACKAGE_ACTORS) {
        const key = `${from}>${to}>${actor}`;
        const result = checkPackageTransition(from, to, actor);
        if (ALLOWED[key]) assert.deepEqual(result, { ok: true, event: ALLOWED[key] }, key);
        else assert.deepEqual(result, { ok: false, reason: PAIRS.has(`${from}>${to}`) ? 'ACTOR' : 'STATUS' }, key);
        checked += 1;
      }
    }
  }
  assert.equal(checked, 7 * 7 * 6);
});

test('final statuses have no way out', () => {
  for (const from of ['DELIVERED', 'FAILED', 'CANCELLED'] as const) {
    for (const to of PACKAGE_STATUSES) {
      for (const actor of PACKAGE_ACTORS) assert.equal(checkPackageTransition(from, to, actor).ok, false);
    }
  }
});
