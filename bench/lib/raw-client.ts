// A lean HTTP/1.1 client for the open-loop generator: plain sockets, one request in flight per
// connection, requests written as one string and answers parsed only as far as the status line and
// the Content-Length. It exists because the generator shares the machine's two cores with the server
// and PostgreSQL: undici's Pool cost ~25 µs of CPU per request, at 20,000/s half a core taken from
// what is measured. Enough for our own server's answers (Content-Length or no body), and it says so
// when it meets anything else rather than miscount.
import net from 'node:net';

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Pending {
  text: string;
  done: (err: Error | undefined, status: number) => void;
}

class Connection {
  private readonly socket: net.Socket;
  private buffer: Buffer | undefined;
  /** Bytes of body still to skip after the current answer's header. */
  private bodyLeft = 0;
  private status = 0;
  current: Pending | undefined;

  constructor(port: number, host: string, private readonly onIdle: (c: Connection) => void, private readonly onFail: (c: Connection, err: Error) => void) {
    this.socket = net.connect({ port, host, noDelay: true });
    this.socket.on('data', (chunk) => this.read(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
  }

  send(p: Pending): void {
    this.current = p;
    this.socket.write(p.text);
  }

  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }

  private fail(err: Error): void {
    const p = this.current;
    this.current = undefined;
    if (p) p.done(err, 0);
    this.onFail(this, err);
  }

  private read(chunk: Buffer): void {
    let data = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.buffer = undefined;
    while (data.length > 0) {
      if (this.bodyLeft > 0) {
        const skip = Math.min(this.bodyLeft, data.length);
        this.bodyLeft -= skip;
        data = data.subarray(skip);
        if (this.bodyLeft === 0) this.done();
        continue;
      }
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) {
        this.buffer = data;
        return;
      }
      // The status digits and the Content-Length, read without turning the header into a string.
      this.status = (data[9] - 48) * 100 + (data[10] - 48) * 10 + (data[11] - 48);
      if (header(data, end, 'transfer-encoding:', 'Transfer-Encoding:') >= 0) {
        this.fail(new Error('chunked answer: the raw client only reads Content-Length bodies'));
        return;
      }
      let length = 0;
      const at = header(data, end, 'content-length:', 'Content-Length:');
      if (at >= 0) {
        for (let i = at + 15; i < end; i++) {
          const digit = data[i] - 48;
          if (digit >= 0 && digit <= 9) length = length * 10 + digit;
          else if (data[i] !== 32) break;
        }
      }
      data = data.subarray(end + 4);
      this.bodyLeft = length;
      if (this.bodyLeft === 0) this.done();
    }
  }

  private done(): void {
    const p = this.current;
    this.current = undefined;
    if (!p) {
      this.fail(new Error('an answer without a request'));
      return;
    }
    p.done(undefined, this.status);
    this.onIdle(this);
  }
}

/** Where a header starts in the head (before `end`), written in lower case (Fastify's) or as Node writes its own; -1 if absent. */
function header(data: Buffer, end: number, lower: string, canonical: string): number {
  for (const name of [lower, canonical]) {
    const at = data.indexOf(name, 0, 'latin1');
    if (at >= 0 && at < end) return at;
  }
  return -1;
}

/** A fixed set of keep-alive connections; requests wait in order for a free one, as undici's Pool does. */
export class RawPool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private readonly all: Connection[] = [];
  private readonly host: string;
  private readonly port: number;

  private constructor(url: string) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
  }

  static async open(url: string, connections: number): Promise<RawPool> {
    const pool = new RawPool(url);
    await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    return pool;
  }

  private async connect(): Promise<void> {
    const c = new Connection(
      this.port,
      this.host,
      (conn) => this.release(conn),
      (conn, err) => {
        // A broken connection is replaced; what waits is not lost.
        const i = this.all.indexOf(conn);
        if (i < 0) return;
        this.all.splice(i, 1);
        const j = this.idle.indexOf(conn);
        if (j >= 0) this.idle.splice(j, 1);
        conn.close();
        if (!this.closed) void this.connect().catch(() => this.failWaiting(err));
      },
    );
    this.all.push(c);
    await c.ready();
    this.release(c);
  }

  private closed = false;

  private failWaiting(err: Error): void {
    for (const p of this.waiting.splice(0)) p.done(err, 0);
  }

  private release(c: Connection): void {
    const next = this.waiting.shift();
    if (next) c.send(next);
    else this.idle.push(c);
  }

  /** Sends a request; `done` is called with the answer's status (a callback: a promise per request cost CPU). */
  request(r: RawRequest, done: (err: Error | undefined, status: number) => void): void {
    let text = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    for (const name in r.headers) {
      if (name.toLowerCase() !== 'content-length') text += `${name}: ${r.headers[name]}\r\n`;
    }
    text += r.body === undefined ? '\r\n' : `content-length: ${Buffer.byteLength(r.body)}\r\n\r\n${r.body}`;
    const p = { text, done };
    const c = this.idle.pop();
    if (c) c.send(p);
    else this.waiting.push(p);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.all.splice(0)) c.close();
  }
}
