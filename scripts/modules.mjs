// The modules and the modules each may import: the one declaration the import rules
// (.dependency-cruiser.mjs, npm run check:modules) and the module map in docs/architecture.md
// (npm run modules:doc) are made from. See docs/architecture.md#modules.
//
// A backend module is a folder src/modules/<name>/; a web module is web/src/<app>/ and is named
// `web/<app>` here. A module imports its own files and those of the modules listed for it, nothing
// else from src/modules/ (or web/src/); the declared graph is acyclic (checked). A module declared
// here without a folder yet is fine; a folder not declared here fails the check.

/** @type {Record<string, { imports: string[]; about: string }>} */
export const modules = {
  // Reference data and accounts.
  // Time (section 22): pure window rules and the scheduled wake-up; its hooks are handed in (it imports no feature).
  scheduling: { imports: [], about: 'windows, booking ahead, lead time, the durable wake-up of scheduled jobs' },
  countries: { imports: ['scheduling'], about: 'countries (reference data) and their administration' },
  locales: { imports: [], about: 'the language of whoever the server writes to (section 27)' },
  sms: { imports: [], about: 'every SMS: catalog text, segments counted, the log, GET /admin/sms' },
  auth: { imports: ['countries', 'locales', 'sms'], about: 'registration, login, SMS codes, passwords, sessions, accounts' },
  admin: { imports: ['auth', 'locales', 'sms'], about: 'account approval and administration' },
  // Drivers and the live index.
  matching: { imports: ['auth', 'countries'], about: 'the live driver index, its loader and write-behind' },
  drivers: {
    imports: ['jobs', 'matching'],
    about: "availability (written through the job core's claims), positions (HTTP and WebSocket)",
  },
  profiles: { imports: ['drivers', 'matching'], about: 'driver, business and company profiles' },
  'device-keys': { imports: ['drivers', 'matching'], about: 'device keys and the OsmAnd position intake' },
  routing: { imports: ['matching'], about: 'the router: straight, road graph, OSRM, Valhalla; routes and matrices' },
  pricing: { imports: ['matching', 'routing', 'scheduling'], about: 'tariffs, quotes, surge, routing' },
  routes: {
    imports: ['drivers', 'jobs', 'matching', 'routing'],
    about: "a driver's route (section 24): maxActiveJobs, capacities, stops, reorder, insertion",
  },
  // Money: ledger, payouts, invoices, earnings; none of them imports a job module.
  ledger: { imports: [], about: 'accounts, postings, balances, receipts' },
  payouts: { imports: ['ledger'], about: 'payouts to drivers and companies' },
  invoices: { imports: ['locales'], about: 'the monthly invoices' },
  earnings: { imports: ['drivers'], about: "drivers' and businesses' earnings" },
  mpesa: { imports: ['ledger', 'payouts'], about: 'M-Pesa (Daraja): the client, callbacks, B2C payouts' },
  payments: {
    imports: ['ledger', 'mpesa'],
    about: 'customers paying by M-Pesa STK Push, refunds; the port jobs are paid through',
  },
  // Jobs: the core, then its two kinds.
  jobs: {
    imports: ['ledger', 'matching', 'pricing'],
    about: 'the job core: transitions, lifecycle, claims, the money port',
  },
  webhooks: { imports: [], about: 'endpoints, the outbox, the delivery worker' },
  // Lateness (section 23): the pure SLA and alert rules, the monitor, the alert routes; the job kinds show its `sla`.
  alerts: { imports: ['matching', 'routing'], about: 'lateness alerts: SLA, the monitor, the exceptions queue' },
  packages: {
    imports: ['alerts', 'jobs', 'matching', 'scheduling', 'webhooks', 'payments'],
    about: 'packages, the business statement',
  },
  rides: { imports: ['alerts', 'jobs', 'matching', 'scheduling'], about: 'rides' },
  dispatch: { imports: ['jobs', 'matching', 'packages', 'rides'], about: 'offers: policy, sweep, routes' },
  proof: { imports: ['packages'], about: 'proof of delivery: upload, images, storage' },
  recurring: { imports: ['packages'], about: 'recurring jobs: RRULE templates materialised as packages' },
  ratings: { imports: ['ledger'], about: 'ratings, averages, tips, alerts' },
  tracking: {
    imports: ['locales', 'matching', 'packages', 'rides', 'scheduling', 'sms'],
    about: 'tracking links, streams, the live map',
  },
  push: { imports: ['jobs', 'webhooks'], about: 'Web Push: subscriptions, VAPID keys, the sender' },
  geocoding: { imports: [], about: 'GET /geocode, the geocoder proxy' },
  health: { imports: [], about: '/health, /health/ready, /metrics' },
  optimizer: { imports: ['routing'], about: 'POST /optimizations: the VROOM-shaped route optimizer (solver on a worker thread)' },
  // The web apps: each imports another only through web/shared.
  'web/shared': { imports: [], about: 'typed client, session, map, streams, UI kit, query keys' },
  'web/console': { imports: ['web/shared'], about: 'the console (business, company, admin, tracking page)' },
  'web/driver': { imports: ['web/shared'], about: 'the driver app (/driver/)' },
  'web/customer': { imports: ['web/shared'], about: 'the customer app (/app/)' },
};

/** Edges the declaration itself may never hold, whatever is added: [from, to, why]. */
export const never = [
  ...['ledger', 'payouts', 'invoices', 'earnings', 'mpesa', 'payments'].flatMap((money) =>
    ['jobs', 'packages', 'rides'].map((job) => [
      money,
      job,
      'money never imports a job module: jobs reach money through the port jobs/ defines',
    ]),
  ),
  ['rides', 'packages', 'rides/ and packages/ import one another never: what both need is in jobs/'],
  ['packages', 'rides', 'rides/ and packages/ import one another never: what both need is in jobs/'],
];

/** The folder of a module, relative to the repository root, with a trailing slash. */
export function folderOf(name) {
  return name.startsWith('web/') ? `web/src/${name.slice(4)}/` : `src/modules/${name}/`;
}

/** The module a repository-relative path belongs to, or undefined. */
export function moduleOf(path) {
  let m = /^src\/modules\/([^/]+)\//.exec(path);
  if (m) return m[1];
  m = /^web\/src\/([^/]+)\//.exec(path);
  return m ? `web/${m[1]}` : undefined;
}

/** Strongly connected components of more than one node (the cycles) of a graph given as name → names. */
export function cycles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** What is wrong with the declaration itself (unknown names, a cycle, a forbidden edge): messages, none when fine. */
export function declarationProblems(declared = modules) {
  const problems = [];
  for (const [name, { imports }] of Object.entries(declared)) {
    for (const to of imports) {
      if (!(to in declared)) problems.push(`${name} may import ${to}, which is not declared`);
      if (to === name) problems.push(`${name} lists itself`);
      if (name.startsWith('web/') !== to.startsWith('web/')) problems.push(`${name} → ${to} crosses backend and web`);
    }
  }
  for (const [from, to, why] of never) {
    if (declared[from]?.imports.includes(to)) problems.push(`${from} may not import ${to}: ${why}`);
  }
  const graph = new Map(Object.entries(declared).map(([name, { imports }]) => [name, imports]));
  for (const component of cycles(graph)) problems.push(`the declared graph has a cycle: ${component.join(', ')}`);
  return problems;
}
