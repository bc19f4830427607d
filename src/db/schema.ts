// The whole database as Kysely sees it: the table groups of src/db/tables joined.
import type { AlertTables } from './tables/alerts.js';
import type { AuthTables } from './tables/auth.js';
import type { DeviceKeyTables } from './tables/device-keys.js';
import type { DispatchTables } from './tables/dispatch.js';
import type { FoundationTables } from './tables/foundation.js';
import type { IdempotencyTables } from './tables/idempotency.js';
import type { InvoiceTables } from './tables/invoices.js';
import type { JobTables } from './tables/jobs.js';
import type { LedgerTables } from './tables/ledger.js';
import type { MpesaTables } from './tables/mpesa.js';
import type { PricingTables } from './tables/pricing.js';
import type { PushTables } from './tables/push.js';
import type { RatingTables } from './tables/ratings.js';
import type { RecurringTables } from './tables/recurring.js';
import type { RouteTables } from './tables/routes.js';
import type { SmsTables } from './tables/sms.js';
import type { WebhookTables } from './tables/webhooks.js';

export type * from './tables/foundation.js';

export interface Database
  extends
    FoundationTables,
    AuthTables,
    JobTables,
    IdempotencyTables,
    WebhookTables,
    DispatchTables,
    PricingTables,
    LedgerTables,
    PushTables,
    InvoiceTables,
    DeviceKeyTables,
    RatingTables,
    MpesaTables,
    RecurringTables,
    AlertTables,
    RouteTables,
    SmsTables {}
