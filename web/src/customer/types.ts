// The shapes the customer app reads, from the generated schema, with the fields that other parts of
// this wave add (ratings, tips, the fee of cancelling now) as optional until the schema has them.
import type { Schemas } from '../shared/api/types';

export interface Money {
  amount: number;
  currency: string;
}
export interface Point {
  lat: number;
  lng: number;
}

type ApiRide = Schemas['/api/rides/{id}']['get']['responses'][200]['content']['application/json'];
type ApiDriver = NonNullable<ApiRide['driver']>;

/** What the app shows of a job's driver: `rating` and `ratingCount` come with the ratings API. */
export type JobDriver = ApiDriver & { rating?: number | null; ratingCount?: number };

/** `tip` and `cancellationFeeNow` (contract section 20), absent until the API gives them. */
export interface JobExtras {
  tip?: Money | null;
  cancellationFeeNow?: Money | null;
}

export type Ride = Omit<ApiRide, 'driver'> & JobExtras & { driver: JobDriver | null };
export type RideStatus = Ride['status'];
export type Quote = Schemas['/api/quotes']['post']['responses'][201]['content']['application/json'];
export type VehicleType = Schemas['/api/quotes']['post']['requestBody']['content']['application/json']['vehicleType'];

export const ACTIVE_RIDE: RideStatus[] = ['REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS'];

export const vehicleName = (v: string) => v.charAt(0) + v.slice(1).toLowerCase();
