// loadConfig(env) → createDeps(config) → createServices(deps) → buildApp (routes and background work) → listen.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { loadConfigOrExit } from './config.js';
import { createDeps } from './deps.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { createServices } from './services.js';

const started = performance.now();
const config = loadConfigOrExit();

const deps = await createDeps(config).catch((err: unknown) => {
  if (!(err instanceof DataDirInUseError)) throw err;
  console.error(err.message);
  process.exit(1);
});
const services = createServices(deps);
const app = await buildApp({ deps, services });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  services.close();
  await deps.close();
});

await app.listen({ port: config.port, host: config.host });
app.log.info(
  { database: deps.database.kind, redis: Boolean(deps.redis), startupMs: Math.round(performance.now() - started) },
  'ready',
);
