// A throw-away PostgreSQL cluster on a free port, for tests (and drills) that terminate connections
// or restart the server: the shared server must never be touched. initdb refuses to run as root, so
// as root every PostgreSQL binary runs as the `postgres` user.
import { execFile as execFileCb, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './processes.js';

export { freePort };

const execFile = promisify(execFileCb);

function findBinDir(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const onPath = which.status === 0 ? which.stdout.trim() : '';
  if (onPath && existsSync(path.join(path.dirname(onPath), 'pg_ctl'))) return path.dirname(onPath);
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  for (const version of readdirSync(root).sort().reverse()) {
    const dir = path.join(root, version, 'bin');
    if (existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

const binDir = findBinDir();
const asRoot = process.getuid?.() === 0;
const postgresUser = asRoot ? spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }) : undefined;
const postgresUid = postgresUser?.status === 0 ? Number(postgresUser.stdout.trim()) : undefined;
const postgresGid = asRoot
  ? Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim())
  : undefined;

const hasRunuser = !asRoot || spawnSync('sh', ['-c', 'command -v runuser']).status === 0;

/** Why a test that needs its own cluster must be skipped, or false when it can run. */
export const pgClusterSkipReason: string | false = !binDir
  ? 'needs the PostgreSQL server binaries (initdb, pg_ctl) to start a cluster of its own'
  : asRoot && (postgresUid === undefined || !hasRunuser)
    ? 'needs a `postgres` user and runuser to run initdb as (initdb refuses to run as root)'
    : false;

async function run(binary: string, args: string[]): Promise<string> {
  const file = path.join(binDir!, binary);
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  const { stdout } = await execFile(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
  return stdout;
}

export interface PgCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  adminUrl: string;
  /** A new database on the cluster; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** pg_terminate_backend on every connection to `database` (not this helper's own); how many. */
  terminateConnections(database: string): Promise<number>;
  /** `pg_ctl restart -m fast`: every connection is closed, the server is away for a moment. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast` and `pg_ctl start`: a restart with the outage in the caller's hands. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

export async function startPgCluster(): Promise<PgCluster> {
  if (pgClusterSkipReason) throw new Error(pgClusterSkipReason);
  const dir = await mkdtemp('/tmp/rd-pg-');
  const dataDir = path.join(dir, 'data');
  if (asRoot) await chown(dir, postgresUid!, postgresGid!);
  const port = await freePort();
  await run('initdb', ['-D', dataDir, '--auth=trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  // fsync off: a fast shutdown (what these tests do) still writes everything out; only a crash would not.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 -c shared_buffers=16MB`;
  await run('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const query = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  };

  let destroyed = false;
  return {
    port,
    adminUrl,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      await query(`create database ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async terminateConnections(database) {
      const result = await query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [database],
      );
      return result.rowCount ?? 0;
    },
    async restart() {
      // The server's output goes to the log file, never to our pipe (which would then never close).
      await run('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        path.join(dir, 'server.log'),
        '-m',
        'fast',
        '-w',
        '-t',
        '60',
        'restart',
      ]);
    },
    async stop() {
      await run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
    },
    async start() {
      await run('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        path.join(dir, 'server.log'),
        '-o',
        options,
        '-w',
        '-t',
        '60',
        'start',
      ]);
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
