// What the simulator's parts share: places, vehicles, money and the record of a job it created.

export type VehicleType = 'BIKE' | 'CAR' | 'VAN' | 'TRUCK';
export type JobType = 'PACKAGE' | 'RIDE';
export interface LatLng {
  lat: number;
  lng: number;
}

export interface Money {
  amount: number;
  currency: string;
}

export interface JobRecord {
  type: JobType;
  id: string;
  createdAt: number;
  assignedAt?: number;
  deliveryCode?: string;
  /** Cash on delivery to collect (minor units): sent as cashCollected with the delivery. */
  cashOnDelivery?: number;
  pickup: LatLng;
  dropoff: LatLng;
  vehicleType: VehicleType;
  outcome?: 'COMPLETED' | 'FAILED' | 'CANCELLED';
  /** Left over from an earlier run (not counted; its delivery code, if any, is unknown). */
  adopted?: boolean;
  /** The price locked from its quote, and a completed ride's final fare. */
  price?: Money;
  fare?: Money;
  /** Booked ahead (section 22), in the instance's time (epoch ms): a package's windows, a ride's scheduledAt. */
  pickupWindow?: Window;
  dropoffWindow?: Window;
  scheduledAt?: number;
  /** Made by one of the run's recurring jobs (not by the demand loop). */
  recurring?: boolean;
  /** Its driver waits at the pickup until the window has ended (--late-share). */
  lateOnPurpose?: boolean;
}

export interface Window {
  start: number;
  end: number;
}
