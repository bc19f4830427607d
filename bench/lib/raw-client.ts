// A lean HTTP/1.1 client for the open-loop generator: plain sockets, one request in flight per
// connection, requests written as one string and answers parsed only as far as the status line and
// the Content-Length. It exists because the generator shares the machine's two cores with the server
// and PostgreSQL: undici's Pool cost ~27 µs of CPU per request, at 20,000/s half a core taken from
// what is measured (~14 µs with this one). Enough for our own server's answers (a Content-Length, or
// a status that has no body); anything else (chunked or close-delimited bodies, 1xx) fails the
// request with an error rather than being miscounted.
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
  /** The current answer said `connection: close`: no request goes on this socket after it. */
  private closing = false;
  connected = false;
  current: Pending | undefined;

  constructor(
    port: number,
    host: string,
    private readonly onIdle: (c: Connection) => void,
    private readonly onFail: (c: Connection, err: Error) => void,
  ) {
    this.socket = net.connect({ port, host, noDelay: true });
    this.socket.once('connect', () => (this.connected = true));
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
    const p = this.current;
    this.current = undefined;
    if (p) p.done(new Error('the pool was closed'), 0);
    this.socket.removeAllListeners('close');
    this.socket.removeAllListeners('error');
    this.socket.on('error', () => {});
    this.socket.destroy();
  }

  private failed = false;

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = true;
    const p = this.current;
    this.current = undefined;
    if (p) p.done(err, 0);
    this.onFail(this, err);
  }

  private read(chunk: Buffer): void {
    let data = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.buffer = undefined;
    while (data.length > 0 && !this.failed) {
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
      const head = data.subarray(0, end);
      this.status = (data[9] - 48) * 100 + (data[10] - 48) * 10 + (data[11] - 48);
      const length = header(head, CONTENT_LENGTH);
      const noBody = this.status === 204 || this.status === 304;
      if (
        this.status < 200 ||
        header(head, TRANSFER_ENCODING) >= 0 ||
        (length < 0 && !noBody) ||
        (length > 0 && noBody)
      ) {
        this.fail(
          new Error(`an answer the raw client does not read (status ${this.status}, chunked, close-delimited or 1xx)`),
        );
        return;
      }
      this.closing = header(head, CONNECTION_CLOSE) >= 0;
      data = data.subarray(end + 4);
      this.bodyLeft = Math.max(0, length);
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
    // After `connection: close` the socket is done: it is replaced rather than reused.
    if (this.closing) this.fail(new Error('the server closed the connection after its answer'));
    else this.onIdle(this);
  }
}

/** Header names as they start a line: in lower case (Fastify's) or as Node writes its own. */
const names = (lower: string, canonical: string) => [
  Buffer.from(`\r\n${lower}`, 'latin1'),
  Buffer.from(`\r\n${canonical}`, 'latin1'),
];
const CONTENT_LENGTH = names('content-length:', 'Content-Length:');
const TRANSFER_ENCODING = names('transfer-encoding:', 'Transfer-Encoding:');
const CONNECTION_CLOSE = names('connection: close', 'Connection: close');

/**
 * A header's value in the head (the bytes before the blank line): a number for Content-Length, 0 for
 * a header only tested for presence; -1 when absent.
 */
function header(head: Buffer, needles: Buffer[]): number {
  for (const needle of needles) {
    const at = head.indexOf(needle);
    if (at < 0) continue;
    let value = 0;
    for (let i = at + needle.length; i < head.length; i++) {
      const digit = head[i] - 48;
      if (digit >= 0 && digit <= 9) value = value * 10 + digit;
      else if (head[i] !== 32) break;
    }
    return value;
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
  private closed = false;

  private constructor(url: string) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port || 80);
  }

  /** Opens every connection first; if one cannot be opened, closes the others and rejects. */
  static async open(url: string, connections: number): Promise<RawPool> {
    const pool = new RawPool(url);
    try {
      await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    } catch (err) {
      await pool.close();
      throw err;
    }
    return pool;
  }

  private async connect(): Promise<void> {
    const c = new Connection(
      this.port,
      this.host,
      (conn) => this.release(conn),
      (conn, err) => {
        const i = this.all.indexOf(conn);
        if (i < 0) return;
        this.all.splice(i, 1);
        const j = this.idle.indexOf(conn);
        if (j >= 0) this.idle.splice(j, 1);
        conn.close();
        // A connection that had worked is replaced once; one that never connected is not retried
        // (a server that is gone would otherwise be dialled in a loop). With none left, what waits fails.
        if (!this.closed && conn.connected)
          void this.connect().catch(() => this.all.length === 0 && this.failWaiting(err));
        else if (this.all.length === 0) this.failWaiting(err);
      },
    );
    this.all.push(c);
    await c.ready();
    this.release(c);
  }

  private failWaiting(err: Error): void {
    for (const p of this.waiting.splice(0)) p.done(err, 0);
  }

  private release(c: Connection): void {
    const next = this.waiting.shift();
    if (next) c.send(next);
    else this.idle.push(c);
  }

  /** Sends a request; `done` is called once, with the answer's status or an error (a callback: a promise per request cost CPU). */
  request(r: RawRequest, done: (err: Error | undefined, status: number) => void): void {
    if (this.closed || this.all.length === 0) {
      done(new Error('no connection to send on'), 0);
      return;
    }
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
    this.idle.length = 0;
    this.failWaiting(new Error('the pool was closed'));
  }
}
