// The router (contract section 25): how far and how long a trip is by road.
import type { EnvReader } from './env-reader.js';

export type RouterKind = 'straight' | 'graph' | 'osrm' | 'valhalla';
export const ROUTER_KINDS: readonly RouterKind[] = ['straight', 'graph', 'osrm', 'valhalla'];

export interface RoutingConfig {
  /** straight: great-circle × factor; graph: a GeoJSON road network in memory; osrm, valhalla: over HTTP. */
  kind: RouterKind;
  /** The detour factor of the straight estimate (and of every fallback to it), e.g. 1.3. */
  factor: number;
  /** ROUTER=graph: the GeoJSON file of the road network. */
  graphPath: string | undefined;
  /** ROUTER=osrm or valhalla: the server's base URL, without a trailing slash. */
  url: string | undefined;
  /** How long a route or matrix call waits for the server before the straight estimate is used. */
  timeoutMs: number;
  /** ROUTER=graph: a point further than this from the nearest road node is unroutable (straight fallback). */
  snapMeters: number;
}

export function readRouting(r: EnvReader): RoutingConfig {
  const kind = r.oneOf('ROUTER', ROUTER_KINDS, 'straight', { lowercase: true });
  const rawFactor = r.get('ROUTER_FACTOR');
  let factor = 1.3;
  if (rawFactor !== undefined) {
    const value = Number(rawFactor);
    if (!/^\d+(\.\d+)?$/.test(rawFactor) || value < 1 || value > 3)
      r.problem(`ROUTER_FACTOR must be a number from 1 to 3 (got "${rawFactor}")`);
    else factor = value;
  }
  const graphPath = r.get('ROUTER_GRAPH');
  if (kind === 'graph' && graphPath === undefined) r.problem('ROUTER=graph needs ROUTER_GRAPH (a GeoJSON file)');
  const url = r.url('ROUTER_URL', ['http:', 'https:'])?.replace(/\/+$/, '');
  if ((kind === 'osrm' || kind === 'valhalla') && url === undefined && r.get('ROUTER_URL') === undefined)
    r.problem(`ROUTER=${kind} needs ROUTER_URL (the server's http(s) URL)`);
  return {
    kind,
    factor,
    graphPath,
    url,
    timeoutMs: r.duration('ROUTER_TIMEOUT', '2s', '1m'),
    snapMeters: r.distance('ROUTER_SNAP_DISTANCE', '1km', 1, 50_000),
  };
}
