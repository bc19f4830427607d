// Where state lives: the database (PGlite in DATA_DIR, or a PostgreSQL server) and Redis (one, a cluster, or none).
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface DatabaseConfig {
  url: string | undefined;
  /** How long a statement waits for a database connection before it fails (503). */
  connectTimeoutMs: number;
}

export interface RedisConfig {
  /** A single Redis (redis:// or rediss://). */
  url: string | undefined;
  /** A Redis Cluster: its seed nodes (REDIS_CLUSTER_NODES or a redis+cluster:// URL), and the password if any. */
  cluster: RedisClusterConfig | undefined;
  keyPrefix: string;
}

export interface RedisClusterConfig {
  nodes: { host: string; port: number }[];
  username: string | undefined;
  password: string | undefined;
}

export function readDatabase(r: EnvReader, { isProduction }: ServerConfig): DatabaseConfig {
  const url = r.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  if (isProduction && !url) r.problem('DATABASE_URL is required in production');
  return { url, connectTimeoutMs: r.duration('DATABASE_CONNECT_TIMEOUT', '5s', '5m') };
}

export function readRedis(r: EnvReader): RedisConfig {
  let url: string | undefined;
  let cluster: RedisClusterConfig | undefined;
  const clusterNodes = r.get('REDIS_CLUSTER_NODES');
  const rawRedisUrl = r.get('REDIS_URL');
  if (rawRedisUrl?.startsWith('redis+cluster://')) {
    cluster = parseClusterUrl(rawRedisUrl);
    if (!cluster) r.problem('REDIS_URL must be redis+cluster://[user:password@]host:port,host:port,...');
  } else {
    url = r.url('REDIS_URL', ['redis:', 'rediss:']);
  }
  if (clusterNodes !== undefined) {
    const nodes = parseHostPorts(clusterNodes);
    if (!nodes) r.problem('REDIS_CLUSTER_NODES must be a comma-separated list of host:port');
    else if (rawRedisUrl !== undefined) r.problem('set either REDIS_URL or REDIS_CLUSTER_NODES, not both');
    else cluster = { nodes, username: undefined, password: undefined };
  }
  return { url, cluster, keyPrefix: r.str('REDIS_KEY_PREFIX', 'rd:') };
}

function parseHostPorts(raw: string): { host: string; port: number }[] | undefined {
  const nodes: { host: string; port: number }[] = [];
  for (const item of raw.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) return undefined;
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes.length ? nodes : undefined;
}

/** redis+cluster://[user:password@]host:port,host:port (URL cannot parse a list of hosts). */
function parseClusterUrl(raw: string): RedisClusterConfig | undefined {
  const rest = raw.slice('redis+cluster://'.length).replace(/\/+$/, '');
  const at = rest.lastIndexOf('@');
  const auth = at >= 0 ? rest.slice(0, at) : undefined;
  const nodes = parseHostPorts(at >= 0 ? rest.slice(at + 1) : rest);
  if (!nodes) return undefined;
  let username: string | undefined;
  let password: string | undefined;
  if (auth !== undefined) {
    const colon = auth.indexOf(':');
    try {
      username = decodeURIComponent(colon >= 0 ? auth.slice(0, colon) : auth) || undefined;
      password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) || undefined : undefined;
    } catch {
      return undefined;
    }
  }
  return { nodes, username, password };
}
