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
const services = await createServices(deps);
const app = await buildApp({ deps, services });

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  services.close();
  await deps.close();
});

const firstRunPassword = config.auth.firstRunAdmin
  ? await services.admin.ensureFirstRunAdmin(config.auth.firstRunAdmin)
  : undefined;
await app.listen({ port: config.server.port, host: config.server.host });
const consoleUrl = `http://${config.server.host === '0.0.0.0' || config.server.host === '::' ? 'localhost' : config.server.host}:${config.server.port}/`;
if (firstRunPassword && config.auth.firstRunAdmin) {
  // The one secret ever written out (contract section 3): straight to stdout, never through the logger.
  process.stdout.write(
    firstRunBanner(consoleUrl, config.auth.firstRunAdmin.email, config.auth.firstRunAdmin.phone, firstRunPassword),
  );
}
app.log.info(
  { database: deps.database.kind, redis: Boolean(deps.redis), startupMs: Math.round(performance.now() - started) },
  'ready',
);
app.log.info({ url: consoleUrl }, 'web console');

function firstRunBanner(url: string, email: string, phone: string, password: string): string {
  const lines = [
    'First run: an admin account was created for this development database.',
    '',
    `  Console:  ${url}`,
    `  Sign in:  ${email}`,
    `  Password: ${password}`,
    `  Phone:    ${phone} (the SMS code appears in this log)`,
    '',
    'This password is printed only this once. Change it after signing in.',
  ];
  const width = Math.max(...lines.map((l) => l.length)) + 2;
  const bar = '*'.repeat(width + 2);
  return `\n${bar}\n${lines.map((l) => `* ${l.padEnd(width - 1)}*`).join('\n')}\n${bar}\n\n`;
}
