// A real server process for the simulator's tests: `src/server.ts` on a free port, on the embedded
// database in a fresh DATA_DIR, or on a new database of the PostgreSQL server (and the Redis server)
// when TEST_DATABASE_URL (and TEST_REDIS_URL) are set; the simulator is run against it.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServerDatabase, serverDatabaseUrl, testRedisUrl } from './database.js';
import { freePort, spawnNode, type NodeProcess } from './processes.js';

export const SIM_ADMIN = {
  ADMIN_EMAIL: 'admin@sim.example',
  ADMIN_PHONE: '+254700000009',
  ADMIN_PASSWORD: 'simulator-admin-pass',
};

export const spawnTs = (file: string, args: string[], env: Record<string, string>): NodeProcess =>
  spawnNode(['--import', 'tsx', file, ...args], env);

export interface SimServer {
  url: string;
  dataDir: string;
  /** The PostgreSQL database the server runs on; undefined: the embedded one in DATA_DIR. */
  databaseUrl: string | undefined;
  process: NodeProcess;
  stop(): Promise<void>;
}

export async function startSimServer(
  options: { serverDatabase?: boolean; env?: Record<string, string> } = {},
): Promise<SimServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-sim-'));
  const useServer = options.serverDatabase ?? false;
  const database = useServer && serverDatabaseUrl ? await createServerDatabase(serverDatabaseUrl, 'sim') : undefined;
  const port = String(await freePort());
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...SIM_ADMIN,
    PORT: port,
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SMS_TRANSPORT: 'file',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_GLOBAL: 'off',
    RATE_LIMIT_LOGIN: 'off',
    RATE_LIMIT_LOGIN_SEND_OTP: 'off',
    RATE_LIMIT_REGISTER_SEND_OTP: 'off',
    // The simulator runs at --speed 30: vehicles move faster than the default plausible speed in real time.
    MAX_PLAUSIBLE_SPEED: 'off',
    ...options.env,
  };
  if (database) env.DATABASE_URL = database.url;
  if (useServer && testRedisUrl)
    Object.assign(env, { REDIS_URL: testRedisUrl, REDIS_KEY_PREFIX: `sim-${randomBytes(4).toString('hex')}:` });
  const proc = spawnTs('src/server.ts', [], env);
  const stop = async () => {
    proc.child.kill('SIGTERM');
    await proc.exited;
    await rm(dataDir, { recursive: true, force: true });
    await database?.drop();
  };
  const until = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > until) {
      await stop();
      throw new Error(`server did not start:\n${proc.stdout()}${proc.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, dataDir, databaseUrl: database?.url, process: proc, stop };
}
