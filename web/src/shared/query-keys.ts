// The query cache's keys in one place: what one page changes, another reads under the same key (an
// assignment invalidates every page of the deliveries list, a status event patches the delivery).
// A key that ends in a prefix's parts is covered by that prefix (invalidating `packages` reaches
// every `packagesPage`). `queryKeys` serves the console and the shared pages; the driver and
// customer apps have theirs below (each app has its own cache).

const packages = ['packages'] as const;
const anyPackage = ['package'] as const;
const users = ['users'] as const;
const webhookLog = (id: string) => ['webhook-log', id] as const;
const balances = ['balances'] as const;
const payouts = ['payouts'] as const;
const payoutLines = (id: string) => ['payout-lines', id] as const;
const invoices = ['invoices'] as const;
const settlements = ['settlements'] as const;
const businessPayments = ['business-payments'] as const;
const adminInvoices = ['admin-invoices'] as const;

const alerts = ['alerts'] as const;

export const queryKeys = {
  /** Every page of the Exceptions list (section 23's alerts). */
  alerts,
  alertsPage: (filter: object, cursor: string | undefined) => [...alerts, filter, cursor] as const,
  countries: ['countries'] as const,
  companyDrivers: ['company-drivers'] as const,
  /** The company's drivers' earnings from a day (UTC) until now. */
  companyEarnings: (from: string) => ['company-earnings', from] as const,
  /**
   * One driver's earnings report from a day (UTC) until now, as an admin or the driver's company reads
   * it; under `balances`, so that a settlement or a payout batch makes its balance stale too.
   */
  driverEarnings: (driverId: string, from: string) => [...balances, 'driver-earnings', driverId, from] as const,
  adminUser: (id: string) => ['admin-user', id] as const,
  /** Every page of the users list. */
  users,
  usersPage: (filter: object, cursor: string | undefined) => [...users, filter, cursor] as const,
  /** Every page of the deliveries list. */
  packages,
  packagesPage: (status: string, cursor: string | undefined) => [...packages, status, cursor] as const,
  /** Every cached delivery. */
  anyPackage,
  package: (id: string) => [...anyPackage, id] as const,
  quote: (trip: string) => ['quote', trip] as const,
  statement: (from: string, to: string) => ['statement', from, to] as const,
  tracking: (token: string) => ['tracking', token] as const,
  /** A proof image (an API path) as a blob; `version` changes when the proof does. */
  proofImage: (path: string | undefined, version: string) => ['proof-image', path, version] as const,
  /** Every page of every ratings list. */
  ratings: ['ratings'] as const,
  ratingsPage: (scope: string, filter: object, cursor: string | undefined) =>
    ['ratings', scope, filter, cursor] as const,
  ratingAlerts: ['ratings', 'alerts'] as const,
  webhooks: ['webhooks'] as const,
  webhook: (id: string) => ['webhook', id] as const,
  /** Every page of an endpoint's delivery log. */
  webhookLog,
  webhookLogPage: (id: string, cursor: string | undefined) => [...webhookLog(id), cursor] as const,
  /** Every page of the admin's balances (a settlement, payment or payout batch changes them). */
  balances,
  balancesPage: (currency: string, cursor: string | undefined) => [...balances, currency, cursor] as const,
  /** Every page of the payout batches. */
  payouts,
  payoutsPage: (cursor: string | undefined) => [...payouts, cursor] as const,
  payout: (id: string) => ['payout', id] as const,
  /** Every page of a batch's lines. */
  payoutLines,
  payoutLinesPage: (id: string, cursor: string | undefined) => [...payoutLines(id), cursor] as const,
  /** Every page of the business's invoices. */
  invoices,
  invoicesPage: (cursor: string | undefined) => [...invoices, cursor] as const,
  invoice: (id: string) => ['invoice', id] as const,
  /** Every page of the settlements an admin recorded. */
  settlements,
  settlementsPage: (currency: string, cursor: string | undefined) => [...settlements, currency, cursor] as const,
  /** Every page of the business payments an admin recorded. */
  businessPayments,
  businessPaymentsPage: (currency: string, cursor: string | undefined) =>
    [...businessPayments, currency, cursor] as const,
  /** Every page of the admin's list of invoices (a run adds to it). */
  adminInvoices,
  adminInvoicesPage: (month: string, cursor: string | undefined) => [...adminInvoices, month, cursor] as const,
};

const driverAnyJob = ['driver', 'job'] as const;

/** The driver app's keys. */
export const driverKeys = {
  me: ['driver', 'me'] as const,
  /** The driver's job lists (GET /drivers/me/jobs). */
  jobs: ['driver', 'jobs'] as const,
  /** Every cached job. */
  anyJob: driverAnyJob,
  job: (jobType?: string, id?: string) => [...driverAnyJob, jobType, id] as const,
  deviceKeys: ['driver', 'device-keys'] as const,
  /** The driver's earnings from a day (UTC), or today's. */
  earnings: (from: string | undefined) => ['driver', 'earnings', from ?? 'today'] as const,
  ratings: (side: string) => ['driver', 'ratings', side] as const,
};

/** The customer app's keys. */
export const customerKeys = {
  ride: (id: string) => ['ride', id] as const,
  /** The latest rides, read once at start for one still on its way. */
  activeRides: ['rides', 'active'] as const,
  rideHistory: ['rides', 'history'] as const,
  /** Under `packages`: a delivery sent from the shared pages makes the history stale too. */
  packageHistory: [...packages, 'history'] as const,
  geocode: (countryId: string, q: string) => ['geocode', countryId, q] as const,
  rideQuote: (trip: string, vehicleType: string) => ['ride-quote', trip, vehicleType] as const,
};
