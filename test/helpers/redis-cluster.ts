// A Redis Cluster of a test's own: three primaries with one replica each, on free ports, in a temporary
// folder; never the shared server of TEST_REDIS_URL. The test may fail a primary over to its replica.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './processes.js';

export const redisClusterSkipReason: string | false =
  spawnSync('redis-server', ['--version']).error || spawnSync('redis-cli', ['--version']).error
    ? 'needs redis-server and redis-cli on PATH (not found): Redis Cluster tests skipped'
    : false;

interface Node {
  port: number;
  child: ChildProcess;
}

export interface RedisClusterHandle {
  ports: number[];
  /** host:port,host:port,... for REDIS_CLUSTER_NODES. */
  seeds: string;
  /** The node that is primary for `key`'s slot, and its replica. */
  roles(key: string): Promise<{ primary: number; replica: number }>;
  /** CLUSTER FAILOVER on the replica of `key`'s primary; resolves when every node sees the new primary. */
  failover(key: string): Promise<{ from: number; to: number }>;
  /** SIGKILL of `key`'s primary (a crash); resolves once its replica is primary for the slot on the other nodes. */
  crashPrimary(key: string): Promise<{ from: number; to: number }>;
  close(): Promise<void>;
}

async function startNode(dir: string, port: number): Promise<Node> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      path.join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      '2000',
      '--dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}): ${output}`));
    });
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { port, child };
}

async function command(port: number, ...args: string[]): Promise<string> {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  try {
    await client.connect();
    return String(await client.call(args[0]!, ...args.slice(1)));
  } finally {
    client.disconnect();
  }
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every node says the cluster is ok and agrees on the primary of slot `slot` (when given). */
async function settled(ports: number[], slot?: number, primaryPort?: number): Promise<boolean> {
  for (const port of ports) {
    const info = await command(port, 'CLUSTER', 'INFO');
    if (!info.includes('cluster_state:ok')) return false;
    if (slot !== undefined) {
      const owner = await slotOwner(port, slot);
      if (owner.primary !== primaryPort) return false;
    }
  }
  return true;
}

async function slotOwner(port: number, slot: number): Promise<{ primary: number; replica: number }> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  try {
    await client.connect();
    const ranges = (await client.call('CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number, string],
      ...[string, number, string][],
    ][];
    for (const [start, end, primary, replica] of ranges) {
      if (slot >= start && slot <= end) return { primary: primary[1], replica: replica?.[1] ?? -1 };
    }
    throw new Error(`slot ${slot} not covered`);
  } finally {
    client.disconnect();
  }
}

async function everyRangeReplicated(port: number): Promise<boolean> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  try {
    await client.connect();
    const ranges = (await client.call('CLUSTER', 'SLOTS')) as unknown[][];
    return ranges.length === 3 && ranges.every((range) => range.length >= 4);
  } finally {
    client.disconnect();
  }
}

export async function startRedisCluster(): Promise<RedisClusterHandle> {
  if (redisClusterSkipReason) throw new Error(redisClusterSkipReason);
  const dir = await mkdtemp('/tmp/rd-redis-cluster-');
  const nodes: Node[] = [];
  const close = async () => {
    await Promise.all(
      nodes.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i += 1) nodes.push(await startNode(dir, await freePort()));
    const ports = nodes.map((n) => n.port);
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await until(() => settled(ports), 30_000, 'cluster_state:ok on every node');
    // Replicas attach a moment after the slots are served: a failover needs them in sync.
    await until(
      async () => {
        for (const port of ports) {
          const info = await command(port, 'INFO', 'replication');
          if (info.includes('role:slave') && !info.includes('master_link_status:up')) return false;
          if (!(await everyRangeReplicated(port))) return false;
        }
        return true;
      },
      30_000,
      'replicas in sync',
    );

    const roles = async (key: string) =>
      slotOwner(ports[0]!, Number(await command(ports[0]!, 'CLUSTER', 'KEYSLOT', key)));
    return {
      ports,
      seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
      roles,
      async failover(key) {
        const slot = Number(await command(ports[0]!, 'CLUSTER', 'KEYSLOT', key));
        const { primary, replica } = await slotOwner(ports[0]!, slot);
        if (replica < 0) throw new Error(`slot ${slot} has no replica`);
        await command(replica, 'CLUSTER', 'FAILOVER');
        await until(
          () => settled(ports, slot, replica),
          30_000,
          `127.0.0.1:${replica} primary for slot ${slot} on every node`,
        );
        return { from: primary, to: replica };
      },
      async crashPrimary(key) {
        const slot = Number(await command(ports[0]!, 'CLUSTER', 'KEYSLOT', key));
        const { primary, replica } = await slotOwner(ports[0]!, slot);
        const node = nodes.find((n) => n.port === primary)!;
        const exited = new Promise((resolve) => node.child.once('exit', resolve));
        node.child.kill('SIGKILL');
        await exited;
        const alive = ports.filter((p) => p !== primary);
        await until(
          async () => {
            for (const port of alive) if ((await slotOwner(port, slot)).primary !== replica) return false;
            return true;
          },
          30_000,
          `127.0.0.1:${replica} promoted for slot ${slot}`,
        );
        return { from: primary, to: replica };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
