// Services: what createServices (services.ts) builds, for the routes and the background work alike.
import type { IdempotencyStore } from './http/idempotency.js';
import type { AdminService } from './modules/admin/admin.service.js';
import type { SchedulingService } from './modules/scheduling/scheduling.service.js';
import type { AccountService } from './modules/auth/accounts.service.js';
import type { AuthService } from './modules/auth/auth.service.js';
import type { CodesService } from './modules/auth/codes.service.js';
import type { PasswordService } from './modules/auth/passwords.service.js';
import type { SessionsService } from './modules/auth/sessions.service.js';
import type { TokenService } from './modules/auth/tokens.js';
import type { CountriesService } from './modules/countries/countries.service.js';
import type { DriversService } from './modules/drivers/drivers.service.js';
import type { PositionIntake } from './modules/drivers/position-intake.js';
import type { ProfilesService } from './modules/profiles/profiles.service.js';
import type { RoutesService } from './modules/routes/routes.service.js';
import type { DeviceKeysService } from './modules/device-keys/device-keys.service.js';
import type { DriverJobsService } from './modules/jobs/driver-jobs.service.js';
import type { InvoiceService } from './modules/invoices/invoices.service.js';
import type { EarningsService } from './modules/earnings/earnings.service.js';
import type { DriverEarningsReports } from './modules/earnings/driver-earnings.service.js';
import type { LedgerService } from './modules/ledger/ledger.service.js';
import type { PayoutService } from './modules/payouts/payouts.service.js';
import type { SettlementService } from './modules/ledger/settlements.service.js';
import type { MpesaB2cPayouts } from './modules/mpesa/b2c-payouts.service.js';
import type { StkCollections } from './modules/payments/stk-collections.service.js';
import type { LiveDrivers } from './modules/matching/live-drivers.js';
import type { MatchingService } from './modules/matching/matching.service.js';
import type { PricingService } from './modules/pricing/pricing.service.js';
import type { Router } from './modules/routing/router.js';
import type { PackageService } from './modules/packages/packages.service.js';
import type { RideService } from './modules/rides/rides.service.js';
import type { RatingsService } from './modules/ratings/ratings.service.js';
import type { OptimizerService } from './modules/optimizer/optimizer.service.js';
import type { GeocodingService } from './modules/geocoding/geocoding.service.js';
import type { WebhookWorker } from './modules/webhooks/webhook-worker.js';
import type { WebhooksService } from './modules/webhooks/webhooks.service.js';
import type { SmsService } from './modules/sms/sms.service.js';
import type { LocalesService } from './modules/locales/locales.service.js';
import type { DispatchService } from './modules/dispatch/dispatch.service.js';
import type { LiveMap } from './modules/tracking/live-map.js';
import type { TrackingHub } from './modules/tracking/tracking-hub.js';
import type { TrackingService } from './modules/tracking/tracking.service.js';
import type { PushService } from './modules/push/push.service.js';
import type { ProofService } from './modules/proof/proof.service.js';
import type { AuthGuard } from './http/authenticate.js';
import type { OsmAndIntake } from './modules/device-keys/osmand-intake.js';
import type { RecurringService } from './modules/recurring/recurring.service.js';
import type { AlertsService } from './modules/alerts/alerts.service.js';

export interface Services {
  tokens: TokenService;
  /** Every SMS: the catalog's text in the recipient's language, segments counted, logged (section 27). */
  sms: SmsService;
  /** The language of whoever the server writes to (section 27). */
  locales: LocalesService;
  accounts: AccountService;
  codes: CodesService;
  sessions: SessionsService;
  passwords: PasswordService;
  auth: AuthService;
  admin: AdminService;
  /** Countries: the public list and their administration. */
  countries: CountriesService;
  /** This process's live driver index (loaded and written behind by background.ts). */
  live: LiveDrivers;
  /** Every driver position's way in: validation, plausibility (MAX_PLAUSIBLE_SPEED), then the live index. */
  positions: PositionIntake;
  matching: MatchingService;
  drivers: DriversService;
  /** A driver's profile fields, the business's and the company's profiles. */
  profiles: ProfilesService;
  /** Drivers' maxActiveJobs, vehicle capacities, a driver's route (section 24). */
  routes: RoutesService;
  /** Drivers' keys for Traccar Client (OsmAnd positions). */
  deviceKeys: DeviceKeysService;
  driverJobs: DriverJobsService;
  packages: PackageService;
  rides: RideService;
  idempotency: IdempotencyStore;
  webhooks: WebhooksService;
  dispatch: DispatchService;
  pricing: PricingService;
  /** How far and how long trips are (ROUTER); a graph loads in the background (`loaded`). */
  router: Router & { loaded: Promise<void> };
  tracking: TrackingService;
  /** This process's followers of jobs (tracking streams). */
  trackingHub: TrackingHub;
  liveMap: LiveMap;
  /** Sends the webhook outbox (started by background.ts where this process runs the webhook worker). */
  webhookWorker: WebhookWorker;
  ledger: LedgerService;
  earnings: EarningsService;
  /** One driver's earnings report for an admin or the driver's company. */
  driverEarnings: DriverEarningsReports;
  settlements: SettlementService;
  payouts: PayoutService;
  /** M-Pesa B2C payouts (section 26); undefined while M-Pesa is off. */
  mpesaB2c: MpesaB2cPayouts | undefined;
  /** Customers paying by M-Pesa STK Push, and refunds (section 26); undefined without M-Pesa. */
  stk: StkCollections | undefined;
  /** Web Push subscriptions and the pushes of offers and of customers' jobs (off without VAPID keys). */
  push: PushService;
  invoices: InvoiceService;
  ratings: RatingsService;
  geocoding: GeocodingService;
  /** Proof of delivery: its images in PostgreSQL, or in the S3 bucket when S3_BUCKET is set. */
  proof: ProofService;
  /** Checks bearer tokens and their sessions (the routes' onRequest hook). */
  guard: AuthGuard;
  /** Traccar Client's positions (OsmAnd protocol), authenticated by device key. */
  osmand: OsmAndIntake;
  /** POST /optimizations: the solver's thread, or OPTIMIZER_URL. */
  optimizer: OptimizerService;
  /** Scheduled jobs (section 22): their lead and their durable wake-up (polled by background.ts). */
  scheduling: SchedulingService;
  /** Recurring jobs: templates and their occurrences, materialised by background.ts. */
  recurring: RecurringService;
  /** Lateness alerts (section 23): the monitor (polled by background.ts), the list, acknowledge and resolve. */
  alerts: AlertsService;
  /** Drops the services' bus subscriptions and caches (the connections are deps'). */
  close(): void;
}
