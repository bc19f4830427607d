// The ride state machine as data (contract section 10).
import type { RideStatus } from '../../db/tables/jobs.js';
import { checkTransition, type TransitionCheck, type TransitionRule } from '../jobs/transitions.js';

export const RIDE_STATUSES: readonly RideStatus[] = [
  'REQUESTED',
  'ACCEPTED',
  'ARRIVED',
  'IN_PROGRESS',
  'COMPLETED',
  'CANCELLED',
  'EXPIRED',
];

/** CUSTOMER: the ride's passenger; SYSTEM: the expiry sweep. */
export type RideActor = 'CUSTOMER' | 'DRIVER' | 'ASSIGNED_DRIVER' | 'COMPANY' | 'ADMIN' | 'SYSTEM';
export const RIDE_ACTORS: readonly RideActor[] = [
  'CUSTOMER',
  'DRIVER',
  'ASSIGNED_DRIVER',
  'COMPANY',
  'ADMIN',
  'SYSTEM',
];

export type RideEvent =
  'ride.accepted' | 'ride.arrived' | 'ride.started' | 'ride.completed' | 'ride.cancelled' | 'ride.expired';

export const RIDE_TRANSITIONS: readonly TransitionRule<RideStatus, RideActor, RideEvent>[] = [
  { from: ['REQUESTED'], to: 'ACCEPTED', actors: ['DRIVER'], event: 'ride.accepted' },
  { from: ['ACCEPTED'], to: 'ARRIVED', actors: ['ASSIGNED_DRIVER'], event: 'ride.arrived' },
  { from: ['ARRIVED'], to: 'IN_PROGRESS', actors: ['ASSIGNED_DRIVER'], event: 'ride.started' },
  { from: ['IN_PROGRESS'], to: 'COMPLETED', actors: ['ASSIGNED_DRIVER'], event: 'ride.completed' },
  // A REQUESTED ride has no driver yet, so only its customer or an admin can cancel it then.
  { from: ['REQUESTED'], to: 'CANCELLED', actors: ['CUSTOMER', 'ADMIN'], event: 'ride.cancelled' },
  {
    from: ['ACCEPTED', 'ARRIVED'],
    to: 'CANCELLED',
    actors: ['CUSTOMER', 'ASSIGNED_DRIVER', 'ADMIN'],
    event: 'ride.cancelled',
  },
  { from: ['REQUESTED'], to: 'EXPIRED', actors: ['SYSTEM'], event: 'ride.expired' },
];

export const FINAL_RIDE_STATUSES: readonly RideStatus[] = ['COMPLETED', 'CANCELLED', 'EXPIRED'];

export const checkRideTransition = (from: RideStatus, to: RideStatus, actor: RideActor): TransitionCheck<RideEvent> =>
  checkTransition(RIDE_TRANSITIONS, from, to, actor);
