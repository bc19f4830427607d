// The embedded database serves one process: a second one on the same DATA_DIR refuses to start,
// while a lock whose process is gone (exited, a zombie, a pid reused) is taken over at once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { DataDirInUseError, lockDataDir } from '../src/db/data-dir-lock.js';
import { startServer } from './helpers/fault-load.js';
import { freePort } from './helpers/pg-cluster.js';
import { waitFor } from './helpers/processes.js';

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

const hasProc = existsSync('/proc/self/stat');

/** /proc/<pid>/stat: the state letter and the start time (field 22), read apart from the lock's own reader. */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

/** The owner's pid: the first line of the lock file. */
async function lockPid(lockFile: string): Promise<string> {
  return (await readFile(lockFile, 'utf8')).split('\n')[0]!;
}

/** A live process that is not this one, and a way to end it. */
function sleeper(seconds: number) {
  const child = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { pid: child.pid!, exited, stop: () => child.kill('SIGKILL') };
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
      assert.match(
        second.output,
        new RegExp(`DATA_DIR ${dataDir} is in use by another process \\(pid ${first.child.pid}\\)`),
      );
      assert.equal(await lockPid(lockFile), String(first.child.pid));

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
    assert.equal(await lockPid(path.join(dataDir, 'pgdata.lock')), String(server.child.pid));
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
  });

  test(
    'a server killed with SIGKILL and not yet reaped (a zombie) does not hold DATA_DIR: a restart right away starts',
    { skip: !hasProc && 'needs /proc' },
    async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
      dirs.push(dataDir);
      const env = {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        RATE_LIMIT_GLOBAL: 'off',
        PORT: String(await freePort()),
      };
      // The server's parent execs `sleep`, which never reaps it: the state an immediate restart meets
      // after `kill -9` of `npm start`'s process group, until init collects the orphan.
      const parent = spawn(
        'sh',
        ['-c', `"${process.execPath}" --import tsx src/server.ts & echo "server pid $!"; exec sleep 600`],
        {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      parent.stdout.on('data', (d) => (output += d));
      parent.stderr.on('data', (d) => (output += d));
      try {
        await waitFor(
          () => output.includes('"msg":"ready"'),
          60_000,
          'the first server',
          () => output,
        );
        const pid = Number(/server pid (\d+)/.exec(output)![1]);
        process.kill(pid, 'SIGKILL');
        await waitFor(() => procStat(pid)?.state === 'Z', 10_000, 'the killed server to be a zombie');

        const second = await startServer({ DATA_DIR: dataDir, RATE_LIMIT_GLOBAL: 'off' }, await freePort());
        assert.equal(await lockPid(path.join(dataDir, 'pgdata.lock')), String(second.child.pid));
        assert.equal((await fetch(`${second.base}/health/ready`)).status, 200);
        second.child.kill('SIGTERM');
        assert.equal(await second.exited, 0);
      } finally {
        parent.kill('SIGKILL');
      }
    },
  );

  test(
    'a lock whose pid now belongs to another program (another start time) is taken over',
    { skip: !hasProc && 'needs /proc' },
    async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
      dirs.push(dataDir);
      const lockFile = path.join(dataDir, 'pgdata.lock');
      const other = sleeper(600);
      try {
        const startTime = procStat(other.pid)!.startTime;
        await writeFile(lockFile, `${other.pid}\n${Number(startTime) - 1}\n`);
        const release = await lockDataDir(dataDir, lockFile, { waitMs: 0 });
        assert.equal(await lockPid(lockFile), String(process.pid));
        await release();
        assert.equal(existsSync(lockFile), false);
      } finally {
        other.stop();
      }
    },
  );

  test(
    'a live owner with its own start time keeps the lock: refused, naming DATA_DIR and the pid',
    { skip: !hasProc && 'needs /proc' },
    async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
      dirs.push(dataDir);
      const lockFile = path.join(dataDir, 'pgdata.lock');
      const owner = sleeper(600);
      try {
        await writeFile(lockFile, `${owner.pid}\n${procStat(owner.pid)!.startTime}\n`);
        await assert.rejects(lockDataDir(dataDir, lockFile, { waitMs: 300 }), (err: unknown) => {
          assert.ok(err instanceof DataDirInUseError);
          assert.match(
            err.message,
            new RegExp(`^DATA_DIR ${dataDir} is in use by another process \\(pid ${owner.pid}\\)`),
          );
          return true;
        });
        assert.equal(await lockPid(lockFile), String(owner.pid));
      } finally {
        owner.stop();
      }
    },
  );

  test('an owner that goes within the wait (a process still shutting down) leaves the lock to the new one', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rd-lock-'));
    dirs.push(dataDir);
    const lockFile = path.join(dataDir, 'pgdata.lock');
    // Alive when the lock is first looked at, gone two seconds later: well within the default wait.
    const owner = sleeper(2);
    await writeFile(lockFile, `${owner.pid}\n`);
    const release = await lockDataDir(dataDir, lockFile);
    await owner.exited;
    assert.equal(await lockPid(lockFile), String(process.pid));
    await release();
  });
});
