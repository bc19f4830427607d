import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { HttpMetrics } from './metrics.js';

test('HTTP metrics scrape exactly as prom-client Counter and Histogram would show the same requests', async () => {
  const reference = new Registry();
  const labelNames = ['method', 'route', 'status'];
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
  const histogram = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames,
    buckets,
    registers: [reference],
  });
  const counter = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames,
    registers: [reference],
  });
  const ours = new Registry();
  const metrics = new HttpMetrics(ours);
  const requests = [
    ['GET', '/api/a', 200, 0.0004],
    ['GET', '/api/a', 200, 0.001], // on a bucket bound: counted in that bucket (le)
    ['GET', '/api/a', 200, 0.003],
    ['POST', '/api/b "quoted"', 404, 3],
    ['GET', 'unmatched', 404, 0.02],
  ] as const;
  for (const [method, route, status, seconds] of requests) {
    histogram.observe({ method, route, status: String(status) }, seconds);
    counter.inc({ method, route, status: String(status) });
    metrics.observe(method, route, status, seconds);
  }
  assert.equal(await ours.metrics(), await reference.metrics());
  ours.resetMetrics();
  assert.doesNotMatch(await ours.metrics(), /route=/);
});
