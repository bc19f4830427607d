// Prometheus metrics: one registry per app (tests build several apps in one process).
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Series {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}

/**
 * `http_requests_total` and `http_request_duration_seconds` by method, route and status. Every
 * request pays for this, so it counts in plain fields (prom-client hashes the labels of every
 * observation) and hands the figures to the registry when it is scraped.
 */
export class HttpMetrics {
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    const custom = (name: string, help: string, type: 'counter' | 'histogram', values: () => object[]) =>
      registry.registerMetric({
        name,
        help,
        type,
        aggregator: 'sum',
        get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
        reset: () => this.series.clear(),
      } as unknown as Metric);
    custom('http_request_duration_seconds', 'HTTP request latency by route and status', 'histogram', () => {
      const name = 'http_request_duration_seconds';
      const values: object[] = [];
      for (const s of this.series.values()) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += s.buckets[i];
          values.push({ metricName: `${name}_bucket`, labels: { le, ...s.labels }, value: cumulative });
        });
        values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...s.labels }, value: s.count });
        values.push({ metricName: `${name}_sum`, labels: s.labels, value: s.sum });
        values.push({ metricName: `${name}_count`, labels: s.labels, value: s.count });
      }
      return values;
    });
    custom('http_requests_total', 'HTTP requests by route and status', 'counter', () =>
      [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })),
    );
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${status} ${method} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(DURATION_BUCKETS.length + 1),
      };
      this.series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]) i++;
    s.buckets[i] += 1;
  }
}

export interface Metrics {
  registry: Registry;
  http: HttpMetrics;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  return { registry, http: new HttpMetrics(registry) };
}
