// The OpenAPI 3.1 document generated from the route schemas (the one GET /api/openapi.json serves),
// built without a server: an in-memory database, no Redis.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { createDeps } from '../src/deps.js';
import { createServices } from '../src/services.js';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'rd-openapi-'));
  try {
    const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: dataDir, WEBHOOK_WORKER_IN_PROCESS: 'false', LOG_LEVEL: 'silent' });
    const deps = await createDeps(config, { database: await openDatabase({}), logger: pino({ level: 'silent' }) });
    const services = await createServices(deps);
  const app = await buildApp({ deps, services });
    await app.ready();
    const doc = app.swagger() as unknown as Record<string, unknown>;
    await app.close();
    services.close();
    await deps.close();
    return doc;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
