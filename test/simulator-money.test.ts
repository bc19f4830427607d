// Issue 30: one simulated hour of the simulator (--speed 30 for two minutes) with cash on delivery on
// a share of the packages, then every balance reconciled to the last minor unit with what the jobs
// say, by the rules of docs/money.md (computed here, not read back from the ledger's own split).
import assert from 'node:assert/strict';
import path from 'node:path';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import { Accounts } from '../src/cli/simulate/accounts.js';
import { Api, SmsInbox } from '../src/cli/simulate/client.js';
import type { SimOptions } from '../src/cli/simulate/options.js';
import { SIM_ADMIN, spawnTs, startSimServer, type SimServer } from './helpers/sim-server.js';

interface Money {
  amount: number;
  currency: string;
}
interface Earnings {
  driver: number;
  commission: number;
  bookingFee: number;
  tip: number;
  currency: string;
}
interface Job {
  id: string;
  status: string;
  businessId?: string | null;
  customerId?: string | null;
  driver: { id: string } | null;
  price: Money | null;
  fare?: Money | null;
  cancellationFee: Money | null;
  paymentMethod: 'CASH' | 'ACCOUNT';
  cashOnDelivery?: Money | null;
  cashCollected?: Money | null;
  earnings?: Earnings | null;
}
interface BalanceItem {
  partyKind: string;
  partyId: string | null;
  currency: string;
  balance: number;
}

/** The default commission rate of the tariffs (docs/money.md: 2000 = 20 %); the simulator changes no tariff. */
const RATE = 2000n;
/** round_half_up(x × rate / 10000) for x ≥ 0, in BigInt. */
const commissionOf = (x: number): number => Number((BigInt(x) * RATE * 2n + 10000n) / 20000n);

