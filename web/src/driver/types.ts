// The API's shapes the driver app uses (from the generated schema) and the socket's messages
// (contract sections 7 and 13; not in the OpenAPI document, typed by hand).
import type { Schemas } from '../shared/api/types';

type Json<T> = T extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

export type Package = Json<Schemas['/api/packages/{id}']['get']>;
export type Ride = Json<Schemas['/api/rides/{id}']['get']>;
export type Offer = Json<Schemas['/api/drivers/me/offers']['get']>['offers'][number];
export type DriverJobs = Json<Schemas['/api/drivers/me/jobs']['get']>;
export type DriverJob = DriverJobs['recent'][number];
export type Driver = Json<Schemas['/api/drivers/me']['get']>;

/** The current job as the app shows it: the package or the ride, whichever it is. */
export type Job = { jobType: 'PACKAGE'; job: Package } | { jobType: 'RIDE'; job: Ride };

export type ServerMessage =
  | { type: 'offer'; offer: Offer }
  | { type: 'offer.withdrawn'; offerId: string; jobType: string; jobId: string; state: string }
  | { type: 'job.assigned' | 'job.updated'; jobType: string; jobId: string; status: string }
  | { type: 'job.nearby' }
  | { type: 'error'; message: string }
  | { type: 'pong' };
