// A Server-Sent Events client over fetch (undici), reading the body as it arrives, for tests and benches.
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
  /** When it was parsed (performance.now()). */
  receivedAt: number;
}

export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  ended = false;
  readonly done: Promise<void>;
  private waiters: (() => void)[] = [];
  private readonly abort = new AbortController();

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    body: ReadableStream<Uint8Array> | null,
  ) {
    this.done = body ? this.read(body) : Promise.resolve();
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const abort = new AbortController();
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
    const client = new SseClient(response.status, response.headers, response.status === 200 ? response.body : null);
    if (response.status !== 200) client.body = await response.text();
    client.abort.signal.addEventListener('abort', () => abort.abort());
    return client;
  }

  body = '';

  of(event: string): SseEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  json<T = Record<string, unknown>>(event: string): T[] {
    return this.of(event).map((e) => JSON.parse(e.data) as T);
  }

  /** Resolves when `check` holds (checked after every event), rejects after `ms`. */
  async until(check: (client: SseClient) => boolean, ms = 3000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check(this)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `SSE wait timed out; events so far: ${JSON.stringify(this.events.map((e) => [e.event, e.data]))}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.parse(block);
        }
        this.wake();
      }
    } catch {
      // aborted by close()
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private parse(block: string): void {
    let event = 'message';
    let data = '';
    let id: string | undefined;
    let fields = 0;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments += 1;
        continue;
      }
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'event') event = value;
      else if (name === 'data') data = data ? `${data}\n${value}` : value;
      else if (name === 'id') id = value;
      else continue;
      fields += 1;
    }
    if (fields && (data || event !== 'message')) this.events.push({ event, data, id, receivedAt: performance.now() });
  }
}
