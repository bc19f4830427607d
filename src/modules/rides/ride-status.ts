// The ride state machine as data (contract section 10). Pure: no I/O.
import type { RideStatus } from '../../db/tables/jobs.js';

export const RIDE_STATUSES: readonly RideStatus[] = ['REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED', 'EXPIRED'];

/** CUSTOMER: the ride's passenger; SYSTEM: the expiry sweep. */
export type RideActor = 'CUSTOMER' | 'DRIVER' | 'ASSIGNED_DRIVER' | 'COMPANY' | 'ADMIN' | 'SYSTEM';
export const RIDE_ACTORS: readonly RideActor[] = ['CUSTOMER', 'DRIVER', 'ASSIGNED_DRIVER', 'COMPANY', 'ADMIN', 'SYSTEM'];

export type RideEvent = 'ride.accepted' | 'ride.arrived' | 'ride.started' | 'ride.completed' | 'ride.cancelled' | 'ride.expired';

interface Rule {
  from: readonly RideStatus[];
  to: RideStatus;
  actors: readonly RideActor[];
  event: RideEvent;
}

export const RIDE_TRANSITIONS: readonly Rule[] = [
  { from: ['REQUESTED'], to: 'ACCEPTED', actors: ['DRIVER'], event: 'ride.accepted' },
  { from: ['ACCEPTED'], to: 'ARRIVED', actors: ['ASSIGNED_DRIVER'], event: 'ride.arrived' },
  { from: ['ARRIVED'], to: 'IN_PROGRESS', actors: ['ASSIGNED_DRIVER'], event: 'ride.started' },
  { from: ['IN_PROGRESS'], to: 'COMPLETED', actors: ['ASSIGNED_DRIVER'], event: 'ride.completed' },
  // A REQUESTED ride has no driver yet, so only its customer or an admin can cancel it then.
  { from: ['REQUESTED'], to: 'CANCELLED', actors: ['CUSTOMER', 'ADMIN'], event: 'ride.cancelled' },
  { from: ['ACCEPTED', 'ARRIVED'], to: 'CANCELLED', actors: ['CUSTOMER', 'ASSIGNED_DRIVER', 'ADMIN'], event: 'ride.cancelled' },
  { from: ['REQUESTED'], to: 'EXPIRED', actors: ['SYSTEM'], event: 'ride.expired' },
];

export const FINAL_RIDE_STATUSES: readonly RideStatus[] = ['COMPLETED', 'CANCELLED', 'EXPIRED'];

export type RideTransitionCheck = { ok: true; event: RideEvent } | { ok: false; reason: 'STATUS' | 'ACTOR' };

export function checkRideTransition(from: RideStatus, to: RideStatus, actor: RideActor): RideTransitionCheck {
  const rules = RIDE_TRANSITIONS.filter((r) => r.to === to && r.from.includes(from));
  if (!rules.length) return { ok: false, reason: 'STATUS' };
  const rule = rules.find((r) => r.actors.includes(actor));
  if (!rule) return { ok: false, reason: 'ACTOR' };
  return { ok: true, event: rule.event };
}
