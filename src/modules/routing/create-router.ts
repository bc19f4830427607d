// The configured router (ROUTER): straight by default; graph, osrm and valhalla behind the fallback.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RoutingConfig } from '../../config/routing.js';
import { FallbackRouter } from './fallback.js';
import { GraphEngine } from './graph-router.js';
import { OsrmEngine, ValhallaEngine } from './http-engines.js';
import { StraightRouter, type Router } from './router.js';

export interface RouterDeps {
  registry: Registry;
  logger: Logger;
  fetch?: typeof fetch;
}

/**
 * The router ROUTER names. A graph starts loading at once, in the background: the router is not
 * `ready` until it is (GET /health/ready answers 503; meanwhile trips take the straight estimate).
 */
export function createRouter(config: RoutingConfig, deps: RouterDeps): Router & { loaded: Promise<void> } {
  const options = { factor: config.factor, timeoutMs: config.timeoutMs, registry: deps.registry, logger: deps.logger };
  switch (config.kind) {
    case 'graph': {
      const engine = new GraphEngine(config.snapMeters);
      const started = performance.now();
      const loaded = engine.load(config.graphPath!).then(
        () =>
          deps.logger.info(
            { ...engine.stats, ms: Math.round(performance.now() - started) },
            'road graph loaded (ROUTER=graph)',
          ),
        (err: unknown) => deps.logger.error({ err, path: config.graphPath }, 'ROUTER_GRAPH could not be loaded'),
      );
      return Object.assign(new FallbackRouter(engine, options), { loaded });
    }
    case 'osrm':
      return Object.assign(new FallbackRouter(new OsrmEngine(config.url!, deps.fetch), options), {
        loaded: Promise.resolve(),
      });
    case 'valhalla':
      return Object.assign(new FallbackRouter(new ValhallaEngine(config.url!, deps.fetch), options), {
        loaded: Promise.resolve(),
      });
    default:
      return Object.assign(new StraightRouter(config.factor), { loaded: Promise.resolve() });
  }
}
