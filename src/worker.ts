// The webhook worker alone (`npm run worker`): loadConfig → createDeps (opens and migrates the database) → run → SIGTERM.
import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from './config.js';
import { createDeps } from './deps.js';
import { WebhookWorker } from './modules/webhooks/webhook-worker.js';

const config = loadConfigOrExit();

if (!config.databaseUrl) {
  // The embedded database lives inside one process; a separate worker needs the shared server.
  console.error('npm run worker needs DATABASE_URL (a PostgreSQL server shared with the API processes)');
  process.exit(1);
}

const deps = await createDeps(config);
const worker = new WebhookWorker({
  db: deps.database.db,
  clock: deps.clock,
  logger: deps.logger,
  config: deps.config,
  bus: deps.bus,
  registry: deps.metrics.registry,
});

// The worker's own timers do not hold the process open; this does, until shutdown.
const keepAlive = setInterval(() => undefined, 60_000);

closeWithGrace({ delay: config.webhookTimeoutMs + 5_000 }, async ({ signal, err }) => {
  if (err) deps.logger.error({ err }, 'worker shutting down after an error');
  else deps.logger.info({ signal }, 'worker shutting down');
  await worker.stop();
  await deps.close();
  clearInterval(keepAlive);
});

worker.start();
deps.logger.info({ workerId: worker.id, database: deps.database.kind }, 'webhook worker running');
