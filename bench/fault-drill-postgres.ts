// Fault drill: two API processes on one PostgreSQL server of the drill's own, under a write load,
// through (1) every app connection terminated and (2) `pg_ctl restart -m fast`. Prints, for each
// fault, the time until both instances are ready again, the requests failed (by status) and the
// requests answered in the fault's window, then checks that every acknowledged write is stored.
//
//   npx tsx bench/fault-drill-postgres.ts            (DRILL_SECONDS=20 by default)
//
// Needs the PostgreSQL server binaries (initdb, pg_ctl); as root they run as the `postgres` user.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { TEST_JWT_SECRET } from '../test/helpers/app.js';
import { createLoadAccounts, startServer, WriteLoad, type ServerProcess } from '../test/helpers/fault-load.js';
import { freePort, pgClusterSkipReason, startPgCluster } from '../test/helpers/pg-cluster.js';

if (pgClusterSkipReason) {
  console.error(`fault drill: ${pgClusterSkipReason}`);
  process.exit(1);
}

const seconds = Number(process.env.DRILL_SECONDS ?? 20);
const window = Math.max(3, Math.floor(seconds / 4)) * 1000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls /health/ready on every instance, keeping each answer's time and status. */
class ReadyWatch {
  private readonly samples: { base: string; at: number; status: number }[] = [];
  private running = true;
  private readonly loops: Promise<void>[];
  constructor(bases: string[]) {
    this.loops = bases.map((base) => this.poll(base));
  }
  private async poll(base: string): Promise<void> {
    while (this.running) {
      const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
      if (res) await res.arrayBuffer();
      this.samples.push({ base, at: Date.now(), status: res?.status ?? 0 });
      await pause(50);
    }
  }
  /** From `since` until every instance answered 200 after its last other answer (0 when never unready). */
  readyAgainAfter(since: number, bases: string[]): { ms: number; unreadySamples: number } {
    let ms = 0;
    let unreadySamples = 0;
    for (const base of bases) {
      const mine = this.samples.filter((s) => s.base === base && s.at >= since);
      let lastBad = -1;
      mine.forEach((s, i) => s.status !== 200 && (lastBad = i));
      unreadySamples += mine.filter((s) => s.status !== 200).length;
      if (lastBad >= 0) ms = Math.max(ms, (mine[lastBad + 1]?.at ?? Date.now()) - since);
    }
    return { ms, unreadySamples };
  }
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

const cluster = await startPgCluster();
const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-drill-'));
const servers: ServerProcess[] = [];
try {
  const url = await cluster.createDatabase('drill');
  const database = await openDatabase({ url, poolSize: 2 });
  await migrateToLatest(database.db);
  const accounts = await createLoadAccounts(database.db, 20);
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: url,
    JWT_SECRET: TEST_JWT_SECRET,
    RATE_LIMIT_GLOBAL: 'off',
    LOG_LEVEL: 'info',
  };
  for (let i = 0; i < 2; i++) servers.push(await startServer(env, await freePort()));
  const bases = servers.map((s) => s.base);

  const load = new WriteLoad(bases, accounts, 8);
  const watch = new ReadyWatch(bases);
  load.start();
  await pause(window / 2);

  const results: Record<string, unknown>[] = [];
  const fault = async (name: string, inject: () => Promise<unknown>) => {
    const answeredBefore = load.answered;
    const started = Date.now();
    const detail = await inject();
    const injectMs = Date.now() - started;
    await pause(Math.max(0, window - injectMs));
    results.push({
      fault: name,
      detail,
      injectMs,
      readyAgainMs: watch.readyAgainAfter(started, bases).ms,
      unreadyProbes: watch.readyAgainAfter(started, bases).unreadySamples,
      windowMs: Date.now() - started,
      answered: load.answered - answeredBefore,
      failedByStatus: load.failuresByStatus(started),
      processesUp: servers.every((s) => s.alive()),
    });
  };
  await fault('pg_terminate_backend (every app connection)', async () => ({
    terminated: await cluster.terminateConnections('drill'),
  }));
  await fault('pg_ctl restart -m fast', () => cluster.restart());

  await load.stop();
  await watch.stop();
  const alive = servers.every((s) => s.alive());
  for (const s of servers) s.child.kill('SIGTERM');
  const exitCodes = await Promise.all(servers.map((s) => s.exited));

  const ids = load.createdPackages;
  const stored = ids.length
    ? await database.db.selectFrom('packages').select('id').where('id', 'in', ids).execute()
    : [];
  const rows = await database.db.selectFrom('driver_profiles').select(['user_id', 'last_lat']).execute();
  const positionsLost = rows.filter(
    (r) => load.lastLatitude.has(r.user_id) && (r.last_lat ?? -90) < load.lastLatitude.get(r.user_id)! - 1e-9,
  ).length;
  await database.close();

  const logLines = servers
    .flatMap((s) => s.output().split('\n'))
    .filter((l) => /"msg":"database (lost|recovered)"/.test(l));
  console.log(
    JSON.stringify(
      {
        instances: servers.length,
        loadConcurrency: 8,
        faults: results,
        totals: { answered: load.answered, failedByStatus: load.failuresByStatus() },
        processesStayedUp: alive,
        exitCodes,
        acknowledged: {
          packages: ids.length,
          packagesStored: stored.length,
          drivers: load.lastLatitude.size,
          positionsLost,
        },
        stateLogLines: logLines.map((l) => {
          const { msg, code, downMs, failedRequests, connectionErrors } = JSON.parse(l) as Record<string, unknown>;
          return { msg, code, downMs, failedRequests, connectionErrors };
        }),
      },
      null,
      2,
    ),
  );
} finally {
  for (const s of servers) if (s.alive()) s.child.kill('SIGKILL');
  await cluster.destroy();
  await rm(dataDir, { recursive: true, force: true });
}
