// The router around an engine (graph, OSRM, Valhalla): an engine error, a timeout or a pair without a
// route falls back to the straight estimate for that pair, counted (router_fallbacks_total) and
// recorded on the price (`great-circle×1.3 (graph fallback)`).
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { VehicleType } from '../../db/schema.js';
import type { Engine } from './engine.js';
import { straightLeg, straightName, type Leg, type Matrix, type Point, type Router } from './router.js';

export type FallbackReason = 'error' | 'timeout' | 'unroutable' | 'not_ready';

export class FallbackRouter implements Router {
  private readonly fallbacks: Counter<'router' | 'reason'>;
  /** The name recorded when a pair fell back. */
  readonly fallbackName: string;

  constructor(
    private readonly engine: Engine,
    private readonly deps: { factor: number; timeoutMs: number; registry: Registry; logger: Logger },
  ) {
    this.fallbackName = `${straightName(deps.factor)} (${engine.name} fallback)`;
    this.fallbacks = new Counter({
      name: 'router_fallbacks_total',
      help: 'Trips (route calls and matrix cells) the router answered with the straight estimate instead, by reason',
      labelNames: ['router', 'reason'],
      registers: [deps.registry],
    });
  }

  get name(): string {
    return this.engine.name;
  }

  get ready(): boolean {
    return this.engine.ready;
  }

  async route(from: Point, to: Point, vehicleType: VehicleType): Promise<Leg> {
    let reason: FallbackReason = 'not_ready';
    if (this.engine.ready) {
      try {
        const leg = await this.engine.route(from, to, vehicleType, AbortSignal.timeout(this.deps.timeoutMs));
        if (leg) return { ...leg, routing: this.engine.name };
        reason = 'unroutable';
      } catch (err) {
        reason = this.reasonOf(err);
      }
    }
    this.fallbacks.inc({ router: this.engine.name, reason });
    return { ...straightLeg(from, to, vehicleType, this.deps.factor), routing: this.fallbackName };
  }

  async matrix(sources: readonly Point[], destinations: readonly Point[], vehicleType: VehicleType): Promise<Matrix> {
    let table: { durations: (number | null)[][]; distances: (number | null)[][] } | undefined;
    let reason: FallbackReason = 'not_ready';
    if (this.engine.ready && sources.length > 0 && destinations.length > 0) {
      try {
        table = await this.engine.table(sources, destinations, vehicleType, AbortSignal.timeout(this.deps.timeoutMs));
        reason = 'unroutable';
      } catch (err) {
        reason = this.reasonOf(err);
      }
    }
    let fallbacks = 0;
    const durations: number[][] = [];
    const distances: number[][] = [];
    sources.forEach((s, i) => {
      const d: number[] = [];
      const m: number[] = [];
      destinations.forEach((t, j) => {
        const seconds = table?.durations[i]?.[j];
        const metres = table?.distances[i]?.[j];
        if (typeof seconds === 'number' && typeof metres === 'number') {
          d.push(seconds);
          m.push(metres);
        } else {
          const leg = straightLeg(s, t, vehicleType, this.deps.factor);
          d.push(leg.durationSeconds);
          m.push(leg.distanceMeters);
          fallbacks++;
        }
      });
      durations.push(d);
      distances.push(m);
    });
    if (fallbacks > 0) this.fallbacks.inc({ router: this.engine.name, reason }, fallbacks);
    return { durations, distances, routing: this.engine.name, fallbacks };
  }

  private reasonOf(err: unknown): FallbackReason {
    const name = (err as { name?: unknown })?.name;
    if (name === 'TimeoutError' || name === 'AbortError') return 'timeout';
    this.deps.logger.warn({ err, router: this.engine.name }, 'router failed: the straight estimate answers');
    return 'error';
  }
}
