// For fault tests and drills: real server processes, accounts written straight to their database,
// and a load loop of writes whose acknowledged results can be checked in the database afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/db/database.js';
import { TokenService } from '../../src/modules/auth/tokens.js';
import { systemClock } from '../../src/shared/clock.js';
import type { TestApp } from './app.js';
import { TEST_ENV, TEST_JWT_SECRET } from './app.js';
import { countryId, createUser, type TestUser } from './factories.js';
import { packageBody } from '../packages-helpers.js';

const root = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  base: string;
  output(): string;
  exited: Promise<number | null>;
  alive(): boolean;
}

/** `src/server.ts` as an operator runs it; resolves once it logged "ready" (rejects if it exits first). */
export async function startServer(env: Record<string, string>, port: number): Promise<ServerProcess> {
  let out = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes('"msg":"ready"')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited (${code}) before it was ready:\n${out.slice(-2000)}`)));
  });
  await ready;
  return {
    child,
    port,
    base: `http://127.0.0.1:${port}`,
    output: () => out,
    exited,
    alive: () => exitCode === undefined,
  };
}

export interface LoadAccounts {
  business: TestUser;
  drivers: TestUser[];
  countryId: string;
}

/** A business and ONLINE drivers with live sessions, signed with TEST_JWT_SECRET (give the servers that secret). */
export async function createLoadAccounts(db: DB, drivers: number): Promise<LoadAccounts> {
  const config = loadConfig(TEST_ENV);
  const tokens = new TokenService({
    secret: TEST_JWT_SECRET,
    issuer: config.auth.jwtIssuer,
    audience: config.auth.jwtAudience,
    // Long enough for any drill: tokens are not what these runs test.
    accessTtlMs: 3_600_000,
    clock: systemClock,
  });
  const t = { db, clock: systemClock, tokens } as unknown as TestApp;
  const business = await createUser(t, { role: 'BUSINESS' });
  const list: TestUser[] = [];
  for (let i = 0; i < drivers; i++)
    list.push(await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } }));
  return { business, drivers: list, countryId: await countryId(t) };
}

export interface Failure {
  status: number | string;
  body: string;
}

/**
 * Writes in a loop against the given servers (round robin): package creations and driver positions
 * (each driver's latitude only grows). Keeps what was acknowledged (2xx) and every failure.
 */
export class WriteLoad {
  readonly createdPackages: string[] = [];
  /** Per driver: the highest latitude acknowledged. */
  readonly lastLatitude = new Map<string, number>();
  readonly failures: (Failure & { at: number })[] = [];
  answered = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;

  constructor(
    private readonly bases: string[],
    private readonly accounts: LoadAccounts,
    private readonly concurrency = 4,
  ) {}

  start(): void {
    this.running = true;
    for (let i = 0; i < this.concurrency; i++) this.loops.push(this.loop(i));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Failures since `since` (Date.now()), counted by status. */
  failuresByStatus(since = 0): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const f of this.failures) if (f.at >= since) counts[f.status] = (counts[f.status] ?? 0) + 1;
    return counts;
  }

  private async loop(worker: number): Promise<void> {
    const drivers = this.accounts.drivers.filter((_, i) => i % this.concurrency === worker);
    let seq = 0;
    while (this.running) {
      const base = this.bases[this.next++ % this.bases.length];
      seq += 1;
      if (seq % 2 === 0 || drivers.length === 0) {
        const res = await this.send(
          base,
          '/api/packages',
          this.accounts.business,
          packageBody(this.accounts.countryId),
        );
        if (res && res.status === 201) this.createdPackages.push((JSON.parse(res.body) as { id: string }).id);
      } else {
        const driver = drivers[(seq >> 1) % drivers.length];
        const lat = -1.3 + seq * 1e-6;
        const res = await this.send(base, '/api/drivers/me/location', driver, {
          lat,
          lng: 36.8,
          recordedAt: new Date().toISOString(),
        });
        if (res && res.status === 204) this.lastLatitude.set(driver.id, lat);
      }
    }
  }

  private async send(
    base: string,
    url: string,
    user: TestUser,
    body: unknown,
  ): Promise<{ status: number; body: string } | undefined> {
    try {
      const res = await fetch(base + url, {
        method: 'POST',
        headers: { ...user.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      this.answered += 1;
      if (res.status >= 300) this.failures.push({ status: res.status, body: text, at: Date.now() });
      return { status: res.status, body: text };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      this.failures.push({ status: cause ?? (err as Error).name, body: String(err), at: Date.now() });
      // A refused connection (a process that is gone) must not spin.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return undefined;
    }
  }
}

/** GET /health/ready until it answers `status` (or the time runs out); ms taken. */
export async function waitForReady(base: string, status: number, timeoutMs = 30_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    if (res) await res.arrayBuffer();
    if (res?.status === status) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(`${base}/health/ready did not answer ${status} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
