// `npm run openapi`: prints the OpenAPI 3.1 document generated from the route schemas (the one the
// service serves at GET /api/openapi.json), without starting a server: an in-memory database, no Redis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { createDeps } from '../src/deps.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'rd-openapi-'));
try {
  const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir, WEBHOOK_WORKER_IN_PROCESS: 'false', LOG_LEVEL: 'silent' });
  const deps = await createDeps(config, { database: await openDatabase({}), logger: pino({ level: 'silent' }) });
  const app = await buildApp({ deps });
  await app.ready();
  process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
  await app.close();
  await deps.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
