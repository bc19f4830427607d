// The worker process's own small HTTP server: /health, /health/ready and /metrics (contract section 12).
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from './deps.js';
import type { App } from './http/context.js';
import { registerErrorHandling } from './http/errors.js';
import { healthModule } from './modules/health/health.routes.js';

export async function buildWorkerApp({ deps }: { deps: Deps }): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    return503OnClosing: true,
    forceCloseConnections: true,
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerErrorHandling(app);
  await healthModule(app, { deps });
  return app;
}
