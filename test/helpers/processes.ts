// Real processes for tests: a free port, a Node child with its output kept, waiting for a condition.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';

export const projectRoot = path.resolve(import.meta.dirname, '../..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface NodeProcess {
  child: ChildProcess;
  /** stdout and stderr together, in arrival order. */
  output(): string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `node ARGS` in the project folder with only PATH and `env` in its environment. */
export function spawnNode(args: string[], env: Record<string, string>): NodeProcess {
  let all = '';
  let out = '';
  let err = '';
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => ((out += d), (all += d)));
  child.stderr!.on('data', (d) => ((err += d), (all += d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => all, stdout: () => out, stderr: () => err, exited };
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
  output?: () => string,
): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${output ? `:\n${output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Waits for a server child to log that it is ready. Fails at once, with its output, if it exits
 * first (a port taken, a bad setting), and with its output on a timeout.
 */
export async function waitForReady(proc: NodeProcess, ms: number, what: string): Promise<void> {
  await waitFor(
    () => {
      if (proc.output().includes('"msg":"ready"')) return true;
      if (proc.child.exitCode !== null || proc.child.signalCode !== null)
        throw new Error(
          `${what}: the process exited (${proc.child.exitCode ?? proc.child.signalCode}) before it was ready:\n${proc.output()}`,
        );
      return false;
    },
    ms,
    what,
    proc.output,
  );
}