describe('simulator money', () => {
  let server: SimServer | undefined;
  before(async () => {
    server = await startSimServer({ serverDatabase: true });
  });
  after(async () => {
    await server?.stop();
  });

  test(
    'one simulated hour with cash on delivery: every balance reconciles with the jobs to the minor unit',
    { timeout: 600_000 },
    async () => {
      const { url, dataDir } = server!;
      const smsFile = path.join(dataDir, 'sms.log');
      const sim = spawnTs(
        'src/cli/simulate.ts',
        [
          '--url',
          url,
          '--drivers',
          '12',
          '--orders-per-minute',
          '30',
          '--duration',
          '2m',
          '--speed',
          '30',
          '--seed',
          '11',
          '--area=-1.2864,36.8172,1.5',
          '--cod-share',
          '0.3',
          '--json',
        ],
        { ...SIM_ADMIN, SMS_FILE: smsFile },
      );
      const code = await sim.exited;
      assert.equal(code, 0, sim.stderr());
      const summary = JSON.parse(sim.stdout().trim().split('\n').pop()!) as {
        requests: { serverErrors: number };
        cashOnDelivery: { packages: number; delivered: number };
      };
      assert.equal(summary.requests.serverErrors, 0);

      // The admin, as the simulator signs in (password, then the SMS code from the file transport).
      const api = new Api(url, 1);
      const accounts = new Accounts(api, new SmsInbox(smsFile), {} as SimOptions, '');
      const admin = await accounts.login(SIM_ADMIN.ADMIN_EMAIL, SIM_ADMIN.ADMIN_PASSWORD);
      const all = async <T>(route: string): Promise<T[]> => {
        const items: T[] = [];
        let cursor: string | null = null;
        do {
          const sep = route.includes('?') ? '&' : '?';
          const page: { items: T[]; nextCursor: string | null } = await api.call(
            'GET',
            `${route}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
            undefined,
            admin.accessToken,
          );
          items.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        return items;
      };
      // The simulator gives no tips: its business and customer (the seed's accounts) tip an ACCOUNT package
      // and a CASH ride here (and a CASH package, were there one: the simulator's packages are ACCOUNT),
      // so that both tip rules are reconciled too.
      const tipped = new Map<string, number>();
      const business = await accounts.login('sim11-business@sim.example', 'sim11-Business-pass');
      const customer = await accounts.login('sim11-customer@sim.example', 'sim11-Customer-pass');
      const tipOne = async (
        type: 'packages' | 'rides',
        jobs: Job[],
        method: 'CASH' | 'ACCOUNT',
        amount: number,
        session: { userId: string; accessToken: string },
      ) => {
        const mine = (j: Job) => (type === 'packages' ? j.businessId : j.customerId) === session.userId;
        const job = jobs.find(
          (j) => mine(j) && j.paymentMethod === method && (j.status === 'DELIVERED' || j.status === 'COMPLETED'),
        );
        if (!job) return;
        await api.call('POST', `/${type}/${job.id}/tip`, { amount }, session.accessToken);
        tipped.set(job.id, amount);
      };
      const delivered = await all<Job>('/packages?status=DELIVERED');
      await tipOne('packages', delivered, 'ACCOUNT', 777, business);
      await tipOne('packages', delivered, 'CASH', 333, business);
      await tipOne('rides', await all<Job>('/rides?status=COMPLETED'), 'CASH', 555, customer);
      assert.ok([...tipped.values()].includes(777), 'no delivered ACCOUNT package to tip');
      assert.ok([...tipped.values()].includes(555), 'no completed CASH ride to tip');

      const packages = await all<Job>('/packages');
      const rides = await all<Job>('/rides');
      const balances = await all<BalanceItem>('/admin/balances');
      if (server!.databaseUrl) {
        // On the PostgreSQL server: the run is in the test's own database there.
        const client = new pg.Client({ connectionString: server!.databaseUrl });
        await client.connect();
        try {
          const { rows } = await client.query<{ n: string }>('select count(*) as n from packages');
          assert.equal(Number(rows[0]!.n), packages.length);
        } finally {
          await client.end();
        }
      }

      // Expected balances, per account (kind, party, currency), from the jobs alone.
      const expected = new Map<string, number>();
      const add = (kind: string, partyId: string | null, currency: string, amount: number) => {
        assert.ok(Number.isSafeInteger(amount), `${kind} ${amount} is not an integer`);
        const key = `${kind}/${partyId ?? '-'}/${currency}`;
        expected.set(key, (expected.get(key) ?? 0) + amount);
      };
      const figures = {
        jobs: packages.length + rides.length,
        done: 0,
        cash: 0,
        account: 0,
        cancellationFees: 0,
        codDelivered: 0,
        codAmount: 0,
        tips: 0,
      };
      for (const [type, jobs] of [
        ['PACKAGE', packages],
        ['RIDE', rides],
      ] as const) {
        for (const job of jobs) {
          for (const m of [job.price, job.fare, job.cancellationFee, job.cashOnDelivery, job.cashCollected])
            if (m) assert.ok(Number.isSafeInteger(m.amount), `${type} ${job.id}: ${JSON.stringify(m)}`);
          const payer = job.businessId
            ? (['BUSINESS', job.businessId] as const)
            : (['CUSTOMER', job.customerId!] as const);
          const driverId = job.driver?.id ?? null;
          const tip = tipped.get(job.id) ?? 0;
          assert.equal(job.earnings?.tip ?? 0, tip, `${type} ${job.id}: tip`);
          if ((job.status === 'DELIVERED' || job.status === 'COMPLETED') && driverId && job.price) {
            figures.done++;
            const { amount, currency } = job.fare ?? job.price;
            // docs/money.md "Split": the booking fee off the top, the commission on the rest, the driver the remainder.
            const bookingFee = Math.min(job.earnings!.bookingFee, amount);
            const commission = commissionOf(amount - bookingFee);
            const driver = amount - bookingFee - commission;
            assert.deepEqual(
              [job.earnings!.driver, job.earnings!.commission, job.earnings!.currency],
              [driver, commission, currency],
              `${type} ${job.id} earnings`,
            );
            if (job.paymentMethod === 'CASH') {
              figures.cash++;
              add('DRIVER', driverId, currency, -amount + driver);
            } else {
              figures.account++;
              add(payer[0], payer[1], currency, -amount);
              add('DRIVER', driverId, currency, driver);
            }
            add('OPERATOR_COMMISSION', null, currency, commission);
            add('OPERATOR_BOOKING_FEES', null, currency, bookingFee);
            if (job.cashOnDelivery) {
              assert.deepEqual(job.cashCollected, job.cashOnDelivery, `${type} ${job.id}: cash collected`);
              figures.codDelivered++;
              figures.codAmount += job.cashOnDelivery.amount;
              add('DRIVER', driverId, job.cashOnDelivery.currency, -job.cashOnDelivery.amount);
              add('BUSINESS', job.businessId!, job.cashOnDelivery.currency, job.cashOnDelivery.amount);
            }
          } else if (job.status === 'CANCELLED' && driverId && job.cancellationFee && job.cancellationFee.amount > 0) {
            // A cancellation fee: charged to the creator whatever the payment method, no booking fee in it.
            figures.cancellationFees++;
            const { amount, currency } = job.cancellationFee;
            const commission = commissionOf(amount);
            add(payer[0], payer[1], currency, -amount);
            add('DRIVER', driverId, currency, amount - commission);
            add('OPERATOR_COMMISSION', null, currency, commission);
          } else {
            assert.ok(!job.cashCollected, `${type} ${job.id} ${job.status}: cash collected without a delivery`);
          }
          if (tip > 0 && driverId) {
            // Tips: all the driver's; an ACCOUNT tip is charged to the creator, a CASH tip is net zero.
            figures.tips += tip;
            if (job.paymentMethod === 'ACCOUNT') {
              add(payer[0], payer[1], job.price!.currency, -tip);
              add('DRIVER', driverId, job.price!.currency, tip);
            }
          }
        }
      }

      // Every listed balance is the expected one, and every expected non-zero balance is listed.
      const actual = new Map<string, number>();
      for (const b of balances) {
        assert.ok(Number.isSafeInteger(b.balance), JSON.stringify(b));
        const key = `${b.partyKind}/${b.partyId ?? '-'}/${b.currency}`;
        assert.ok(!actual.has(key), `${key} listed twice`);
        actual.set(key, b.balance);
      }
      const mismatches: string[] = [];
      for (const key of new Set([...actual.keys(), ...expected.keys()])) {
        const want = expected.get(key) ?? 0;
        const got = actual.get(key) ?? 0;
        if (want !== got) mismatches.push(`${key}: expected ${want}, balance ${got}`);
      }
      assert.deepEqual(mismatches, []);

      // All balances per currency sum to zero.
      const perCurrency = new Map<string, number>();
      for (const b of balances) perCurrency.set(b.currency, (perCurrency.get(b.currency) ?? 0) + b.balance);
      for (const [currency, sum] of perCurrency) assert.equal(sum, 0, `${currency} sums to ${sum}`);

      // The run did something worth reconciling.
      assert.ok(figures.done > 0, `no completed job: ${JSON.stringify(figures)}`);
      assert.ok(
        figures.codDelivered > 0,
        `no delivered cash-on-delivery package: ${JSON.stringify(figures)} ${JSON.stringify(summary.cashOnDelivery)}`,
      );
      const totals: Record<string, number> = {};
      for (const b of balances)
        totals[`${b.partyKind}/${b.currency}`] = (totals[`${b.partyKind}/${b.currency}`] ?? 0) + b.balance;
      console.log(JSON.stringify({ figures, totals, accounts: balances.length }));
    },
  );
});
