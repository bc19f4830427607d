// The transactions a job's end books (jobTransactions) against the `earnings` a job shows (jobEarnings):
// what the driver's side is shown after completion is what the ledger booked, for any job.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { jobEarnings, type JobMoneyFacts } from './job-money.js';
import { jobTransactions } from './job-money-hook.js';
import { checkTransaction } from '../ledger/postings.js';

const DRIVER = '00000000-0000-4000-8000-000000000001';
const BUSINESS = '00000000-0000-4000-8000-000000000002';
const JOB = '00000000-0000-4000-8000-000000000009';

const job = fc.record({
  status: fc.constantFrom('DELIVERED', 'COMPLETED', 'CANCELLED', 'FAILED'),
  cash: fc.boolean(),
  amount: fc.integer({ min: 0, max: 10 ** 9 }),
  feePercent: fc.integer({ min: 0, max: 100 }),
  rate: fc.integer({ min: 0, max: 10_000 }),
  cancellationFee: fc.option(fc.integer({ min: 1, max: 10 ** 7 }), { nil: null }),
  cod: fc.option(fc.integer({ min: 1, max: 10 ** 8 }), { nil: null }),
});

test('every booked transaction balances; the driver EARNINGS booked equal the earnings shown; COD only on delivery', () => {
  fc.assert(
    fc.property(job, (j) => {
      const bookingFee = Math.floor((j.amount * j.feePercent) / 100);
      const outcome = j.status === 'CANCELLED' ? 'CANCELLED' : j.status === 'FAILED' ? 'OTHER' : 'DONE';
      const facts: JobMoneyFacts = {
        jobType: j.status === 'COMPLETED' ? 'RIDE' : 'PACKAGE',
        jobId: JOB,
        outcome,
        driverId: DRIVER,
        payer: { kind: 'BUSINESS', partyId: BUSINESS },
        paymentMethod: j.cash ? 'CASH' : 'ACCOUNT',
        currency: 'KES',
        amount: j.amount,
        bookingFee,
        commissionRate: j.rate,
        cancellationFee: j.status === 'CANCELLED' ? j.cancellationFee : null,
        cashOnDelivery: j.cod === null ? null : { amount: j.cod, businessId: BUSINESS },
      };
      const inputs = jobTransactions(facts);
      for (const input of inputs) checkTransaction(input);
      assert.equal(new Set(inputs.map((i) => i.sourceKey)).size, inputs.length, 'one source key each');
      const booked = inputs
        .flatMap((i) => i.entries)
        .filter((e) => e.code === 'EARNINGS')
        .reduce((s, e) => s + e.amount, 0);
      const shown = jobEarnings(
        {
          status: j.status,
          driver_id: DRIVER,
          payment_method: facts.paymentMethod,
          commission_rate: j.rate,
          price_amount: j.amount,
          price_currency: 'KES',
          price_breakdown: { bookingFee },
          cancellation_fee: facts.cancellationFee,
        },
        j.amount,
        0,
      )!;
      assert.equal(shown.driver, booked);
      const cod = inputs.filter((i) => i.sourceKey.startsWith('cod:'));
      assert.equal(cod.length, outcome === 'DONE' && j.cod !== null ? 1 : 0);
      if (outcome === 'OTHER') assert.deepEqual(inputs, []);
    }),
  );
});

test('no driver or no price: nothing booked', () => {
  const base: JobMoneyFacts = {
    jobType: 'PACKAGE',
    jobId: JOB,
    outcome: 'DONE',
    driverId: DRIVER,
    payer: { kind: 'BUSINESS', partyId: BUSINESS },
    paymentMethod: 'ACCOUNT',
    currency: 'KES',
    amount: 100,
    bookingFee: 0,
    commissionRate: 2000,
    cancellationFee: null,
    cashOnDelivery: null,
  };
  assert.equal(jobTransactions(base).length, 1);
  assert.deepEqual(jobTransactions({ ...base, driverId: null }), []);
  assert.deepEqual(jobTransactions({ ...base, currency: null }), []);
  assert.deepEqual(jobTransactions({ ...base, amount: 0 }), []);
});
