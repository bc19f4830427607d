// The measured part of a one-route HTTP bench (B1, B16): the closed-loop maximum with the server's
// CPU per request, then (unless the rate is 0) an open loop at the target rate, each followed by the
// server's stats; the server is stopped at the end.
import type autocannon from 'autocannon';
import { load, openLoop, withServerCpu, type LoadResult, type OpenLoopRequest, type Server } from './harness.js';

export async function measureRoute(options: {
  server: Server;
  url: string;
  requests: autocannon.Request[];
  duration: number;
  rate: number;
  request: () => OpenLoopRequest;
}) {
  const { server, url, requests, duration, rate } = options;
  const pid = server.child.pid!;
  const max = await withServerCpu(pid, () => load({ url, requests, duration }));
  await server.ask('stats');
  // Open loop at the target rate: latencies include any queueing when the server cannot keep up.
  const atRate: LoadResult | undefined =
    rate === 0
      ? undefined
      : await openLoop({ url, rate, duration, connections: 100, serverPid: pid, request: options.request });
  const stats = await server.ask('stats');
  await server.stop();
  return { max, atRate, stats };
}

/** The route's maximum over the bare baseline's, to two decimals. */
export const ratioTo = (base: LoadResult, max: LoadResult) =>
  Math.round((max.requestsPerSec / base.requestsPerSec) * 100) / 100;
