// createServices(deps): every service built once, for the routes and the background work alike.
import { createHmac } from 'node:crypto';
import type { Deps } from './deps.js';
import type { Services } from './services-types.js';
import { IdempotencyStore } from './http/idempotency.js';
import { IdempotencyRepository } from './http/idempotency.repository.js';
import { AdminService } from './modules/admin/admin.service.js';
import { SchedulingRepository } from './modules/scheduling/scheduling.repository.js';
import { SchedulingService } from './modules/scheduling/scheduling.service.js';
import { SurgeGrid } from './modules/pricing/surge.js';
import { AvailabilityRepository } from './modules/pricing/availability.repository.js';
import { QuoteTiming } from './modules/pricing/quote-timing.js';
import { AccountService } from './modules/auth/accounts.service.js';
import { AuthService } from './modules/auth/auth.service.js';
import { CodesRepository } from './modules/auth/codes.repository.js';
import { CodesService } from './modules/auth/codes.service.js';
import { PasswordService } from './modules/auth/passwords.service.js';
import { SessionsRepository } from './modules/auth/sessions.repository.js';
import { SessionsService } from './modules/auth/sessions.service.js';
import { TokenService } from './modules/auth/tokens.js';
import { UsersRepository } from './modules/auth/users.repository.js';
import { CountriesRepository } from './modules/countries/countries.repository.js';
import { CountriesService } from './modules/countries/countries.service.js';
import { DriversRepository } from './modules/drivers/drivers.repository.js';
import { DriversService } from './modules/drivers/drivers.service.js';
import { PositionIntake } from './modules/drivers/position-intake.js';
import { ProfilesRepository } from './modules/profiles/profiles.repository.js';
import { ProfilesService } from './modules/profiles/profiles.service.js';
import { RoutesRepository } from './modules/routes/routes.repository.js';
import { RoutesService } from './modules/routes/routes.service.js';
import { RouteBatcher } from './modules/routes/batching.js';
import { DeviceKeysRepository } from './modules/device-keys/device-keys.repository.js';
import { DeviceKeysService } from './modules/device-keys/device-keys.service.js';
import { DriverJobsRepository } from './modules/jobs/driver-jobs.repository.js';
import { DriverJobsService } from './modules/jobs/driver-jobs.service.js';
import { followJobChanges } from './modules/jobs/job-events.js';
import { InvoicesRepository } from './modules/invoices/invoices.repository.js';
import { InvoiceService } from './modules/invoices/invoices.service.js';
import { EarningsRepository } from './modules/earnings/earnings.repository.js';
import { EarningsService } from './modules/earnings/earnings.service.js';
import { DriverEarningsReports } from './modules/earnings/driver-earnings.service.js';
import { JobMoney } from './modules/jobs/job-money-hook.js';
import { LedgerRepository } from './modules/ledger/ledger.repository.js';
import { LedgerService } from './modules/ledger/ledger.service.js';
import { PayoutsRepository } from './modules/payouts/payouts.repository.js';
import { PayoutService } from './modules/payouts/payouts.service.js';
import { ReceiptsRepository } from './modules/ledger/receipts.repository.js';
import { SettlementService } from './modules/ledger/settlements.service.js';
import { MpesaB2cPayouts } from './modules/mpesa/b2c-payouts.service.js';
import { DarajaClient } from './modules/mpesa/daraja-client.js';
import { MpesaRepository } from './modules/mpesa/mpesa.repository.js';
import { createStkCollections } from './modules/payments/create-stk.js';
import { DriverLocationsRepository } from './modules/matching/driver-locations.repository.js';
import { LiveDrivers } from './modules/matching/live-drivers.js';
import { MatchingService } from './modules/matching/matching.service.js';
import { PricingService } from './modules/pricing/pricing.service.js';
import { createRouter } from './modules/routing/create-router.js';
import { createQuoteStore } from './modules/pricing/quote-store.js';
import { QuotesRepository } from './modules/pricing/quotes.repository.js';
import { TariffsRepository } from './modules/pricing/tariffs.repository.js';
import { OpenJobsRepository } from './modules/pricing/open-jobs.repository.js';
import { FollowUpsRepository } from './modules/packages/follow-ups.repository.js';
import { PackagesRepository } from './modules/packages/packages.repository.js';
import { PackageService } from './modules/packages/packages.service.js';
import { RidesRepository } from './modules/rides/rides.repository.js';
import { RideService } from './modules/rides/rides.service.js';
import { RatingsRepository } from './modules/ratings/ratings.repository.js';
import { RatingsService } from './modules/ratings/ratings.service.js';
import { OptimizerService } from './modules/optimizer/optimizer.service.js';
import { routerMatrix } from './modules/optimizer/matrix.js';
import { GeocodingService } from './modules/geocoding/geocoding.service.js';
import { OutboxRepository } from './modules/webhooks/outbox.repository.js';
import { WebhookWorker } from './modules/webhooks/webhook-worker.js';
import { WebhooksRepository } from './modules/webhooks/webhooks.repository.js';
import { WebhooksService } from './modules/webhooks/webhooks.service.js';
import { createSmsSender } from './sms/sms.js';
import { formatClock } from './i18n/i18n.js';
import { LocalesRepository } from './modules/locales/locales.repository.js';
import { LocalesService } from './modules/locales/locales.service.js';
import { SmsLogRepository } from './modules/sms/sms-log.repository.js';
import { SmsService } from './modules/sms/sms.service.js';
import { DispatchRepository } from './modules/dispatch/dispatch.repository.js';
import { DispatchService } from './modules/dispatch/dispatch.service.js';
import { LiveMap } from './modules/tracking/live-map.js';
import { TrackingHub } from './modules/tracking/tracking-hub.js';
import { TrackingRepository } from './modules/tracking/tracking.repository.js';
import { TrackingService } from './modules/tracking/tracking.service.js';
import { TrackingTokens } from './modules/tracking/tracking-tokens.js';
import { createPush } from './modules/push/create-push.js';
import { PostgresProofStorage, ProofRepository } from './modules/proof/proof.repository.js';
import { ProofService } from './modules/proof/proof.service.js';
import type { ProofStorage } from './modules/proof/proof-storage.js';
import { S3ProofStorage } from './modules/proof/s3-storage.js';
import { AuthGuard } from './http/authenticate.js';
import { SessionStateRepository } from './http/session-state.repository.js';
import { createKeyedLimiter } from './http/rate-limit.js';
import { OsmAndIntake } from './modules/device-keys/osmand-intake.js';
import { RecurringRepository } from './modules/recurring/recurring.repository.js';
import { RecurringService } from './modules/recurring/recurring.service.js';
import { AlertsRepository } from './modules/alerts/alerts.repository.js';
import { AlertsService, mayFollowAlert } from './modules/alerts/alerts.service.js';

