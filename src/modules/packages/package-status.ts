// The package state machine as data (contract section 9): who may move a package from one status
// to another, and the webhook event that move fires.
import type { PackageStatus } from '../../db/tables/jobs.js';
import type { DeliveryEventName } from '../webhooks/outbox.js';
import { checkTransition, type TransitionCheck, type TransitionRule } from '../jobs/transitions.js';

export const PACKAGE_STATUSES: readonly PackageStatus[] = [
  'PENDING',
  'ASSIGNED',
  'PICKED_UP',
  'IN_TRANSIT',
  'DELIVERED',
  'FAILED',
  'CANCELLED',
];

/** Who acts, relative to the package (COMPANY: the assigned driver's, or one assigning its driver). */
export type PackageActor = 'CREATOR' | 'CUSTOMER' | 'DRIVER' | 'ASSIGNED_DRIVER' | 'COMPANY' | 'ADMIN';
export const PACKAGE_ACTORS: readonly PackageActor[] = [
  'CREATOR',
  'CUSTOMER',
  'DRIVER',
  'ASSIGNED_DRIVER',
  'COMPANY',
  'ADMIN',
];

export const PACKAGE_TRANSITIONS: readonly TransitionRule<PackageStatus, PackageActor, DeliveryEventName>[] = [
  { from: ['PENDING'], to: 'ASSIGNED', actors: ['DRIVER', 'COMPANY', 'ADMIN'], event: 'delivery.assigned' },
  { from: ['ASSIGNED'], to: 'PICKED_UP', actors: ['ASSIGNED_DRIVER'], event: 'delivery.picked_up' },
  { from: ['PICKED_UP'], to: 'IN_TRANSIT', actors: ['ASSIGNED_DRIVER'], event: 'delivery.in_transit' },
  { from: ['IN_TRANSIT'], to: 'DELIVERED', actors: ['ASSIGNED_DRIVER'], event: 'delivery.delivered' },
  {
    from: ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'],
    to: 'FAILED',
    actors: ['ASSIGNED_DRIVER', 'ADMIN'],
    event: 'delivery.failed',
  },
  { from: ['PENDING', 'ASSIGNED'], to: 'CANCELLED', actors: ['CREATOR', 'ADMIN'], event: 'delivery.cancelled' },
];

export const FINAL_PACKAGE_STATUSES: readonly PackageStatus[] = ['DELIVERED', 'FAILED', 'CANCELLED'];

export const checkPackageTransition = (
  from: PackageStatus,
  to: PackageStatus,
  actor: PackageActor,
): TransitionCheck<DeliveryEventName> => checkTransition(PACKAGE_TRANSITIONS, from, to, actor);
