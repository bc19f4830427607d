// B6 (../shared/guides/performance.md): webhook delivery to a local receiver. Prints one JSON object.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/b6-webhooks.ts
//
// A throwaway database is created on the server (and dropped at the end); without a URL the embedded
// PGlite is used. The receiver runs in a child process (its own event loop) and verifies every
// X-Service-Signature. The worker runs in this process, as it does inside the API by default.
//  1. baseline: the same signed POSTs sent straight to the receiver (no database): the ceiling.
//  2. throughput: BENCH_BACKLOG deliveries already in the outbox, drained by one worker.
//  3. latency: open loop, BENCH_RATE status changes/s for BENCH_DURATION s, each committed in its own
//     transaction (then a wake-up, as the package service does), fanned out to two endpoints, while a
//     third endpoint of another business answers only after 3 s: from commit to first attempt.
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';

/** Drops the throwaway database of a run that fails midway (set once it exists). */
let dropDatabase: (() => Promise<void>) | undefined;
const SELF = fileURLToPath(import.meta.url);
const now = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const round = (n: number) => Math.round(n * 10) / 10;

if (process.argv[2] === '--receiver') {
  // Secrets arrive on argv: endpoint path -> secret.
  const secrets = JSON.parse(process.argv[3]) as Record<string, string>;
  const out: string[] = [];
  const flush = () => {
    if (out.length) process.stdout.write(out.splice(0).join(''));
  };
  setInterval(flush, 20).unref();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const secret = secrets[path];
      const ok =
        secret !== undefined &&
        createHmac('sha256', secret).update(body).digest('hex') === req.headers['x-service-signature'];
      out.push(`R ${req.headers['webhook-id'] ?? '-'} ${at.toFixed(2)} ${ok ? 1 : 0}\n`);
      const reply = () => res.writeHead(ok ? 200 : 401).end();
      if (path.startsWith('/slow')) setTimeout(reply, 3000);
      else reply();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as { port: number }).port}\n`));
} else {
  // A failed run still drops its throwaway database.
  await main().catch(async (err) => {
    console.error(err);
    await dropDatabase?.();
    process.exit(1);
  });
}

async function main() {
  const { openDatabase } = await import('../src/db/database.js');
  const { migrateToLatest } = await import('../src/db/migrate.js');
  const { recordDeliveryEvent } = await import('../src/modules/webhooks/outbox.js');
  const { OutboxRepository } = await import('../src/modules/webhooks/outbox.repository.js');
  const { WebhookWorker } = await import('../src/modules/webhooks/webhook-worker.js');
  const { WebhookSender } = await import('../src/modules/webhooks/webhook-sender.js');
  const { buildHeaders, generateSecret } = await import('../src/modules/webhooks/webhook-signature.js');
  const { LocalBus } = await import('../src/shared/bus.js');
  const { systemClock } = await import('../src/shared/clock.js');
  const { loadConfig } = await import('../src/config.js');
  const { createServerDatabase } = await import('../test/helpers/database.js');
  const { durationArg } = await import('./lib/harness.js');

  const baseUrl = process.env.BENCH_DATABASE_URL;
  const backlog = Number(process.env.BENCH_BACKLOG ?? 20_000);
  const rate = Number(process.env.BENCH_RATE ?? 250);
  const duration = durationArg();

  const server = baseUrl ? await createServerDatabase(baseUrl, 'bench_b6') : undefined;
  dropDatabase = server?.drop;
  const url = server?.url;
  const database = await openDatabase(url ? { url, poolSize: 10 } : {});
  const db = database.db;
  await migrateToLatest(db);

  // Accounts and endpoints straight in the database: two businesses, two fast endpoints and a slow one.
  const fastBusiness = randomUUID();
  const slowBusiness = randomUUID();
  for (const id of [fastBusiness, slowBusiness]) {
    await db
      .insertInto('users')
      .values({
        id,
        email: `${id}@bench.test`,
        phone: `+2547${id.replace(/\D/g, '').slice(0, 8).padEnd(8, '0')}`,
        password_hash: 'x',
        first_name: 'B',
        last_name: 'B',
        role: 'BUSINESS',
        status: 'ACTIVE',
        status_reason: null,
        country_id: null,
      })
      .execute();
  }
  const secrets: Record<string, string> = {};
  const endpoints: { id: string; business: string; path: string }[] = [];
  for (const [business, path] of [
    [fastBusiness, '/fast-1'],
    [fastBusiness, '/fast-2'],
    [slowBusiness, '/slow'],
  ] as const) {
    secrets[path] = generateSecret();
    endpoints.push({ id: randomUUID(), business, path });
  }

  const receiver = spawn(process.execPath, ['--import', 'tsx', SELF, '--receiver', JSON.stringify(secrets)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => receiver.kill());
  process.on('unhandledRejection', (err) => {
    console.error(err);
    void (dropDatabase?.() ?? Promise.resolve()).finally(() => process.exit(1));
  });
  const arrivals = new Map<string, number[]>();
  let badSignatures = 0;
  let received = 0;
  const port = await new Promise<number>((resolve) => {
    createInterface({ input: receiver.stdout! }).on('line', (line) => {
      if (line.startsWith('READY ')) return resolve(Number(line.slice(6)));
      const [, id, at, ok] = line.split(' ');
      received += 1;
      if (ok !== '1') badSignatures += 1;
      arrivals.set(id, [...(arrivals.get(id) ?? []), Number(at)]);
    });
  });
  const target = (path: string) => `http://127.0.0.1:${port}${path}`;
  const at = new Date();
  for (const e of endpoints) {
    await db
      .insertInto('webhook_endpoints')
      .values({
        id: e.id,
        business_id: e.business,
        url: target(e.path),
        events: [
          'delivery.assigned',
          'delivery.picked_up',
          'delivery.in_transit',
          'delivery.delivered',
          'delivery.failed',
          'delivery.cancelled',
        ],
        enabled: true,
        disabled_reason: null,
        description: null,
        secret: secrets[e.path],
        created_at: at,
        updated_at: at,
      })
      .execute();
  }

  const waitFor = async (count: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (received < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  };

  // 1. Baseline: the sender alone, 20 requests in flight to one fast path.
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn' });
  const sender = new WebhookSender({ timeoutMs: 10_000, allowPrivateTargets: true, connectionsPerOrigin: 20 });
  const baselineCount = Math.min(backlog, 10_000);
  const payload = JSON.stringify({
    event: 'delivery.assigned',
    delivery_id: randomUUID(),
    status: 'ASSIGNED',
    timestamp: new Date().toISOString(),
  });
  let next = 0;
  const baseStart = now();
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < baselineCount) {
        next += 1;
        const id = randomUUID();
        const headers = buildHeaders({
          secret: secrets['/fast-1'],
          signatureHeader: 'X-Service-Signature',
          event: 'delivery.assigned',
          webhookId: id,
          timestampSeconds: Math.floor(Date.now() / 1000),
          body: payload,
        });
        await sender.send(target('/fast-1'), headers, payload);
      }
    }),
  );
  const baselineSeconds = (now() - baseStart) / 1000;
  await sender.close();
  await waitFor(baselineCount, 5000);
  const receivedBefore = received;

  // 2. Throughput: a backlog of one event per package, fanned out to the two fast endpoints.
  const packages = backlog / 2;
  for (let i = 0; i < packages; i += 500) {
    await db.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(packages, i + 500); j++) {
        await recordDeliveryEvent(trx, {
          packageId: randomUUID(),
          businessId: fastBusiness,
          event: 'delivery.assigned',
          status: 'ASSIGNED',
          occurredAt: new Date(),
        });
      }
    });
  }
  const logger = pino({ level: 'warn' });
  const bus = new LocalBus(logger);
  const worker = new WebhookWorker({
    db,
    repo: new OutboxRepository(db),
    clock: systemClock,
    logger,
    config,
    bus,
    pollIntervalMs: 500,
  });
  const drainStart = now();
  worker.start();
  await waitFor(receivedBefore + backlog, 120_000);
  const drainSeconds = (now() - drainStart) / 1000;
  const drained = received - receivedBefore;

  // 3. Latency, open loop: each change committed at its scheduled time; the slow endpoint gets 2 changes/s.
  const committedAt = new Map<string, number>();
  const slowCommittedAt = new Map<string, number>();
  const total = rate * duration;
  const loopStart = now();
  const pendingCommits: Promise<void>[] = [];
  let late = 0;
  for (let i = 0; i < total; i++) {
    const due = loopStart + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    else if (wait < -50) late += 1;
    const slow = i % Math.max(1, Math.round(rate / 2)) === 0;
    const packageId = randomUUID();
    pendingCommits.push(
      db
        .transaction()
        .execute((trx) =>
          recordDeliveryEvent(trx, {
            packageId,
            businessId: slow ? slowBusiness : fastBusiness,
            event: 'delivery.assigned',
            status: 'ASSIGNED',
            occurredAt: new Date(),
          }),
        )
        .then(() => {
          (slow ? slowCommittedAt : committedAt).set(packageId, now());
          bus.publish('webhooks.wake', {});
        }),
    );
  }
  await Promise.all(pendingCommits);
  const expected = received + committedAt.size * 2 + slowCommittedAt.size;
  await waitFor(expected, 30_000);
  await worker.stop();

  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'delivery_id', 'endpoint_id', 'attempts', 'status'])
    .execute();
  const latencies: number[] = [];
  const slowLatencies: number[] = [];
  for (const row of rows) {
    const fast = committedAt.get(row.delivery_id);
    const slow = slowCommittedAt.get(row.delivery_id);
    const first = arrivals.get(row.id)?.[0];
    if (first === undefined) continue;
    if (fast !== undefined) latencies.push(first - fast);
    if (slow !== undefined) slowLatencies.push(first - slow);
  }
  latencies.sort((a, b) => a - b);
  slowLatencies.sort((a, b) => a - b);
  const duplicates = [...arrivals.values()].filter((a) => a.length > 1).length;
  const notSucceeded = rows.filter((r) => r.status !== 'SUCCEEDED' && !slowCommittedAt.has(r.delivery_id)).length;

  receiver.kill();
  await database.close();
  dropDatabase = undefined;
  await server?.drop();

  const throughput = drained / drainSeconds;
  const baselineRate = baselineCount / baselineSeconds;
  console.log(
    JSON.stringify({
      scenario: 'B6 webhook delivery to a local receiver',
      date: new Date().toISOString(),
      database: url ? 'postgres' : 'pglite',
      node: process.version,
      baseline: {
        what: 'signed POSTs straight to the receiver, 20 in flight, no database',
        requests: baselineCount,
        perSecond: Math.round(baselineRate),
      },
      throughput: {
        deliveries: drained,
        seconds: round(drainSeconds),
        perSecond: Math.round(throughput),
        ratioToBaseline: Math.round((throughput / baselineRate) * 100) / 100,
      },
      latency: {
        load: `${rate} changes/s for ${duration} s, 2 endpoints each (${rate * 2} deliveries/s), open loop`,
        deliveries: latencies.length,
        firstAttemptMs: {
          p50: round(percentile(latencies, 50)),
          p90: round(percentile(latencies, 90)),
          p99: round(percentile(latencies, 99)),
          max: round(latencies.at(-1) ?? NaN),
        },
        lateSchedules: late,
      },
      slowEndpoint: {
        answersAfterMs: 3000,
        deliveries: slowLatencies.length,
        firstAttemptP50Ms: round(percentile(slowLatencies, 50)),
      },
      errors: { badSignatures, duplicates, notSucceeded },
      targets: {
        perSecond: 1000,
        p99Ms: 1000,
        met: throughput >= 1000 && percentile(latencies, 99) <= 1000 && badSignatures + duplicates + notSucceeded === 0,
      },
      rssMB: Math.round(process.memoryUsage().rss / 1048576),
    }),
  );
  process.exit(0);
}
