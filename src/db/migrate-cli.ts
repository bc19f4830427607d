// `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database).
import path from 'node:path';
import { loadConfig } from '../config.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';

const config = loadConfig();
const handle = await openDatabase({ url: config.database.url, dataDir: path.join(config.server.dataDir, 'pgdata') });
try {
  const applied = await migrateToLatest(handle.db);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date.');
} finally {
  await handle.close();
}
