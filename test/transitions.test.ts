// The two kinds of job's transition tables (packages/package-status.ts, rides/ride-status.ts) checked
// exhaustively against the contract; here in test/ so that jobs/ imports neither kind.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPackageTransition, PACKAGE_ACTORS, PACKAGE_STATUSES } from '../src/modules/packages/package-status.js';
import { checkRideTransition, RIDE_ACTORS, RIDE_STATUSES } from '../src/modules/rides/ride-status.js';
import type { TransitionCheck } from '../src/modules/jobs/transitions.js';

// Every allowed (from, to, actor) triple, written out by hand from contract section 9.
const PACKAGE_ALLOWED: Record<string, string> = {
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
// Every allowed (from, to, actor) triple, written out by hand from contract section 10.
const RIDE_ALLOWED: Record<string, string> = {
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

interface Machine<S extends string, A extends string> {
  statuses: readonly S[];
  actors: readonly A[];
  finals: readonly S[];
  allowed: Record<string, string>;
  check: (from: S, to: S, actor: A) => TransitionCheck<string>;
}

function exhaustively<S extends string, A extends string>(name: string, machine: Machine<S, A>) {
  // (from, to) pairs that exist for some actor: another actor gets ACTOR (403), everything else STATUS (409).
  const pairs = new Set(Object.keys(machine.allowed).map((k) => k.split('>').slice(0, 2).join('>')));

  test(`${name} transitions: every (from, to, actor) triple`, () => {
    let checked = 0;
    for (const from of machine.statuses) {
      for (const to of machine.statuses) {
        for (const actor of machine.actors) {
          const key = `${from}>${to}>${actor}`;
          const result = machine.check(from, to, actor);
          if (machine.allowed[key]) assert.deepEqual(result, { ok: true, event: machine.allowed[key] }, key);
          else assert.deepEqual(result, { ok: false, reason: pairs.has(`${from}>${to}`) ? 'ACTOR' : 'STATUS' }, key);
          checked += 1;
        }
      }
    }
    assert.equal(checked, 7 * 7 * 6);
  });

  test(`final ${name} statuses have no way out`, () => {
    for (const from of machine.finals) {
      for (const to of machine.statuses) {
        for (const actor of machine.actors) assert.equal(machine.check(from, to, actor).ok, false);
      }
    }
  });
}

exhaustively('package', {
  statuses: PACKAGE_STATUSES,
  actors: PACKAGE_ACTORS,
  finals: ['DELIVERED', 'FAILED', 'CANCELLED'],
  allowed: PACKAGE_ALLOWED,
  check: checkPackageTransition,
});
exhaustively('ride', {
  statuses: RIDE_STATUSES,
  actors: RIDE_ACTORS,
  finals: ['COMPLETED', 'CANCELLED', 'EXPIRED'],
  allowed: RIDE_ALLOWED,
  check: checkRideTransition,
});
