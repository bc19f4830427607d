// The embedded database: created on first open (initdb in a child process), small shared buffers, kept.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';

test('a new DATA_DIR is created by initdb, opened with 16 MB of shared buffers, and keeps its rows', async () => {
  const dir = path.join(await mkdtemp(path.join(tmpdir(), 'rd-embedded-')), 'pgdata');
  try {
    const first = await openDatabase({ dataDir: dir });
    assert.ok(existsSync(path.join(dir, 'PG_VERSION')));
    const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(first.db);
    assert.equal(rows[0].shared_buffers, '16MB');
    await sql`create table kept (n int)`.execute(first.db);
    await sql`insert into kept values (42)`.execute(first.db);
    await first.close();

    const second = await openDatabase({ dataDir: dir });
    const kept = await sql<{ n: number }>`select n from kept`.execute(second.db);
    assert.deepEqual(kept.rows, [{ n: 42 }]);
    await second.close();
  } finally {
    await rm(path.dirname(dir), { recursive: true, force: true });
  }
});
