// Issue 42, the simulator's part (contract sections 16, 22, 23): a short run at CLOCK_RATE=120 with
// jobs booked ahead, a recurring job and drivers made late on purpose; the report's punctuality, late
// jobs and alerts are checked against what the instance itself recorded (read back here as the admin).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Accounts, type Session } from '../src/cli/simulate/accounts.js';
import { Api, ApiError, SmsInbox } from '../src/cli/simulate/client.js';
import type { SimOptions } from '../src/cli/simulate/options.js';
import type { Summary } from '../src/cli/simulate/report.js';
import { SIM_ADMIN, spawnTs, startSimServer, type SimServer } from './helpers/sim-server.js';

const RATE = 120;

interface Window {
  start: string;
  end: string;
}
interface Job {
  id: string;
  status: string;
  statusHistory: { status: string; at: string }[];
  pickupWindow?: Window | null;
  dropoffWindow?: Window | null;
  scheduledAt?: string | null;
}

describe('simulator: jobs booked ahead, recurring jobs, CLOCK_RATE', () => {
  let server: SimServer | undefined;
  const anchor = new Date().toISOString();
  /** The instance's time (it runs RATE times faster from the anchor). */
  const serverNow = () => Date.parse(anchor) + (Date.now() - Date.parse(anchor)) * RATE;
  before(async () => {
    server = await startSimServer({
      serverDatabase: true,
      // At 120× a real second is two simulated minutes: the offer, quote, position and code lifetimes
      // (simulated time) are lengthened so that the run's real latencies fit in them (docs/simulator.md).
      env: {
        CLOCK_RATE: String(RATE),
        CLOCK_ANCHOR: anchor,
        DISPATCH_OFFER_TTL: '10m',
        QUOTE_TTL: '1h',
        DRIVER_LOCATION_TTL: '10m',
        OTP_TTL: '1h',
        LOGIN_SESSION_TTL: '1d',
        ACCESS_TOKEN_TTL: '1d',
      },
    });
  });
  after(async () => {
    await server?.stop();
  });

  test(
    'the share of pickups in their window, the late jobs and the alerts come from what the instance recorded',
    { timeout: 300_000 },
    async (t) => {
      const { url, dataDir } = server!;
      const smsFile = path.join(dataDir, 'sms.log');
      // Two simulated hours (60 s at 120×); windows start within 20 minutes of booking and last an hour,
      // so the early bookings are due before the end; 40 % of the booked drivers wait past the window.
      const sim = spawnTs(
        'src/cli/simulate.ts',
        [
          '--url',
          url,
          '--drivers',
          '10',
          '--orders-per-minute',
          '40',
          '--duration',
          '60s',
          '--clock-rate',
          String(RATE),
          '--scheduled-share',
          '0.8',
          '--book-ahead',
          '20m',
          '--late-share',
          '0.4',
          '--recurring',
          '1',
          '--ride-share',
          '0.2',
          '--seed',
          '21',
          '--area=-1.2864,36.8172,1.5',
          '--json',
        ],
        { ...SIM_ADMIN, SMS_FILE: smsFile, CLOCK_ANCHOR: anchor },
      );
      const code = await sim.exited;
      assert.equal(code, 0, sim.stderr());
      const endedAt = serverNow();
      const summary = JSON.parse(sim.stdout().trim().split('\n').pop()!) as Summary;
      assert.equal(summary.requests.serverErrors, 0, summary.errors.join('\n'));
      assert.ok(!summary.errors.some((e) => /TOKEN_EXPIRED|VALIDATION/.test(e)), summary.errors.join('\n'));
      const sc = summary.scheduled!;
      const late = summary.late!;
      t.diagnostic(JSON.stringify({ scheduled: sc, late, alerts: summary.alerts, clock: summary.clock }));
      assert.ok(sc, 'no scheduled section in the report');
      assert.equal(summary.clock.rate, RATE);
      assert.ok(sc.recurring >= 1, `no occurrence of the recurring job was walked: ${JSON.stringify(sc)}`);
      assert.ok(sc.due >= 5 && sc.inWindow >= 1, JSON.stringify(sc));
      assert.equal(sc.due, sc.inWindow + sc.early + sc.latePickups);
      assert.equal(sc.inWindowShare, Math.round((sc.inWindow / sc.due) * 10_000) / 10_000);
      // Drivers made late on purpose are counted late, and only what was late is.
      assert.ok(late.onPurpose >= 1, `no job made late on purpose was due: ${JSON.stringify({ sc, late })}`);
      assert.ok(late.jobs >= late.onPurpose && late.pickup >= late.onPurpose, JSON.stringify(late));
      assert.ok(sc.inWindowShare! < 1);
      assert.equal(sc.offeredEarly, 0, JSON.stringify(sc));

      // What the instance recorded, read as the admin.
      const api = new Api(url, 1);
      const accounts = new Accounts(api, new SmsInbox(smsFile), {} as SimOptions, '');
      const admin: Session = await accounts.login(SIM_ADMIN.ADMIN_EMAIL, SIM_ADMIN.ADMIN_PASSWORD);
      const get = <T>(route: string) => accounts.callAs<T>(admin, 'GET', route);
      const all = async (route: string): Promise<Job[]> => {
        const items: Job[] = [];
        let cursor: string | null = null;
        do {
          const page: { items: Job[]; nextCursor: string | null } = await get(
            `${route}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          items.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        return items;
      };
      const stamp = (job: Job, ...statuses: string[]) => {
        const item = job.statusHistory.find((h) => statuses.includes(h.status));
        return item ? Date.parse(item.at) : undefined;
      };
      // Every pickup of a booked job (the only jobs on this instance are the simulator's): inside its
      // window, early or late, counted here from the status histories.
      let inWindow = 0;
      let early = 0;
      for (const pkg of await all('/packages')) {
        const w = pkg.pickupWindow;
        const picked = stamp(pkg, 'PICKED_UP');
        if (!w || picked === undefined) continue;
        if (picked < Date.parse(w.start)) early++;
        else if (picked <= Date.parse(w.end)) inWindow++;
      }
      for (const ride of await all('/rides')) {
        const arrived = stamp(ride, 'ARRIVED');
        if (!ride.scheduledAt || arrived === undefined) continue;
        if (arrived <= Date.parse(ride.scheduledAt) + 5 * 60_000) inWindow++;
      }
      assert.equal(sc.inWindow, inWindow, 'pickups inside their window');
      assert.equal(sc.early, early, 'early pickups');
      // Each job the report calls late is late by the instance's own timestamps.
      for (const id of late.ids) {
        const job = await get<Job>(`/packages/${id}`).catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return get<Job>(`/rides/${id}`);
          throw err;
        });
        const start = job.pickupWindow ? Date.parse(job.pickupWindow.end) : Date.parse(job.scheduledAt!) + 5 * 60_000;
        const picked = job.pickupWindow ? stamp(job, 'PICKED_UP') : stamp(job, 'ARRIVED');
        const done = stamp(job, 'DELIVERED', 'FAILED');
        const pickupLate = picked === undefined ? start < endedAt : picked > start;
        const dropoffLate =
          job.dropoffWindow != null &&
          (done === undefined ? Date.parse(job.dropoffWindow.end) < endedAt : done > Date.parse(job.dropoffWindow.end));
        assert.ok(pickupLate || dropoffLate, `${id} is not late: ${JSON.stringify(job)}`);
      }

      // Alerts: read from GET /alerts when the instance has it (section 23), else "n/a".
      const alerts = await get<{ items: { kind: string }[] }>('/alerts?limit=100').catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      });
      if (alerts === null) assert.equal(summary.alerts, null);
      else {
        assert.ok(summary.alerts && typeof summary.alerts === 'object');
        for (const [kind, n] of Object.entries(summary.alerts))
          assert.ok(n <= alerts.items.filter((a) => a.kind === kind).length || alerts.items.length === 100, kind);
      }
    },
  );

  test('--max-active-jobs sets each driver through PATCH /admin/drivers/:id (the instance takes 1–20)', async () => {
    const { url, dataDir } = server!;
    const smsFile = path.join(dataDir, 'sms.log');
    // What the instance answers for one of the simulator's drivers (made by the test above, seed 21).
    const api = new Api(url, 1);
    const accounts = new Accounts(api, new SmsInbox(smsFile), {} as SimOptions, '');
    const admin = await accounts.login(SIM_ADMIN.ADMIN_EMAIL, SIM_ADMIN.ADMIN_PASSWORD);
    const users = await accounts.callAs<{ items: { id: string; email: string }[] }>(
      admin,
      'GET',
      '/admin/users?status=ACTIVE&limit=100',
    );
    const driver = users.items.find((u) => u.email === 'sim21-driver-0@sim.example');
    assert.ok(driver, 'the first test left no simulated driver');
    // The instance takes maxActiveJobs (contract section 24), 1–20.
    const set = await accounts.callAs<{ maxActiveJobs: number }>(admin, 'PATCH', `/admin/drivers/${driver.id}`, {
      maxActiveJobs: 2,
    });
    assert.equal(set.maxActiveJobs, 2);
    await assert.rejects(
      accounts.callAs(admin, 'PATCH', `/admin/drivers/${driver.id}`, { maxActiveJobs: 21 }),
      (err: unknown) => err instanceof ApiError && err.status === 400,
    );
    const sim = spawnTs(
      'src/cli/simulate.ts',
      [
        '--url',
        url,
        '--drivers',
        '2',
        '--orders-per-minute',
        '0',
        '--duration',
        '2s',
        '--seed',
        '21',
        '--max-active-jobs',
        '2',
      ],
      { ...SIM_ADMIN, SMS_FILE: smsFile },
    );
    const code = await sim.exited;
    assert.equal(code, 0, sim.stderr());
  });
});
