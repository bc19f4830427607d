// Dispatch's shapes: an offer as the driver receives it, the service's dependencies, the waiting statuses.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../../config.js';
import type { VehicleType } from '../../db/schema.js';
import type { JobTypeName } from '../../db/tables/dispatch.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import type { DriverIndex } from '../matching/driver-index.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import type { DispatchRepository, DispatchJob } from './dispatch.repository.js';
import type { BatchFit } from './policy.js';

export const WAITING: Record<JobTypeName, string> = { PACKAGE: 'PENDING', RIDE: 'REQUESTED' };
export const ORDER_TYPE = { PACKAGE: 'PACKAGE_DELIVERY', RIDE: 'RIDE' } as const;

export interface Offer {
  id: string;
  jobType: JobTypeName;
  jobId: string;
  pickup: { location: { lat: number; lng: number }; address?: string };
  dropoff?: { location: { lat: number; lng: number } };
  vehicleType: DispatchJob['vehicleType'];
  distanceMeters: number;
  etaSeconds: number;
  /** What the job pays (section 18). */
  price: DispatchJob['price'];
  /** What the driver would earn from the price (section 21). */
  earnings: DispatchJob['earnings'];
  customerRating: DispatchJob['customerRating'];
  expiresAt: string;
  /** Offered to a driver on a route (section 24): the seconds the job adds to it, the stops before its drop-off. */
  batch?: { addedSeconds: number; stopsBefore: number };
}

/** Takes the job as a direct accept does; `record` stores a keyed request's answer in its transaction. */
type Acceptor = (jobId: string, auth: AuthContext, record?: RecordAnswer) => Promise<unknown>;

export interface DispatchDeps {
  repo: DispatchRepository;
  bus: Bus;
  clock: Clock;
  logger: Logger;
  config: Pick<Config, 'dispatch' | 'drivers'>;
  index: DriverIndex;
  registry: Registry;
  /** How each kind of job is accepted (the packages' and rides' services, built after this one: called only once requests run). */
  acceptors: Record<JobTypeName, Acceptor>;
  /**
   * The job's fit into the routes of candidate drivers already on one (section 24, modules/routes);
   * unset: drivers on a route are not offered packages.
   */
  batcher?: {
    evaluate(
      jobId: string,
      drivers: readonly { id: string; position: { lat: number; lng: number } | null }[],
      nowMs: number,
    ): Promise<ReadonlyMap<string, BatchFit>>;
  };
  /** Told of each offer this instance makes (Web Push to the driver's phones, modules/push); must not block. */
  offerMade?: (driverId: string, offer: Offer) => void;
  /**
   * The driver's way to the pickup by road (the router, contract section 25), for the offer's ETA and
   * distance; unset (ROUTER=straight): the straight estimate the candidates were ranked by.
   */
  roadEta?: (
    from: { lat: number; lng: number },
    to: { lat: number; lng: number },
    vehicleType: VehicleType,
  ) => Promise<{ distanceMeters: number; durationSeconds: number }>;
}
