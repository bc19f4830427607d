// One HTTP attempt: no redirects, a hard timeout, and (unless allowed) no private targets at connect time.
import { lookup as dnsLookup, promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { isPublicAddress } from './url-safety.js';

export const EXCERPT_CHARS = 256;

export interface AttemptResult {
  ok: boolean;
  status: number | null;
  /**
   * A short description of the failure: the status and, from a public target only, a body excerpt
   * (a private target's body could be an internal service's answer); or the network error. Null on success.
   */
  error: string | null;
  retryAfter: string | null;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  connectionsPerOrigin: number;
  /** Which addresses count as public (tests stand a loopback receiver in for a public one). */
  isPublicAddress?: (address: string) => boolean;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

class PrivateTargetError extends Error {
  readonly code = 'EPRIVATETARGET';
  constructor(address: string) {
    super(`refused to connect to the non-public address ${address}`);
  }
}

/** A DNS lookup for sockets that fails when a name resolves to any non-public address (checked per connection). */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) return callback(new PrivateTargetError(bad.address), []);
    if (addresses.length === 0)
      return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        ...(options.allowPrivateTargets ? {} : { lookup: guardedLookup as never }),
      },
    });
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    if (!this.options.allowPrivateTargets) {
      const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
      // Sockets skip the lookup for address literals, so those are checked here.
      if (isIP(host) && !isPublicAddress(host)) return failure(null, new PrivateTargetError(host).message);
    }
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        maxRedirections: 0,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const status = response.statusCode;
      const retryAfter = headerValue(response.headers['retry-after']);
      if (status >= 200 && status < 300) {
        await response.body.dump().catch(() => undefined);
        return { ok: true, status, error: null, retryAfter: null };
      }
      const excerpt = (await this.isPublicTarget(url))
        ? await readExcerpt(response.body)
        : await discard(response.body);
      return { ok: false, status, error: `HTTP ${status}${excerpt ? `: ${excerpt}` : ''}`, retryAfter };
    } catch (err) {
      return failure(null, describeError(err, this.options.timeoutMs));
    }
  }

  /**
   * Whether every address of the URL's host is public. Without private targets allowed, only public
   * ones were reachable; otherwise the name is resolved again (an unresolvable one counts as private).
   */
  private async isPublicTarget(url: string): Promise<boolean> {
    const isPublic = this.options.isPublicAddress ?? isPublicAddress;
    if (!this.options.allowPrivateTargets) return true;
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) return isPublic(host);
    try {
      const addresses = await dns.lookup(host, { all: true });
      return addresses.length > 0 && addresses.every((a) => isPublic(a.address));
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

function failure(status: number | null, error: string): AttemptResult {
  return { ok: false, status, error, retryAfter: null };
}

function headerValue(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

async function discard(body: { dump(): Promise<unknown> }): Promise<string> {
  await body.dump().catch(() => undefined);
  return '';
}

/** At most EXCERPT_CHARS characters of the response body; the rest is discarded unread. */
async function readExcerpt(body: AsyncIterable<Buffer> & { destroy?: () => void }): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += chunk.toString('utf8');
      if (text.length >= EXCERPT_CHARS) break;
    }
  } catch {
    // a body that fails half-way still leaves its excerpt
  }
  return text.slice(0, EXCERPT_CHARS);
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  const code = e.code ?? e.cause?.code;
  const message = (e.message ?? String(err)).slice(0, EXCERPT_CHARS);
  return code ? `${code}: ${message}` : message;
}
