// A webhook receiver written from docs/webhooks.md: it verifies X-Service-Signature (hex HMAC-SHA256
// of the raw body, keyed with the secret string) in constant time and answers 401 when it is missing
// or different. Run: WEBHOOK_SECRET=whsec_... PORT=4000 npx tsx examples/webhook-receiver.ts
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';

export interface WebhookEvent {
  event: string;
  delivery_id: string;
  status: string;
  timestamp: string;
}

export interface ReceiverOptions {
  secret: string;
  /** Header name of the hex signature (the service's WEBHOOK_SIGNATURE_HEADER). */
  signatureHeader?: string;
  /** Called once per verified request; dedupe on webhookId, since delivery is at least once. */
  onEvent: (event: WebhookEvent, webhookId: string | undefined) => void | Promise<void>;
}

export function isValidSignature(secret: string, rawBody: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'), 'utf8');
  const received = Buffer.from(header.trim().toLowerCase(), 'utf8');
  // timingSafeEqual needs equal lengths; the length of a hex SHA-256 digest is public anyway.
  return received.length === expected.length && timingSafeEqual(received, expected);
}

export function createReceiver(options: ReceiverOptions): Server {
  const header = (options.signatureHeader ?? 'X-Service-Signature').toLowerCase();
  const seen = new Set<string>();
  return createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 64 * 1024) req.destroy();
      else chunks.push(chunk);
    });
    req.on('end', async () => {
      // Verify the raw bytes as received: re-serializing parsed JSON would change them.
      const raw = Buffer.concat(chunks);
      if (!isValidSignature(options.secret, raw, req.headers[header])) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid signature"}');
        return;
      }
      const webhookId = req.headers['webhook-id'] as string | undefined;
      try {
        if (!webhookId || !seen.has(webhookId)) {
          await options.onEvent(JSON.parse(raw.toString('utf8')) as WebhookEvent, webhookId);
          if (webhookId) seen.add(webhookId);
        }
        res.writeHead(204).end();
      } catch {
        // Anything but 2xx makes the service retry later.
        res.writeHead(500).end();
      }
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) {
    console.error('Set WEBHOOK_SECRET to the secret shown when the endpoint was created');
    process.exit(1);
  }
  const port = Number(process.env.PORT ?? 4000);
  createReceiver({ secret, onEvent: (event, id) => console.log(id, JSON.stringify(event)) }).listen(port, () =>
    console.log(`listening on http://localhost:${port}`),
  );
}
