import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_auth.js';
import * as m0003 from './0003_drivers.js';
import * as m0004 from './0004_packages.js';
import * as m0005 from './0005_webhooks.js';
import * as m0006 from './0006_package_history_column.js';
import * as m0007 from './0007_ride_history_column.js';
import * as m0009 from './0009_dispatch.js';
import * as m0010 from './0010_pricing.js';
import * as m0011 from './0011_job_prices.js';
import * as m0012 from './0012_tracking.js';
import * as m0016 from './0016_ledger.js';
import * as m0017 from './0017_payouts.js';
import * as m0018 from './0018_earnings.js';
import * as m0019 from './0019_ratings_tips.js';
import * as m0020 from './0020_push.js';
import * as m0021 from './0021_device_keys.js';
import * as m0022 from './0022_proof.js';
import * as m0023 from './0023_invoices.js';
import * as m0024 from './0024_receipt_lists.js';
import * as m0025 from './0025_scheduling.js';
import * as m0026 from './0026_recurring_jobs.js';
import * as m0027 from './0027_mpesa.js';
import * as m0028 from './0028_alerts.js';
import * as m0029 from './0029_failed_deliveries.js';
import * as m0030 from './0030_routes.js';
import * as m0031 from './0031_mpesa_stk.js';
import * as m0032 from './0032_locales.js';

export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_auth': m0002,
  '0003_drivers': m0003,
  '0004_packages': m0004,
  '0005_webhooks': m0005,
  '0006_package_history_column': m0006,
  '0007_ride_history_column': m0007,
  '0009_dispatch': m0009,
  '0010_pricing': m0010,
  '0011_job_prices': m0011,
  '0012_tracking': m0012,
  '0016_ledger': m0016,
  '0017_payouts': m0017,
  '0018_earnings': m0018,
  '0019_ratings_tips': m0019,
  '0020_push': m0020,
  '0021_device_keys': m0021,
  '0022_proof': m0022,
  '0023_invoices': m0023,
  '0024_receipt_lists': m0024,
  '0025_scheduling': m0025,
  '0026_recurring_jobs': m0026,
  '0027_mpesa': m0027,
  '0028_alerts': m0028,
  '0029_failed_deliveries': m0029,
  '0030_routes': m0030,
  '0031_mpesa_stk': m0031,
  '0032_locales': m0032,
};
