// A redis-server of a test's own, on a free port, that the test may freeze (SIGSTOP), thaw, kill and
// start again: never the shared server of TEST_REDIS_URL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './processes.js';

export { freePort };

export const redisServerSkipReason = spawnSync('redis-server', ['--version']).error
  ? 'needs the redis-server binary on PATH (not found): Redis fault tests skipped'
  : false;

export class RedisServer {
  private child: ChildProcess | undefined;
  private frozen = false;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  /** Starts the process (again, on the same port, empty: nothing is saved). */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
      child.stdout!.on('data', (chunk) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}): ${output}`));
      });
    });
    child.stdout!.resume();
    child.stderr!.resume();
  }

  /** SIGSTOP: the sockets stay open, nothing answers. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
    this.frozen = true;
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
    this.frozen = false;
  }

  /** Kills the process (SIGKILL, as a crash): connections are refused until start(). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (this.frozen) this.thaw();
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  async close(): Promise<void> {
    await this.kill();
  }
}