export type { Services } from './services-types.js';

export async function createServices(deps: Deps): Promise<Services> {
  const { config, clock, bus } = deps;
  const db = deps.database.db;
  const tokens = new TokenService({
    secret: config.auth.jwtSecret,
    issuer: config.auth.jwtIssuer,
    audience: config.auth.jwtAudience,
    accessTtlMs: config.auth.accessTokenTtlMs,
    clock,
  });
  const locales = new LocalesService({ repo: new LocalesRepository(db) });
  const sms = new SmsService({
    sender: createSmsSender(config, deps.logger, clock),
    log: new SmsLogRepository(db),
    clock,
    logger: deps.logger,
  });
  const users = new UsersRepository(db);
  const countries = new CountriesRepository(db);
  const profilesRepo = new ProfilesRepository(db);
  const accounts = new AccountService({ db, clock, users, countries, profiles: profilesRepo });
  const codes = new CodesService({
    repo: new CodesRepository(db),
    clock,
    config,
    codeKey: createHmac('sha256', config.auth.jwtSecret).update('otp-code-key').digest('hex'),
    sms,
    locales,
  });
  // A live session signed out: a driver goes OFFLINE (nobody is behind the phone), the phone's push goes
  // (drivers and push are built below; the hook runs only once requests arrive).
  const sessions = new SessionsService(
    { repo: new SessionsRepository(db), clock, config, tokens, bus },
    async (ended, pushEndpoint) => {
      if (ended.role === 'DRIVER') await drivers.signedOut(ended.userId);
      if (pushEndpoint) await push.forget(ended.userId, pushEndpoint);
    },
  );
  const passwords = new PasswordService({ db, clock, users, codes, sessions });
  const auth = new AuthService({ db, users, accounts, codes, passwords, sessions });
  // Dispatch, the tracking hub and the job services are built below; these hooks run only once
  // positions and requests arrive, after createServices has returned.
  const live = new LiveDrivers(
    {
      repo: new DriverLocationsRepository(db),
      bus,
      clock,
      logger: deps.logger,
      registry: deps.metrics.registry,
      redis: deps.redis,
      redisHealth: deps.redisHealth,
      config,
    },
    {
      onAvailable: (driverId, cameOnline) => dispatch.driverAvailable(driverId, cameOnline),
      onPosition: (driverId, position) => trackingHub.position(driverId, position),
    },
  );
  const positions = new PositionIntake({
    live,
    registry: deps.metrics.registry,
    maxPlausibleSpeedKmh: config.drivers.maxPlausibleSpeedKmh,
  });
  const driversRepo = new DriversRepository(db);
  const push = await createPush(config, {
    db,
    clock,
    logger: deps.logger,
    registry: deps.metrics.registry,
    readerOf: (userId) => locales.forUser(userId),
  });
  const router = createRouter(config.routing, { registry: deps.metrics.registry, logger: deps.logger });
  const routesRepo = new RoutesRepository(db);
  const dispatch: DispatchService = new DispatchService({
    repo: new DispatchRepository(db),
    bus,
    clock,
    logger: deps.logger,
    config,
    index: live.index,
    registry: deps.metrics.registry,
    acceptors: {
      PACKAGE: (id, auth, record) => packages.accept(id, auth, record),
      RIDE: (id, auth, record) => rides.accept(id, auth, record),
    },
    offerMade: (driverId, offer) => push.offerMade(driverId, offer),
    // Section 24: a package fits a running route (its cheapest insertion within BATCH_MAX_DETOUR).
    batcher: new RouteBatcher({ db, repo: routesRepo, maxDetourMs: config.dispatch.batchMaxDetourMs }),
    // An offer's ETA by road (ROUTER other than straight); the candidates are still ranked by the straight estimate.
    roadEta:
      config.routing.kind === 'straight' ? undefined : (from, to, vehicleType) => router.route(from, to, vehicleType),
  });
  const quotesRepo = new QuotesRepository(db);
  const pricing = new PricingService(
    {
      db,
      quotes: quotesRepo,
      tariffs: new TariffsRepository(db),
      openJobs: new OpenJobsRepository(db),
      quoteStore: createQuoteStore(deps, quotesRepo),
      bus,
      clock,
      logger: deps.logger,
      registry: deps.metrics.registry,
      redis: deps.redis,
      config,
      timing: new QuoteTiming({
        repo: new AvailabilityRepository(db),
        grid: new SurgeGrid(config.pricing.surgeCellMeters),
        clock,
      }),
    },
    live,
    router,
  );
  const ledger = new LedgerService({ db, clock, repo: new LedgerRepository() });
  // Jobs book their money (earnings, fees, cash on delivery) in their status transactions (section 21).
  const money = new JobMoney({ ledger });
  const jobs = {
    bus,
    clock,
    driverLocationTtlMs: config.drivers.locationTtlMs,
    driverIndex: live.index,
    dispatch,
    pricing,
    watcher: push,
    money,
  };
  // Scheduled jobs (section 22): waking one prices it (packages' and rides' services) and offers it (dispatch).
  const surgeGrid = new SurgeGrid(config.pricing.surgeCellMeters);
  const scheduling = new SchedulingService({
    db,
    repo: new SchedulingRepository(db),
    clock,
    bus,
    logger: deps.logger,
    config: config.scheduling,
    dispatching: config.dispatch.mode === 'offer',
    areaOf: (lat, lng) => {
      const [row, col] = surgeGrid.cellOf(lat, lng);
      const boxes = surgeGrid.block(row, col).map(([r, lo, hi]) => surgeGrid.box(r, lo, hi));
      return {
        key: `${row}:${col}`,
        south: Math.min(...boxes.map((b) => b[0])),
        west: Math.min(...boxes.map((b) => b[1])),
        north: Math.max(...boxes.map((b) => b[2])),
        east: Math.max(...boxes.map((b) => b[3])),
      };
    },
    reprice: (trx, jobType, jobId) =>
      jobType === 'PACKAGE' ? packages.repriceScheduled(trx, jobId) : rides.repriceScheduled(trx, jobId),
    kick: (jobType, jobId) => dispatch.kick(jobType, jobId),
    tellUnaccepted: async (ride) => {
      push.rideUnaccepted(ride.customerId, { jobId: ride.jobId, scheduledAt: ride.scheduledAt.toISOString() });
      const { locale, timeZone } = await locales.forUser(ride.customerId);
      await sms.send(ride.phone, {
        template: 'rideUnaccepted',
        locale,
        values: { time: formatClock(ride.scheduledAt, locale, timeZone) },
      });
    },
  });
  const timing = {
    windows: config.scheduling,
    booking: config.scheduling,
    scheduling,
  };
  // Lateness alerts (section 23): the monitor (background.ts) and each job's `sla` (packages, rides).
  const alerts = new AlertsService({
    db,
    repo: new AlertsRepository(db),
    clock,
    bus,
    logger: deps.logger,
    config: config.alerts,
  });
  const links = new TrackingTokens(config.auth.jwtSecret, config.tracking.publicBaseUrl);
  const packagesRepo = new PackagesRepository(db, deps.database.pgPool);
  // One outbox repository: the package steps write through it, the webhook worker claims and completes.
  const outbox = new OutboxRepository(db);
  const ridesRepo = new RidesRepository(db);
  const tracking = new TrackingService({
    repo: new TrackingRepository(db),
    bus,
    clock,
    logger: deps.logger,
    sms,
    locales,
    links,
    packagesRepo,
    ridesRepo,
    driverIndex: live.index,
    driverLocationTtlMs: config.drivers.locationTtlMs,
    // Called only once requests run (the routes' service is built below, with the drivers').
    routeEta: (driverId, jobId) => routes.dropoffEta(driverId, jobId),
  });
  // M-Pesa collections (section 26): packages open their prompt through it; it pays packages through packages.payable.
  const stk = createStkCollections(config.mpesa, {
    db,
    clock,
    ledger,
    logger: deps.logger,
    secret: config.auth.jwtSecret,
  });
  const packages: PackageService = new PackageService({
    followUps: new FollowUpsRepository(),
    ...jobs,
    ...timing,
    db,
    repo: packagesRepo,
    secret: config.auth.jwtSecret,
    links,
    notifier: tracking,
    outbox,
    sla: (facts) => alerts.sla(facts),
    payments: stk,
  });
  stk?.bind(packages.payable);
  const rides: RideService = new RideService({
    ...jobs,
    ...timing,
    db,
    repo: ridesRepo,
    flushPositions: () => live.flush(),
    sla: (facts) => alerts.sla(facts),
  });
  const trackingHub = new TrackingHub({
    bus,
    logger: deps.logger,
    load: tracking.snapshot,
    intervalMs: config.tracking.intervalMs,
    positionTtlMs: config.drivers.locationTtlMs,
    nowMs: () => clock.nowMs(),
    roadEta:
      config.routing.kind === 'straight' ? undefined : (from, to, vehicleType) => router.route(from, to, vehicleType),
  });
  const liveMap = new LiveMap({
    driverIdsOfCompany: (companyId) => driversRepo.driverIdsOfCompany(companyId),
    bus,
    index: live.index,
    intervalMs: config.tracking.intervalMs,
    positionTtlMs: config.drivers.locationTtlMs,
    nowMs: () => clock.nowMs(),
  });
  const stopFollowingJobs = followJobChanges(bus);
  // Alerts on the account stream (section 14's `event: alert`), on every instance.
  const stopFollowingAlerts = bus.subscribe('alert.changed', (e) =>
    trackingHub.tellAccountsEvent('alert', e.alert, (auth) => mayFollowAlert(e, auth)),
  );
  // A ride expired by the sweep (one statement, outside the lifecycle) gives up its open offer here.
  const stopFollowingExpiry = bus.subscribe('job.changed', ({ jobType, jobId, final, driverId }) => {
    if (final && !driverId) dispatch.jobEnded(jobType, jobId);
  });
  const deviceKeys = new DeviceKeysService({ db, repo: new DeviceKeysRepository(db), clock, bus, logger: deps.logger });
  const receiptsRepo = new ReceiptsRepository();
  const payoutsRepo = new PayoutsRepository();
  // One storage for every instance: the database they share, or the bucket (the SDK loads on first use).
  const proofStorage: ProofStorage = config.proof.s3
    ? new S3ProofStorage(config.proof.s3)
    : new PostgresProofStorage(db, clock);
  const idempotency = new IdempotencyStore({
    db,
    repo: new IdempotencyRepository(db),
    clock,
    secret: config.auth.jwtSecret,
  });
  const optimizer = new OptimizerService({ config: config.optimizer, matrix: routerMatrix(router) });
  const proof = new ProofService({
    db,
    repo: new ProofRepository(db),
    packagesRepo,
    storage: proofStorage,
    bus,
    clock,
    logger: deps.logger,
    idempotency,
    limits: config.proof,
  });
  const earnings = new EarningsService({ db, clock, repo: new EarningsRepository() });
  const drivers = new DriversService({ db, clock, repo: driversRepo, live, positions });
  const routes = new RoutesService({ db, repo: routesRepo, router, clock, live, bus, drivers });
  return {
    tokens,
    router,
    sms,
    locales,
    accounts,
    codes,
    sessions,
    passwords,
    auth,
    admin: new AdminService({ db, clock, sms, locales, users, accounts, sessions }),
    countries: new CountriesService({ repo: countries, clock }),
    live,
    positions,
    matching: new MatchingService({
      db,
      index: live.index,
      clock,
      driverLocationTtlMs: config.drivers.locationTtlMs,
      users,
      countries,
    }),
    drivers,
    profiles: new ProfilesService({ repo: profilesRepo, drivers, live, bus, clock }),
    routes,
    deviceKeys,
    driverJobs: new DriverJobsService({ repo: new DriverJobsRepository(db), driverIndex: live.index }),
    packages,
    rides,
    dispatch,
    pricing,
    scheduling,
    tracking,
    trackingHub,
    liveMap,
    // Built here in every process so that the delivery counter is on /metrics even where another process sends.
    webhookWorker: new WebhookWorker({
      db,
      repo: outbox,
      clock,
      logger: deps.logger,
      config,
      bus,
      registry: deps.metrics.registry,
    }),
    ledger,
    earnings,
    driverEarnings: new DriverEarningsReports({ drivers: driversRepo, earnings }),
    settlements: new SettlementService({ db, clock, ledger, repo: receiptsRepo }),
    payouts: new PayoutService({ db, clock, ledger, repo: payoutsRepo, receipts: receiptsRepo }),
    mpesaB2c: config.mpesa
      ? new MpesaB2cPayouts({
          db,
          clock,
          config: config.mpesa,
          client: new DarajaClient({ ...config.mpesa, timeoutMs: config.mpesa.requestTimeoutMs, clock }),
          ledger,
          repo: new MpesaRepository(),
          payoutsRepo,
          logger: deps.logger,
          secret: config.auth.jwtSecret,
        })
      : undefined,
    stk,
    push,
    invoices: new InvoiceService({ db, clock, repo: new InvoicesRepository(), locales }),
    ratings: new RatingsService({ db, repo: new RatingsRepository(db), ledger, bus, clock, config: config.ratings }),
    geocoding: new GeocodingService({ config: config.geocoder, countryCode: (id) => countries.codeOf(id) }),
    proof,
    optimizer,
    idempotency,
    alerts,
    recurring: new RecurringService({
      db,
      repo: new RecurringRepository(db),
      clock,
      logger: deps.logger,
      config: config.recurring,
      packages,
    }),
    webhooks: new WebhooksService({
      db,
      repo: new WebhooksRepository(db),
      clock,
      bus,
      urlRules: { allowHttp: config.webhooks.allowHttp, allowPrivateTargets: config.webhooks.allowPrivateTargets },
    }),
    guard: new AuthGuard({ sessions: new SessionStateRepository(db), bus, tokens }),
    osmand: new OsmAndIntake({
      deviceKeys,
      live,
      positions,
      clock,
      perKey: config.rateLimits.osmand ? createKeyedLimiter(deps, 'osmand', config.rateLimits.osmand) : undefined,
      unknownKeys: config.rateLimits.global
        ? createKeyedLimiter(deps, 'osmand-unknown', config.rateLimits.global)
        : undefined,
    }),
    close: () => {
      stopFollowingJobs();
      stopFollowingExpiry();
      stopFollowingAlerts();
      packages.close();
      trackingHub.close();
      liveMap.close();
      void push.close();
      deviceKeys.close();
      proofStorage.close?.();
      optimizer.close();
    },
  };
}
