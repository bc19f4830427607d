// GET /companies/me/earnings for a company of N drivers (contract section 21), through the app as a
// request runs it: each driver with a CASH ride, an ACCOUNT package with cash on delivery and a tip,
// and a cancellation fee (5 ledger transactions). Prints the request's time (7 requests; the median
// of the last 6), the statements it ran (Kysely's log hook; the fewest of the 7), and checks every driver's totals and
// balances against the driver's own report (what GET /drivers/me/earnings reads).
// Usage: npx tsx bench/company-earnings.ts   (BENCH_DRIVERS=500; TEST_DATABASE_URL=postgres://… for
// the server, a fresh database of its own, dropped at the end; PGlite in memory otherwise)
import { randomUUID } from 'node:crypto';
import { EarningsRepository } from '../src/modules/earnings/earnings.repository.js';
import { summarise } from '../src/modules/earnings/earnings.service.js';
import {
  cancellationFeeEntries,
  cashOnDeliveryEntries,
  jobCompletedEntries,
  sourceKeys,
  tipEntries,
  type PartyRef,
} from '../src/modules/ledger/postings.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { createUser } from '../test/helpers/factories.js';

const N = Number(process.env.BENCH_DRIVERS ?? 500);
let counting = false;
let statements = 0;
// BENCH_SQL=1 prints each statement counted (work in the background, such as the dispatch sweep, can
// run during a request: the fewest of the 7 requests is the request's own).
const database = await createTestDatabase({
  log: (event) => {
    if (!counting) return;
    statements += 1;
    if (process.env.BENCH_SQL) console.error(event.query.sql.replace(/\s+/g, ' ').trim().slice(0, 100));
  },
});
const t = await buildTestApp({ database });
try {
  const company = await createUser(t, { role: 'COMPANY' });
  const business = await createUser(t, { role: 'BUSINESS', session: false });
  const payer: PartyRef = { kind: 'BUSINESS', partyId: business.id };
  let started = performance.now();
  for (let i = 0; i < N; i++) {
    const d = await createUser(t, {
      role: 'DRIVER',
      session: false,
      firstName: `D${String(i).padStart(5, '0')}`,
      driver: { companyId: company.id },
    });
    const [ride, pkg, cancelled] = [randomUUID(), randomUUID(), randomUUID()];
    const driverId = d.id;
    const inputs = [
      {
        sourceKey: sourceKeys.jobCompleted('RIDE', ride),
        currency: 'KES',
        entries: jobCompletedEntries({
          driverId,
          payer,
          paymentMethod: 'CASH',
          amount: 12_000 + i,
          bookingFee: 2_000,
          commissionRate: 1500,
        }),
      },
      {
        sourceKey: sourceKeys.jobCompleted('PACKAGE', pkg),
        currency: 'KES',
        entries: jobCompletedEntries({
          driverId,
          payer,
          paymentMethod: 'ACCOUNT',
          amount: 9_000,
          bookingFee: 1_000,
          commissionRate: 2000,
        }),
      },
      {
        sourceKey: sourceKeys.cashOnDelivery(pkg),
        currency: 'KES',
        entries: cashOnDeliveryEntries({ driverId, businessId: business.id, amount: 3_000 + i }),
      },
      {
        sourceKey: sourceKeys.tip('PACKAGE', pkg),
        currency: 'KES',
        entries: tipEntries({ driverId, payer, paymentMethod: 'ACCOUNT', amount: 500 }),
      },
      {
        sourceKey: sourceKeys.cancellationFee('PACKAGE', cancelled),
        currency: 'KES',
        entries: cancellationFeeEntries({ driverId, payer, fee: 5_000, commissionRate: 1500 }),
      },
    ];
    await t.db.transaction().execute((trx) => t.services.ledger.postMany(trx, inputs));
  }
  const seedMs = performance.now() - started;

  const times: number[] = [];
  let body = '';
  const counts: number[] = [];
  for (let i = 0; i < 7; i++) {
    statements = 0;
    counting = true;
    started = performance.now();
    const res = await t.app.inject({ method: 'GET', url: '/api/companies/me/earnings', headers: company.headers });
    times.push(performance.now() - started);
    counting = false;
    counts.push(statements);
    if (res.statusCode !== 200) throw new Error(res.body);
    body = res.body;
  }
  const report = JSON.parse(body) as {
    from: string;
    to: string;
    drivers: { driverId: string; totals: unknown[]; balances: unknown[] }[];
  };

  const repo = new EarningsRepository();
  const [from, to] = [new Date(report.from), new Date(report.to)];
  let mismatches = 0;
  for (const d of report.drivers) {
    const { totals } = summarise(await repo.driverEntries(t.db, d.driverId, from, to));
    const balances = (await repo.balances(t.db, [d.driverId])).map((b) => ({
      currency: b.currency.trim(),
      balance: Number(b.balance),
    }));
    if (!totals.length || JSON.stringify([totals, balances]) !== JSON.stringify([d.totals, d.balances]))
      mismatches += 1;
  }
  const rest = times.slice(1).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      bench: 'company-earnings',
      database: t.database.kind,
      drivers: report.drivers.length,
      seedMs: Math.round(seedMs),
      statementsPerRequest: Math.min(...counts),
      statementsCounted: counts,
      firstMs: Number(times[0]!.toFixed(1)),
      medianMs: Number(rest[Math.floor(rest.length / 2)]!.toFixed(1)),
      timesMs: times.map((x) => Number(x.toFixed(1))),
      driversNotMatchingTheirOwnReport: mismatches,
    }),
  );
} finally {
  await t.close();
  await database.close();
}
