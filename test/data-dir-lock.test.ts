// The embedded database serves one process: a second one on the same DATA_DIR refuses to start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { startServer } from './helpers/fault-load.js';
import { freePort } from './helpers/pg-cluster.js';

const root = path.resolve(import.meta.dirname, '..');

/** A process that must not get as far as listening: its exit code and output. */
function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A pid that no process has: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('DATA_DIR lock (embedded database)', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('a second process on the same DATA_DIR refuses to start; the lock goes with the first one', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, RATE_LIMIT_GLOBAL: 'off' };
    const first = await startServer(env, await freePort());
    const lockFile = path.join(dataDir, 'pgdata.lock');
    try {
      const second = await run({ ...env, PORT: String(await freePort()) });
      assert.doesNotMatch(second.output, /"msg":"ready"/);
      assert.notEqual(second.code, 0);
      assert.match(second.output, new RegExp(`DATA_DIR ${dataDir} is in use by another process \\(pid ${first.child.pid}\\)`));
      assert.equal((await readFile(lockFile, 'utf8')).trim(), String(first.child.pid));

      // The first one was not disturbed.
      const res = await fetch(`${first.base}/health/ready`);
      assert.equal(res.status, 200);
    } finally {
      first.child.kill('SIGTERM');
    }
    assert.equal(await first.exited, 0);
    assert.equal(existsSync(lockFile), false, 'the lock is released on close');
  });

  test('a lock left by a process that is gone is taken over', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
    dirs.push(dataDir);
    await mkdir(path.join(dataDir, 'pgdata'), { recursive: true });
    await writeFile(path.join(dataDir, 'pgdata.lock'), `${await deadPid()}\n`);
    const server = await startServer({ DATA_DIR: dataDir, RATE_LIMIT_GLOBAL: 'off' }, await freePort());
    assert.equal((await readFile(path.join(dataDir, 'pgdata.lock'), 'utf8')).trim(), String(server.child.pid));
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });
});
