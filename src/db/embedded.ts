// The embedded PostgreSQL (PGlite): small buffers, and its data directory created in a child process.
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';

// PostgreSQL's 128 MB of shared buffers is WebAssembly memory here, touched at start and never
// given back; an embedded single instance reads through the OS page cache anyway.
export const EMBEDDED_POSTGRESQL_CONF = ['shared_buffers=16MB', 'maintenance_work_mem=32MB'];

export async function openEmbedded(dataDir: string | undefined, parseInt8: (value: string) => number): Promise<PGlite> {
  if (dataDir) {
    await mkdir(dataDir, { recursive: true });
    // initdb runs in WebAssembly memory that stays with the process for good (~500 MB measured):
    // a first start has it done by a short-lived child process instead.
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initInChild(dataDir);
  }
  return PGlite.create(dataDir ?? 'memory://', {
    parsers: { [pgliteTypes.INT8]: parseInt8 },
    postgresqlconf: EMBEDDED_POSTGRESQL_CONF,
  });
}

async function initInChild(dataDir: string): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const script = path.join(path.dirname(self), `embedded-init${path.extname(self)}`);
  await new Promise<void>((resolve, reject) => {
    const child = fork(script, [dataDir], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`creating the embedded database in ${dataDir} failed (exit ${code})`)),
    );
  });
}
