// B2C payouts through the Daraja stand-in (contract section 26): duplicate, reordered and lost
// callbacks, a split line, cents and a line under the minimum, an insufficient float that stops the
// batch, forged and unknown callbacks; every line paid exactly once and the books at zero.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startSandbox, type Sandbox } from '../dev/mpesa-sandbox/server.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { caller, earn, type Call } from './payouts-helpers.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const until = async (check: () => Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('M-Pesa B2C payouts through the stand-in', () => {
  let sandbox: Sandbox;
  let t: TestApp;
  let admin: TestUser;
  let business: TestUser;
  let call: Call;
  let phoneSeq = 0;

  before(async () => {
    // 15 % duplicated, 15 % held back and sent after a later one, 10 % never sent (seeded).
    sandbox = await startSandbox({
      callbackDelayMs: 5,
      answerDelayMs: 30,
      chaos: { duplicate: 0.15, reorder: 0.15, lose: 0.1, seed: 11 },
    });
    const port = await freePort();
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
        MPESA_B2C_MAX_AMOUNT: '1000',
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    admin = await createUser(t, { role: 'ADMIN' });
    business = await createUser(t, { role: 'BUSINESS', session: false });
    call = caller(t, admin);
  });
  after(async () => {
    await t.close();
    await sandbox.close();
  });

  /** A driver with a number the stand-in pays on time (…0149), owed `amount` (minor units). */
  async function driverOwed(amount: number): Promise<TestUser> {
    phoneSeq++;
    const phone = `+254711${String(phoneSeq).padStart(2, '0')}0149`;
    const driver = await createUser(t, { role: 'DRIVER', session: false, phone });
    await earn(t, driver.id, business.id, amount);
    return driver;
  }

  async function batch(key: string): Promise<string> {
    const res = await call('POST', '/admin/payouts', { currency: 'KES' }, { ...admin.headers, 'idempotency-key': key });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  const lines = (batchId: string) =>
    t.db
      .selectFrom('payout_lines')
      .select(['id', 'party_id', 'amount', 'status', 'failure_reason'])
      .where('batch_id', '=', batchId)
      .execute();
  const payments = (batchId: string) =>
    t.db.selectFrom('mpesa_b2c_payments').selectAll().where('batch_id', '=', batchId).execute();
  const b2c = () => t.services.mpesaB2c!;
  /** A new admin session at the (moved) clock's time. */
  const freshAdmin = async () => {
    admin = await createUser(t, { role: 'ADMIN' });
    call = caller(t, admin);
  };

  /** Lets the stand-in finish (held-back callbacks flushed) and the stored callbacks be worked. */
  async function settle() {
    await b2c().whenSent();
    await sandbox.idle();
    sandbox.flush();
    await sandbox.idle();
    await until(async () => {
      const left = await t.db.selectFrom('mpesa_callbacks').select('id').where('processed_at', 'is', null).execute();
      return left.length === 0;
    });
  }

  test('a batch with duplicate, reordered and lost callbacks: every line paid exactly once, the ledger sums to zero', async () => {
    const drivers: TestUser[] = [];
    for (let i = 0; i < 30; i++) drivers.push(await driverOwed(10_000 + i * 100));
    // KES 2,500.50: three payments (max 1,000), the 50 cents stay on the balance.
    const big = await driverOwed(250_050);
    // KES 5: under the B2C minimum of 10, left on the balance.
    const small = await driverOwed(500);
    const batchId = await batch('b2c-1');

    const sent = await call('POST', `/admin/payouts/${batchId}/send`);
    assert.equal(sent.statusCode, 202, sent.body);
    assert.deepEqual(sent.json(), { lines: 31, payments: 33, belowMinimum: 1 });

    await until(async () => (await payments(batchId)).every((p) => p.state !== 'QUEUED'));
    await b2c().whenSent();
    await settle();
    const afterCallbacks = await payments(batchId);
    const lost = afterCallbacks.filter((p) => p.state === 'SENT');
    assert.ok(lost.length > 0, 'the seed loses some callbacks');
    assert.ok(b2c().counters.callbacksRepeated > 0, 'the seed duplicates some callbacks');

    // A line still on its way: the batch cannot be marked paid by hand.
    const paid = await call('POST', `/admin/payouts/${batchId}/paid`);
    assert.equal(paid.statusCode, 409);
    assert.equal(paid.json().code, 'PAYOUT_LINES_IN_FLIGHT');

    // No result within MPESA_RESULT_TIMEOUT: UNKNOWN, never sent again; Transaction Status finds them.
    // The first Transaction Status answers never come either: asked again after MPESA_STATUS_TIMEOUT.
    const requestsBefore = sandbox.payments.size;
    for (const _ of lost) sandbox.next.push({ delivery: 'never' });
    t.clock.advance(5 * 60_000 + 1000);
    await b2c().sweep();
    await settle();
    const unknown = (await payments(batchId)).filter((p) => p.state === 'UNKNOWN');
    assert.deepEqual(unknown.map((p) => p.id).sort(), lost.map((p) => p.id).sort());
    const unknownLine = (await lines(batchId)).find((l) => l.id === unknown[0]!.line_id)!;
    assert.equal(unknownLine.status, 'UNKNOWN');
    assert.equal((await call('POST', `/admin/payouts/${batchId}/paid`)).statusCode, 409);
    t.clock.advance(2 * 60_000 + 1000);
    await b2c().sweep();
    await settle();
    for (const p of await payments(batchId)) if (lost.some((l) => l.id === p.id)) assert.equal(p.status_asks, 2);
    assert.equal(sandbox.payments.size, requestsBefore, 'nothing was sent twice');

    const final = await payments(batchId);
    assert.deepEqual(
      final.filter((p) => p.state !== 'PAID').map((p) => p.state),
      [],
    );
    const finalLines = await lines(batchId);
    for (const line of finalLines) {
      if (line.party_id === small.id) {
        assert.equal(line.status, 'FAILED');
        assert.match(line.failure_reason!, /minimum/);
      } else assert.equal(line.status, 'PAID', `line of ${line.party_id}`);
    }
    const bigParts = final.filter((p) => finalLines.find((l) => l.id === p.line_id)!.party_id === big.id);
    assert.deepEqual(bigParts.map((p) => Number(p.amount)).sort(), [833, 833, 834]);

    // Paid exactly once: one M-Pesa payment per part at the stand-in, one ledger transaction per receipt.
    const receipts = final.map((p) => p.receipt!);
    assert.equal(new Set(receipts).size, final.length);
    for (const r of receipts) assert.equal(sandbox.payments.get(r)?.kind, 'B2C');
    const booked = await sql<{ n: number; total: string }>`
      select count(*)::int as n, coalesce(sum(e.amount), 0)::bigint as total from ledger_transactions x
      join ledger_entries e on e.transaction_id = x.id join ledger_accounts a on a.id = e.account_id
      where a.kind = 'MPESA'`.execute(t.db);
    assert.equal(booked.rows[0]!.n, final.length);
    const shillings = final.reduce((s, p) => s + Number(p.amount), 0);
    assert.equal(Number(booked.rows[0]!.total), shillings * 100);
    // What was not paid is back on the balances: 50 cents, and the KES 5 under the minimum.
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: big.id }), 50);
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: small.id }), 500);
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: drivers[3]!.id }), 0);
    for (const row of await t.services.ledger.trialBalance())
      assert.equal(row.total, 0, `${row.currency} sums to zero`);
    const batchRow = await t.db
      .selectFrom('payout_batches')
      .select('status')
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();
    assert.equal(batchRow.status, 'CLOSED');

    // Callbacks replayed a week later change nothing.
    const replay = sandbox.sent.filter((s) => s.url.includes('/b2c/') && s.url.endsWith('/result')).slice(0, 5);
    t.clock.advance(7 * 24 * 3600_000);
    for (const s of replay) {
      const res = await fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(s.body),
      });
      assert.equal(res.status, 200);
    }
    await settle();
    const again = await sql<{
      n: number;
    }>`select count(*)::int as n from ledger_entries e join ledger_accounts a on a.id = e.account_id where a.kind = 'MPESA'`.execute(
      t.db,
    );
    assert.equal(again.rows[0]!.n, final.length);
    // The tokens in the callback URLs never reach the log.
    const token = /\/b2c\/([A-Za-z0-9_-]{32})\//.exec(replay[0]!.url)![1]!;
    assert.ok(t.logLines.length > 0);
    assert.ok(!t.logLines.some((l) => l.includes(token)), 'no token in the log');
  });

  test('forged callbacks: an unknown token is 404 and stored nowhere; another amount or another request books nothing', async () => {
    await freshAdmin();
    const before = await t.db.selectFrom('mpesa_callbacks').select('id').execute();
    const forged = await fetch(
      `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/api/hooks/daraja/b2c/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/result`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ Result: { ResultCode: 0 } }),
      },
    );
    assert.equal(forged.status, 404);
    assert.equal((await t.db.selectFrom('mpesa_callbacks').select('id').execute()).length, before.length);

    // A real line, held at the stand-in (its callback never comes), answered by hand with wrong bodies.
    const driver = await driverOwed(20_000);
    const batchId = await batch('b2c-forged');
    sandbox.next.push({ delivery: 'never' });
    await call('POST', `/admin/payouts/${batchId}/send`);
    await until(async () => (await payments(batchId)).every((p) => p.state === 'SENT' && p.conversation_id !== null));
    const [p] = await payments(batchId);
    const token: string = (b2c() as any).token('b2c', p!.id);
    const url = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}/api/hooks/daraja/b2c/${token}/result`;
    const result = (amount: number, originator = p!.originator_conversation_id) => ({
      Result: {
        ResultType: 0,
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        OriginatorConversationID: originator,
        ConversationID: p!.conversation_id,
        TransactionID: 'FORGED0001',
        ResultParameters: {
          ResultParameter: [
            { Key: 'TransactionAmount', Value: amount },
            { Key: 'TransactionReceipt', Value: 'FORGED0001' },
          ],
        },
      },
    });
    for (const body of [result(999_999), result(200, 'PLsomeoneelse0')]) {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200);
    }
    await settle();
    const outcomes = await t.db
      .selectFrom('mpesa_callbacks')
      .select('outcome')
      .where('token_hash', '=', p!.token_hash)
      .execute();
    assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['MISMATCH', 'MISMATCH']);
    assert.equal((await payments(batchId))[0]!.state, 'UNKNOWN');
    const booked = await sql<{
      n: number;
    }>`select count(*)::int as n from ledger_transactions where source_key = 'mpesa:FORGED0001'`.execute(t.db);
    assert.equal(booked.rows[0]!.n, 0);
    // Transaction Status settles it with M-Pesa's own receipt.
    t.clock.advance(3 * 60_000);
    await b2c().sweep();
    await settle();
    const settled = (await payments(batchId))[0]!;
    assert.equal(settled.state, 'PAID');
    assert.notEqual(settled.receipt, 'FORGED0001');
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: driver.id }), 0);
  });

  test('an insufficient float stops the batch: the lines not yet sent stay OPEN, and sending again pays them', async () => {
    await freshAdmin();
    const drivers: TestUser[] = [];
    for (let i = 0; i < 20; i++) drivers.push(await driverOwed(10_000));
    const batchId = await batch('b2c-float');
    // Every callback comes here: a lost float failure would stay UNKNOWN (M-Pesa has no such payment).
    sandbox.setChaos(undefined);
    sandbox.floatBalance = 0;
    await call('POST', `/admin/payouts/${batchId}/send`);
    const mine = new Set(drivers.map((d) => d.id));
    await settle();
    const stopped = (await lines(batchId)).filter((l) => mine.has(l.party_id));
    const failed = stopped.filter((l) => l.status === 'FAILED');
    const open = stopped.filter((l) => l.status === 'OPEN');
    assert.ok(failed.length > 0 && open.length > 0, `failed ${failed.length}, open ${open.length}`);
    assert.equal(failed.length + open.length, 20);
    for (const l of failed) assert.match(l.failure_reason!, /insufficient/i);
    const row = await t.db
      .selectFrom('payout_batches')
      .select('mpesa_stopped')
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();
    assert.match(row.mpesa_stopped!, /float/i);
    // Failed lines' money is back on the balance.
    assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: failed[0]!.party_id }), 10_000);

    sandbox.floatBalance = 1_000_000;
    const again = await call('POST', `/admin/payouts/${batchId}/send`);
    assert.equal(again.json().lines, open.length);
    await settle();
    // Callbacks the stand-in lost: Transaction Status finds them.
    t.clock.advance(5 * 60_000 + 1000);
    await b2c().sweep();
    await settle();
    const done = (await lines(batchId)).filter((l) => mine.has(l.party_id));
    assert.deepEqual(
      done.filter((l) => l.status !== 'PAID' && l.status !== 'FAILED'),
      [],
    );
    for (const l of open)
      assert.equal(await t.services.ledger.balance('KES', { kind: 'DRIVER', partyId: l.party_id }), 0);
    for (const row of await t.services.ledger.trialBalance()) assert.equal(row.total, 0);
  });
});

describe('M-Pesa off', () => {
  test('POST /admin/payouts/:id/send is 409 MPESA_DISABLED', async () => {
    const t = await buildTestApp();
    try {
      const admin = await createUser(t, { role: 'ADMIN' });
      const res = await caller(t, admin)('POST', '/admin/payouts/00000000-0000-4000-8000-000000000000/send');
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().code, 'MPESA_DISABLED');
    } finally {
      await t.close();
    }
  });
});
