// Routes (contract section 24, migration 0030): vehicle capacities and each driver's route.
import type { Generated } from 'kysely';
import type { VehicleType } from './foundation.js';

export interface VehicleCapacitiesTable {
  vehicle_type: VehicleType;
  parcels: number;
  kg: number;
  updated_at: Generated<Date>;
}

export interface DriverRoutesTable {
  driver_id: string;
  version: Generated<number>;
  /** Stop ids in the driver's chosen order (jsonb array). */
  stop_order: Generated<string[] | string>;
  updated_at: Generated<Date>;
}

export interface RouteTables {
  vehicle_capacities: VehicleCapacitiesTable;
  driver_routes: DriverRoutesTable;
}
