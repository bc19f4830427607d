// Customers paying by M-Pesa STK Push through the Daraja stand-in (contract section 26): a package is
// dispatched once, only when paid; a cancelled prompt fails it (a retry pays); no callback → STK Push
// Query resolves it; a duplicate or a forged callback books nothing; unpaid packages expire; a paid
// package cancelled is refunded by B2C; the ledger sums to zero.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startSandbox, type Sandbox } from '../dev/mpesa-sandbox/server.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { createTestDatabase } from './helpers/database.js';
import { ManualClock } from '../src/shared/clock.js';
import { packageBody, post } from './packages-helpers.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const until = async (check: () => Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('M-Pesa STK Push collections through the stand-in', () => {
  let sandbox: Sandbox;
  let t: TestApp;
  let port: number;
  let seq = 0;

  before(async () => {
    sandbox = await startSandbox({ callbackDelayMs: 5, answerDelayMs: 5 });
    port = await freePort();
    t = await buildTestApp({
      env: {
        MPESA_CONSUMER_KEY: 'sandbox-key',
        MPESA_CONSUMER_SECRET: 'sandbox-secret',
        MPESA_SHORTCODE: '174379',
        MPESA_PASSKEY: sandbox.options.passkey,
        MPESA_INITIATOR_NAME: 'testapi',
        MPESA_SECURITY_CREDENTIAL: 'c2VjcmV0',
        MPESA_CALLBACK_BASE_URL: `http://127.0.0.1:${port}`,
        MPESA_BASE_URL: sandbox.url,
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
  });
  after(async () => {
    await t.close();
    await sandbox.close();
  });

  const stk = () => t.services.stk!;
  /** A customer whose phone ends in `tail` (the stand-in's outcome digits: …0149 pays on time). */
  async function customer(tail = '0149'): Promise<TestUser> {
    seq++;
    return createUser(t, { role: 'CUSTOMER', phone: `+25471${String(seq).padStart(3, '0')}${tail}` });
  }
  async function mpesaPackage(who: TestUser, extra: Record<string, unknown> = {}) {
    const res = await post(t, '/api/packages', who.headers, {
      ...packageBody(who.countryId),
      paymentMethod: 'MPESA',
      ...extra,
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }
  const pkg = (id: string) =>
    t.db
      .selectFrom('packages')
      .select(['status', 'payment_state', 'payment_receipt', 'price_amount', 'cancellation_fee'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  const dispatchRows = (id: string) =>
    t.db.selectFrom('dispatch_jobs').select(['state']).where('job_id', '=', id).execute();
  const prompts = (id: string) =>
    t.db.selectFrom('mpesa_stk_payments').selectAll().where('job_id', '=', id).orderBy('created_at').execute();
  const ledgerSum = async () =>
    Number(
      (await sql<{ s: string }>`select coalesce(sum(amount), 0) as s from ledger_entries`.execute(t.db)).rows[0]!.s,
    );
  const mpesaBookings = async (jobPrompts: { receipt: string | null; checkout_request_id: string | null }[]) => {
    const keys = jobPrompts.flatMap((p) => [`mpesa:${p.receipt}`, `mpesa:stk:${p.checkout_request_id}`]);
    const rows = await t.db
      .selectFrom('ledger_transactions')
      .select('source_key')
      .where('source_key', 'in', keys)
      .execute();
    return rows.length;
  };
  async function settle() {
    await stk().whenSent();
    await sandbox.idle();
    await until(async () => {
      const left = await t.db.selectFrom('mpesa_callbacks').select('id').where('processed_at', 'is', null).execute();
      return left.length === 0;
    });
  }

  test('paid: the package enters dispatch once, with the receipt, booked once in the ledger', async () => {
    const who = await customer();
    const created = await mpesaPackage(who);
    assert.equal(created.paymentMethod, 'MPESA');
    assert.equal(created.payment.state, 'PENDING');
    assert.equal(created.payment.amount % 100, 0, 'whole shillings');
    assert.equal(created.dispatch.state, 'OFF', 'not dispatchable before it is paid');
    assert.deepEqual(await dispatchRows(created.id), []);
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    await settle();
    const row = await pkg(created.id);
    assert.match(row.payment_receipt ?? '', /^[A-Z0-9]{10}$/);
    assert.equal((await dispatchRows(created.id)).length, 1, 'enrolled in dispatch once');
    const shown = (await t.app.inject({ url: `/api/packages/${created.id}`, headers: who.headers })).json();
    assert.equal(shown.payment.state, 'PAID');
    assert.equal(shown.payment.receipt, row.payment_receipt);
    assert.equal(await mpesaBookings(await prompts(created.id)), 1);
    assert.equal(await ledgerSum(), 0);
  });

  test('a callback sent twice and a replay change nothing', async () => {
    const who = await customer('6149'); // fourth-last 6: the stand-in sends each callback twice
    const created = await mpesaPackage(who);
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    await settle();
    const [p] = await prompts(created.id);
    const token = stk().token('stk', p!.id);
    const replay = {
      Body: {
        stkCallback: {
          MerchantRequestID: p!.merchant_request_id,
          CheckoutRequestID: p!.checkout_request_id,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: p!.amount },
              { Name: 'MpesaReceiptNumber', Value: p!.receipt },
              { Name: 'PhoneNumber', Value: Number(p!.phone) },
            ],
          },
        },
      },
    };
    const res = await post(t, `/api/hooks/daraja/stk/${token}/result`, {}, replay);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { ResultCode: 0, ResultDesc: 'Accepted' });
    await settle();
    assert.ok(stk().counters.outcomes.DUPLICATE! + stk().counters.callbacksRepeated >= 1);
    assert.equal(await mpesaBookings(await prompts(created.id)), 1);
    assert.equal((await dispatchRows(created.id)).length, 1);
    assert.equal(await ledgerSum(), 0);
    // A token nobody was given: 404, nothing stored.
    const forged = await post(t, `/api/hooks/daraja/stk/${'x'.repeat(32)}/result`, {}, replay);
    assert.equal(forged.statusCode, 404);
  });

  test('cancelled on the phone: FAILED, not dispatched; a retry pays it', async () => {
    const who = await customer('0132'); // …132: the customer cancels the prompt (1032)
    const created = await mpesaPackage(who);
    await until(async () => (await pkg(created.id)).payment_state === 'FAILED');
    await settle();
    assert.deepEqual(await dispatchRows(created.id), []);
    const shown = (await t.app.inject({ url: `/api/packages/${created.id}`, headers: who.headers })).json();
    assert.equal(shown.payment.state, 'FAILED');
    assert.match(shown.payment.failure, /cancel/i);
    // Not to a driver either, while unpaid.
    const driver = await createUser(t, { role: 'DRIVER', driver: { vehicleType: 'BIKE', availability: 'ONLINE' } });
    const accept = await post(t, `/api/packages/${created.id}/accept`, driver.headers, {});
    assert.equal(accept.statusCode, 409, accept.body);
    assert.equal(accept.json().code, 'PAYMENT_PENDING');
    // Another customer may not retry it (404); the creator may, with a number that pays.
    const other = await customer();
    assert.equal((await post(t, `/api/packages/${created.id}/payment/retry`, other.headers, {})).statusCode, 404);
    const bad = await post(t, `/api/packages/${created.id}/payment/retry`, who.headers, { phone: '+15551234567' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'MPESA_PHONE_INVALID');
    const retried = await post(t, `/api/packages/${created.id}/payment/retry`, who.headers, {
      phone: '+254708374149',
    });
    assert.equal(retried.statusCode, 202, retried.body);
    assert.equal(retried.json().state, 'PENDING');
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    await settle();
    assert.equal((await dispatchRows(created.id)).length, 1);
    const again = await post(t, `/api/packages/${created.id}/payment/retry`, who.headers, {});
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().code, 'PAYMENT_NOT_RETRYABLE');
  });

  test('no callback: STK Push Query resolves it (booked by its CheckoutRequestID)', async () => {
    const who = await customer('7149'); // fourth-last 7: the callback never comes
    const created = await mpesaPackage(who);
    await until(async () => (await prompts(created.id))[0]?.checkout_request_id != null);
    await settle();
    assert.equal((await pkg(created.id)).payment_state, 'PENDING');
    t.clock.advance(91_000);
    // This sweep, or the loop's turn that got there first.
    await stk().sweep();
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    const row = await pkg(created.id);
    assert.equal(row.payment_receipt, null, 'the query gives no receipt');
    assert.equal((await dispatchRows(created.id)).length, 1);
    const [p] = await prompts(created.id);
    assert.equal(p!.state, 'PAID');
    assert.equal(await mpesaBookings([p!]), 1);
    assert.equal(await ledgerSum(), 0);
  });

  test('a callback with another amount is refused and recorded; nothing booked until the query confirms', async () => {
    const who = await customer('7149');
    const created = await mpesaPackage(who);
    await until(async () => (await prompts(created.id))[0]?.checkout_request_id != null);
    await settle();
    const [p] = await prompts(created.id);
    const body = {
      Body: {
        stkCallback: {
          MerchantRequestID: p!.merchant_request_id,
          CheckoutRequestID: p!.checkout_request_id,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          CallbackMetadata: {
            Item: [
              { Name: 'Amount', Value: 1 },
              { Name: 'MpesaReceiptNumber', Value: 'FORGED0001' },
              { Name: 'PhoneNumber', Value: Number(p!.phone) },
            ],
          },
        },
      },
    };
    const res = await post(t, `/api/hooks/daraja/stk/${stk().token('stk', p!.id)}/result`, {}, body);
    assert.equal(res.statusCode, 200);
    await settle();
    const outcome = await t.db
      .selectFrom('mpesa_callbacks')
      .select('outcome')
      .where('body', '@>', JSON.stringify({ Body: { stkCallback: { CheckoutRequestID: p!.checkout_request_id } } }))
      .executeTakeFirstOrThrow();
    assert.equal(outcome.outcome, 'MISMATCH');
    assert.equal((await pkg(created.id)).payment_state, 'PENDING');
    assert.equal(
      (await t.db.selectFrom('ledger_transactions').select('id').where('source_key', '=', 'mpesa:FORGED0001').execute())
        .length,
      0,
    );
    assert.deepEqual(await dispatchRows(created.id), []);
    // When in doubt, M-Pesa is asked: the request was paid (for its own amount), so the package is.
    t.clock.advance(91_000);
    await stk().sweep();
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    assert.equal(await mpesaBookings(await prompts(created.id)), 1);
    assert.equal(await ledgerSum(), 0);
  });

  test('unpaid after MPESA_PAYMENT_TIMEOUT: CANCELLED with no fee, never dispatched', async () => {
    const who = await customer('7132'); // cancelled, and the callback never comes
    const created = await mpesaPackage(who);
    await until(async () => (await prompts(created.id))[0]?.checkout_request_id != null);
    t.clock.advance(10 * 60_000 + 1000);
    // Never in dispatch while unpaid: the lateness monitor raises nothing for it (no offer.unanswered).
    await t.services.alerts.monitor();
    const alerts = await t.db.selectFrom('alerts').select('kind').where('job_id', '=', created.id).execute();
    assert.deepEqual(alerts, []);
    await stk().sweep();
    await until(async () => (await pkg(created.id)).status === 'CANCELLED');
    const row = await pkg(created.id);
    assert.equal(row.status, 'CANCELLED');
    assert.equal(row.payment_state, 'CANCELLED');
    assert.equal(row.cancellation_fee, null);
    assert.deepEqual(await dispatchRows(created.id), []);
  });

  test('a paid package cancelled is refunded by B2C to the payer, booked once; the ledger sums to zero', async () => {
    const who = await customer();
    const created = await mpesaPackage(who);
    await until(async () => (await pkg(created.id)).payment_state === 'PAID');
    await settle();
    const cancelled = await post(t, `/api/packages/${created.id}/cancel`, who.headers, {});
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    await stk().sweep();
    await until(async () => (await pkg(created.id)).payment_state === 'REFUNDED');
    await settle();
    const refund = await t.db
      .selectFrom('mpesa_refunds')
      .selectAll()
      .where('job_id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.equal(refund.state, 'PAID', refund.result_desc ?? '');
    assert.equal(refund.amount * 100, (await pkg(created.id)).price_amount);
    assert.equal((await pkg(created.id)).payment_state, 'REFUNDED');
    await stk().sweep();
    assert.equal(
      (await t.db.selectFrom('mpesa_refunds').select('id').where('job_id', '=', created.id).execute()).length,
      1,
    );
    const balance = await sql<{ s: string }>`
      select coalesce(sum(e.amount), 0) as s from ledger_entries e join ledger_accounts a on a.id = e.account_id
      where a.party_id = ${who.id}`.execute(t.db);
    assert.equal(Number(balance.rows[0]!.s), 0, "the customer's balance is back at zero");
    assert.equal(await ledgerSum(), 0);
  });

  test('bad input: a business, a non-Kenyan payer, payment without MPESA', async () => {
    const business = await createUser(t, { role: 'BUSINESS' });
    const res = await post(t, '/api/packages', business.headers, {
      ...packageBody(business.countryId),
      paymentMethod: 'MPESA',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().code, 'PAYMENT_METHOD_NOT_ALLOWED');
    const who = await customer();
    const phone = await post(t, '/api/packages', who.headers, {
      ...packageBody(who.countryId),
      paymentMethod: 'MPESA',
      payment: { phone: '+447700900123' },
    });
    assert.equal(phone.statusCode, 400);
    assert.equal(phone.json().code, 'MPESA_PHONE_INVALID');
    const cash = await post(t, '/api/packages', who.headers, {
      ...packageBody(who.countryId),
      payment: { phone: '+254708374149' },
    });
    assert.equal(cash.statusCode, 400);
  });

  test('restart drill: the process stops between the push and a callback that never comes; the next one resolves it by query', async () => {
    const database = await createTestDatabase();
    const clock = new ManualClock(new Date());
    const env = {
      MPESA_CONSUMER_KEY: 'sandbox-key',
      MPESA_CONSUMER_SECRET: 'sandbox-secret',
      MPESA_SHORTCODE: '174379',
      MPESA_PASSKEY: sandbox.options.passkey,
      MPESA_INITIATOR_NAME: 'testapi',
      MPESA_SECURITY_CREDENTIAL: 'c2VjcmV0',
      MPESA_CALLBACK_BASE_URL: 'http://127.0.0.1:9',
      MPESA_BASE_URL: sandbox.url,
    };
    try {
      const first = await buildTestApp({ env, database, clock });
      const who = await createUser(first, { role: 'CUSTOMER', phone: '+254712347149' });
      const res = await post(first, '/api/packages', who.headers, {
        ...packageBody(who.countryId),
        paymentMethod: 'MPESA',
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      const sent = () =>
        first.db.selectFrom('mpesa_stk_payments').select(['checkout_request_id']).where('job_id', '=', id).execute();
      await until(async () => (await sent())[0]?.checkout_request_id != null);
      await first.close();

      clock.advance(91_000);
      const second = await buildTestApp({ env, database, clock });
      try {
        // The new process's loop (or this sweep) asks M-Pesa about the prompt it never heard back on.
        await second.services.stk!.sweep();
        const state = () =>
          second.db
            .selectFrom('packages')
            .select(['payment_state', 'status'])
            .where('id', '=', id)
            .executeTakeFirstOrThrow();
        await until(async () => (await state()).payment_state === 'PAID');
        const row = await second.db
          .selectFrom('packages')
          .select(['payment_state', 'status'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        assert.deepEqual(row, { payment_state: 'PAID', status: 'PENDING' });
        const enrolled = await second.db
          .selectFrom('dispatch_jobs')
          .select('job_id')
          .where('job_id', '=', id)
          .execute();
        assert.equal(enrolled.length, 1);
        // Asked again, nothing more is booked.
        clock.advance(91_000);
        await second.services.stk!.sweep();
        const bookings = await sql<{ n: number }>`
          select count(*)::int as n from ledger_transactions where source_key like 'mpesa:stk:%'`.execute(second.db);
        assert.equal(bookings.rows[0]!.n, 1);
      } finally {
        await second.close();
      }
    } finally {
      await database.close();
    }
  });
});
