// The simulator's HTTP client of the public API (retries, counts) and its reader of the SMS file.
import { open, stat } from 'node:fs/promises';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message?: string; code?: string } | undefined,
    what: string,
  ) {
    super(`${what}: ${status} ${body?.code ?? ''} ${body?.message ?? ''}`.trim());
  }
}

export interface Stats {
  requests: number;
  byStatus: Map<number, number>;
  rateLimited: number;
  serverErrors: number;
  networkErrors: number;
}

export class Api {
  readonly stats: Stats = { requests: 0, byStatus: new Map(), rateLimited: 0, serverErrors: 0, networkErrors: 0 };
  constructor(
    readonly base: string,
    private readonly speed: number,
  ) {}

  /** One call; a 429 waits for its Retry-After and tries again (up to 5 times), so does a 503. */
  async call<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.base}/api${path}`, {
          method,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        this.stats.networkErrors++;
        if (attempt >= 3) throw err;
        await sleep(500 * attempt);
        continue;
      }
      this.stats.requests++;
      this.stats.byStatus.set(res.status, (this.stats.byStatus.get(res.status) ?? 0) + 1);
      const text = await res.text();
      const parsed = text ? (JSON.parse(text) as unknown) : undefined;
      if (res.status >= 500) this.stats.serverErrors++;
      if ((res.status === 429 || res.status === 503) && attempt < 5) {
        if (res.status === 429) this.stats.rateLimited++;
        const retryAfter = Number(res.headers.get('retry-after') ?? '1');
        await sleep(Math.min(60_000, Math.max(250, (Number.isFinite(retryAfter) ? retryAfter : 1) * 1000)));
        continue;
      }
      if (res.status >= 400) throw new ApiError(res.status, parsed as ApiError['body'], `${method} ${path}`);
      return parsed as T;
    }
  }

  wsUrl(token: string): string {
    return `${this.base.replace(/^http/, 'ws')}/api/drivers/me/stream?access_token=${encodeURIComponent(token)}`;
  }

  /** Simulated pauses are `speed` times shorter. */
  pause(simMs: number): Promise<void> {
    return sleep(simMs / this.speed);
  }
}

/** Reads codes that the instance's `file` SMS transport appends, from where the file ended before. */
export class SmsInbox {
  constructor(private readonly file: string) {}
  async mark(): Promise<number> {
    try {
      return (await stat(this.file)).size;
    } catch {
      return 0;
    }
  }
  async code(phone: string, from: number, timeoutMs = 10_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const handle = await open(this.file, 'r').catch(() => undefined);
      if (handle) {
        try {
          const { size } = await handle.stat();
          const buffer = Buffer.alloc(Math.max(0, size - from));
          await handle.read(buffer, 0, buffer.length, from);
          const lines = buffer.toString('utf8').split('\n').reverse();
          for (const line of lines) {
            if (!line.includes(phone)) continue;
            const message = JSON.parse(line) as { to: string; text: string };
            const code = /\b(\d{6})\b/.exec(message.text)?.[1];
            if (message.to === phone && code) return code;
          }
        } finally {
          await handle.close();
        }
      }
      await sleep(50);
    }
    throw new Error(
      `no SMS code for ${phone} in ${this.file}: is the instance running with SMS_TRANSPORT=file and SMS_FILE=${this.file}?`,
    );
  }
}
