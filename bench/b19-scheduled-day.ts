// B19 (issue 42): a seeded simulated day at CLOCK_RATE (default 60) — scheduled and ASAP packages,
// the simulator's fleet — and the share of scheduled pickups started inside their window (target ≥ 98 %).
// It starts one instance (src/server.ts) with CLOCK_RATE and CLOCK_ANCHOR, on a new database of the
// PostgreSQL server with Redis when TEST_DATABASE_URL / TEST_REDIS_URL are set (else the embedded one),
// runs `npm run simulate` against it with the same rate and anchor, and prints the simulator's report.
// Usage: npx tsx bench/b19-scheduled-day.ts [simulator flags…]
//   defaults: --drivers 150 --orders-per-minute 80 --duration 5m --scheduled-share 0.5 --seed 42
//   env: BENCH_CLOCK_RATE (60)
import path from 'node:path';
import { SIM_ADMIN, spawnTs, startSimServer } from '../test/helpers/sim-server.js';

const rate = process.env.BENCH_CLOCK_RATE ?? '60';
const anchor = new Date().toISOString();
const defaults: Record<string, string> = {
  '--drivers': '150',
  '--orders-per-minute': '80',
  '--duration': '5m',
  '--scheduled-share': '0.5',
  '--ride-share': '0',
  '--seed': '42',
};
const given = process.argv.slice(2);
const args = [...given];
for (const [flag, value] of Object.entries(defaults))
  if (!given.some((a) => a === flag || a.startsWith(`${flag}=`))) args.push(flag, value);

const server = await startSimServer({
  serverDatabase: true,
  env: { CLOCK_RATE: rate, CLOCK_ANCHOR: anchor, LOG_LEVEL: 'error' },
});
console.error(`instance ${server.url} (CLOCK_RATE=${rate}, ${server.databaseUrl ? 'PostgreSQL' : 'PGlite'})`);
try {
  const sim = spawnTs('src/cli/simulate.ts', ['--url', server.url, '--clock-rate', rate, ...args], {
    ...SIM_ADMIN,
    CLOCK_ANCHOR: anchor,
    SMS_FILE: path.join(server.dataDir, 'sms.log'),
  });
  sim.child.stderr!.pipe(process.stderr);
  const code = await sim.exited;
  console.log(`npx tsx bench/b19-scheduled-day.ts ${given.join(' ')}`);
  console.log(`simulate ${args.join(' ')} (exit ${code})`);
  console.log(sim.stdout());
} finally {
  await server.stop();
}
