// Kysely type of the drivers' device keys (see src/db/migrations/0021_device_keys.ts).
import type { ColumnType } from 'kysely';
import type { Nullish } from './foundation.js';

export interface DeviceKeysTable {
  id: string;
  driver_id: string;
  name: string;
  key_hash: string;
  created_at: ColumnType<Date, Date, never>;
  last_used_at: Nullish<Date>;
}

export interface DeviceKeyTables {
  device_keys: DeviceKeysTable;
}
