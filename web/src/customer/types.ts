// The shapes the customer app reads, from the generated schema.
import type { Schemas } from '../shared/api/types';

export interface Money {
  amount: number;
  currency: string;
}
export interface Point {
  lat: number;
  lng: number;
}

/** A ride as the API gives it: the driver with `rating` and `ratingCount`, `tip`, `cancellationFeeNow`. */
export type Ride = Schemas['/api/rides/{id}']['get']['responses'][200]['content']['application/json'];

/** `tip` and `cancellationFeeNow` (contract section 20), on rides and packages. */
export interface JobExtras {
  tip?: Money | null;
  cancellationFeeNow?: Money | null;
}

export type RideStatus = Ride['status'];
export type Quote = Schemas['/api/quotes']['post']['responses'][201]['content']['application/json'];
export type VehicleType = Schemas['/api/quotes']['post']['requestBody']['content']['application/json']['vehicleType'];

export const ACTIVE_RIDE: RideStatus[] = ['REQUESTED', 'ACCEPTED', 'ARRIVED', 'IN_PROGRESS'];

export const vehicleName = (v: string) => v.charAt(0) + v.slice(1).toLowerCase();
