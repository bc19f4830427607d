// M-Pesa B2C: a payout batch of BENCH_LINES (500) lines sent through the Daraja stand-in with 5 %
// duplicate, 5 % reordered and 2 % lost callbacks (issue 46): the time until every line is PAID,
// with the lost ones found by Transaction Status (MPESA_RESULT_TIMEOUT elapsed on the app's manual
// clock, not waited for), and the checks: each line paid once, none UNKNOWN, the ledger at zero.
// Usage: npx tsx bench/mpesa-b2c-batch.ts  (TEST_DATABASE_URL=postgres://... for the PostgreSQL server)
import { createServer } from 'node:net';
import { sql } from 'kysely';
import { startSandbox } from '../dev/mpesa-sandbox/server.js';
import { buildTestApp } from '../test/helpers/app.js';
import { createUser } from '../test/helpers/factories.js';
import { earn } from '../test/payouts-helpers.js';

const N = Number(process.env.BENCH_LINES ?? 500);
const probe = createServer();
await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
const port = (probe.address() as { port: number }).port;
await new Promise<void>((r) => probe.close(() => r()));

const sandbox = await startSandbox({
  callbackDelayMs: 5,
  chaos: { duplicate: 0.05, reorder: 0.05, lose: 0.02, seed: 46 },
});
const t = await buildTestApp({
  env: {
    MPESA_CONSUMER_KEY: 'sandbox-key',
    MPESA_CONSUMER_SECRET: 'sandbox-secret',
    MPESA_SHORTCODE: '174379',
    MPESA_PASSKEY: sandbox.options.passkey,
    MPESA_INITIATOR_NAME: 'testapi',
    MPESA_SECURITY_CREDENTIAL: 'c2VjcmV0',
    MPESA_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
    MPESA_BASE_URL: sandbox.url,
    LOG_LEVEL: 'warn',
  },
});
await t.app.listen({ port, host: '127.0.0.1' });
const b2c = t.services.mpesaB2c!;
try {
  const admin = await createUser(t, { role: 'ADMIN' });
  const business = await createUser(t, { role: 'BUSINESS', session: false });
  for (let i = 0; i < N; i++) {
    const d = await createUser(t, { role: 'DRIVER', session: false, phone: `+2547${String(i).padStart(4, '0')}0149` });
    await earn(t, d.id, business.id, 10_000 + i);
  }
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/admin/payouts',
    headers: { ...admin.headers, 'idempotency-key': 'bench' },
    payload: { currency: 'KES' },
  });
  const batchId = created.json().id as string;
  const started = performance.now();
  await t.app.inject({ method: 'POST', url: `/api/admin/payouts/${batchId}/send`, headers: admin.headers });
  const settle = async () => {
    for (;;) {
      await b2c.whenSent();
      await sandbox.idle(60_000);
      sandbox.flush();
      await sandbox.idle(60_000);
      const left = await sql<{
        n: number;
      }>`select count(*)::int as n from mpesa_callbacks where processed_at is null`.execute(t.db);
      const queued = await sql<{
        n: number;
      }>`select count(*)::int as n from mpesa_b2c_payments where state = 'QUEUED'`.execute(t.db);
      if (left.rows[0]!.n === 0 && queued.rows[0]!.n === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await settle();
  const sentMs = performance.now() - started;
  const lost = await sql<{ n: number }>`select count(*)::int as n from mpesa_b2c_payments where state = 'SENT'`.execute(
    t.db,
  );
  t.clock.advance(5 * 60_000 + 1000);
  await b2c.sweep();
  await settle();
  const totalMs = performance.now() - started;
  const states = await sql<{
    status: string;
    n: number;
  }>`select status, count(*)::int as n from payout_lines where batch_id = ${batchId} group by status`.execute(t.db);
  const booked = await sql<{
    n: number;
  }>`select count(*)::int as n from ledger_entries e join ledger_accounts a on a.id = e.account_id where a.kind = 'MPESA'`.execute(
    t.db,
  );
  const trial = await t.services.ledger.trialBalance();
  console.log(
    JSON.stringify({
      lines: N,
      callbacksStored: b2c.counters.callbacksStored,
      callbacksRepeated: b2c.counters.callbacksRepeated,
      lostFoundByStatus: lost.rows[0]!.n,
      linesByStatus: Object.fromEntries(states.rows.map((r) => [r.status, r.n])),
      mpesaPostings: booked.rows[0]!.n,
      paymentsAtStandIn: sandbox.payments.size,
      trialBalance: trial,
      secondsUntilCallbacksWorked: +(sentMs / 1000).toFixed(2),
      secondsUntilAllPaid: +(totalMs / 1000).toFixed(2),
    }),
  );
} finally {
  await t.close();
  await sandbox.close();
}
