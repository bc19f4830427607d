// `npm run worker`: the shared background work alone (background.ts), with /health* and /metrics on WORKER_PORT.
import closeWithGrace from 'close-with-grace';
import { runLoops, sharedWork } from './background.js';
import { loadConfigOrExit } from './config.js';
import { createDeps } from './deps.js';
import { createServices } from './services.js';
import { buildWorkerApp } from './worker-app.js';

const config = loadConfigOrExit();

if (!config.database.url) {
  // The embedded database lives inside one process; a separate worker needs the shared server.
  console.error('npm run worker needs DATABASE_URL (a PostgreSQL server shared with the API processes)');
  process.exit(1);
}

const deps = await createDeps(config);
const services = await createServices(deps);
const background = runLoops(sharedWork(deps, services, { webhookWorker: true }));
const app = await buildWorkerApp({ deps });

closeWithGrace({ delay: config.webhooks.timeoutMs + 5_000 }, async ({ signal, err }) => {
  if (err) deps.logger.error({ err }, 'worker shutting down after an error');
  else deps.logger.info({ signal }, 'worker shutting down');
  await app.close();
  await background.stop();
  services.close();
  await deps.close();
});

await background.start();
await app.listen({ port: config.webhooks.workerPort, host: config.server.host });
const { port } = app.server.address() as { port: number };
deps.logger.info({ port, loops: background.loops.map((l) => l.name), database: deps.database.kind }, 'worker running');
