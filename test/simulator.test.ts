// The simulator against a started instance, as its README section runs it: it signs in as the admin,
// brings a fleet online over the WebSocket and walks jobs to the end through the public API only.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SIM_ADMIN as ADMIN, spawnTs, startSimServer, type SimServer } from './helpers/sim-server.js';

describe('simulator', () => {
  let server: SimServer | undefined;
  let url = '';
  let dataDir = '';
  before(async () => {
    server = await startSimServer();
    url = server.url;
    dataDir = server.dataDir;
  });
  after(async () => {
    await server?.stop();
  });

  test('at --speed 30 for 30 s, a fleet of 12 takes jobs and walks at least three to the end, with no server error', async () => {
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
        '30s',
        '--speed',
        '30',
        '--seed',
        '7',
        '--area=-1.2864,36.8172,1.5',
        '--cod-share',
        '1',
        '--json',
      ],
      { ...ADMIN, SMS_FILE: path.join(dataDir, 'sms.log') },
    );
    const code = await sim.exited;
    assert.equal(code, 0, sim.stderr());
    const summary = JSON.parse(sim.stdout().trim().split('\n').pop()!) as {
      drivers: { online: number };
      jobs: { created: number; assigned: number; completed: number; packages: number };
      requests: { serverErrors: number };
      assignSeconds: { p50: number | null };
      offers: { received: number; accepted: number; declined: number; lapsed: number };
      prices: {
        quoted: number;
        byCurrency: {
          currency: string;
          orders: number;
          priceSum: number;
          priceAverage: number;
          rideFares: number;
          rideFareSum: number;
        }[];
      };
      cashOnDelivery: { packages: number; delivered: number; collected: number };
      errors: string[];
    };
    assert.equal(summary.drivers.online, 12);
    assert.ok(summary.jobs.created >= 10, `created ${summary.jobs.created}`);
    assert.ok(summary.jobs.completed >= 3, `completed ${summary.jobs.completed}: ${sim.stdout()}`);
    assert.equal(summary.requests.serverErrors, 0);
    assert.notEqual(summary.assignSeconds.p50, null);
    // Dispatch is on (DISPATCH_MODE=offer by default): jobs reach the drivers as offers, which they accept.
    assert.ok(summary.offers.accepted >= 3, `offers ${JSON.stringify(summary.offers)}`);
    assert.ok(summary.offers.received >= summary.offers.accepted + summary.offers.declined);
    // Every order was quoted first and carries the quoted price (Kenya: KES cents).
    assert.equal(summary.prices.quoted, summary.jobs.created);
    assert.deepEqual(
      summary.prices.byCurrency.map((c) => [c.currency, c.orders]),
      [['KES', summary.jobs.created]],
    );
    const kes = summary.prices.byCurrency[0]!;
    assert.ok(
      kes.priceAverage > 0 && Math.abs(kes.priceAverage * kes.orders - kes.priceSum) <= kes.orders,
      JSON.stringify(kes),
    );
    assert.ok(kes.rideFares === 0 || kes.rideFareSum > 0, JSON.stringify(kes));
    // --cod-share 1: every package carries cash on delivery, and the drivers' confirmations are accepted.
    assert.equal(summary.cashOnDelivery.packages, summary.jobs.packages);
    assert.ok(!summary.errors.some((e) => /COD_MISMATCH|CASH_COLLECTED/.test(e)), summary.errors.join('\n'));
    assert.ok(
      summary.cashOnDelivery.delivered === 0 || summary.cashOnDelivery.collected > 0,
      JSON.stringify(summary.cashOnDelivery),
    );
  });

  test('exits non-zero, saying why, when the instance cannot be reached or refuses the admin', async () => {
    const unreachable = spawnTs('src/cli/simulate.ts', ['--url', 'http://127.0.0.1:1', '--duration', '1s'], ADMIN);
    assert.equal(await unreachable.exited, 1);
    assert.match(unreachable.stderr(), /cannot reach http:\/\/127\.0\.0\.1:1/);

    const refused = spawnTs('src/cli/simulate.ts', ['--url', url, '--duration', '1s'], {
      ...ADMIN,
      ADMIN_PASSWORD: 'not-the-password',
      SMS_FILE: path.join(dataDir, 'sms.log'),
    });
    assert.equal(await refused.exited, 1);
    assert.match(refused.stderr(), /admin sign-in was refused: POST \/auth\/login: 401/);

    const noAdmin = spawnTs('src/cli/simulate.ts', ['--url', url], {});
    assert.equal(await noAdmin.exited, 2);
    assert.match(noAdmin.stderr(), /set ADMIN_EMAIL and ADMIN_PASSWORD/);
  });
});
