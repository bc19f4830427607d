// The quote records: written behind the answer in batches, a refused row losing only itself, a bound on
// what waits, and drain() (at shutdown) waiting for what is in flight and queued.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { QuoteWriter } from '../src/modules/pricing/quote-writer.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { countryId, createUser } from './helpers/factories.js';

/** Counts the quote INSERTs in flight and can hold their answers back. */
class Inserts implements KyselyPlugin {
  inFlight = 0;
  private running = new Set<PluginTransformQueryArgs['queryId']>();
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  /** The next INSERTs' answers wait until release(). */
  holdNext(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'InsertQueryNode' || (args.node.kind === 'RawNode' && args.node.sqlFragments.join('').includes('insert into quotes'))) {
      this.running.add(args.queryId);
      this.inFlight += 1;
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.running.delete(args.queryId)) {
      const gate = this.gate;
      if (gate) await gate;
      this.inFlight -= 1;
    }
    return args.result;
  }
}

/** Until the held statement has reached the plugin (a server takes a few round trips: BEGIN, SET). */
async function untilInFlight(inserts: Inserts): Promise<void> {
  const until = Date.now() + 5000;
  while (inserts.inFlight === 0) {
    if (Date.now() > until) throw new Error('the first INSERT never started');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('quote writer', () => {
  let t: TestApp;
  let accountId: string;
  let country: string;

  before(async () => {
    t = await buildTestApp();
    accountId = (await createUser(t, { role: 'CUSTOMER' })).id;
    country = await countryId(t);
  });
  after(async () => t.close());

  const row = (account = accountId) => {
    const now = Date.now();
    return {
      id: randomUUID(),
      account_id: account,
      kind: 'PACKAGE' as const,
      pickup_lat: -1.28,
      pickup_lng: 36.82,
      dropoff_lat: -1.3,
      dropoff_lng: 36.8,
      vehicle_type: 'BIKE' as const,
      country_id: country,
      amount: 17430,
      currency: 'KES',
      breakdown: { base: 100 },
      tariff_version: 1,
      surge: 1,
      inputs: { routing: 'test' },
      created_at: new Date(now),
      expires_at: new Date(now + 600_000),
    };
  };
  const stored = async (ids: string[]) =>
    (await t.db.selectFrom('quotes').select('id').where('id', 'in', ids).execute()).length;

  test('records are written behind, in one statement per flush; an existing row (a quote already used) is kept as it is', async () => {
    const inserts = new Inserts();
    const writer = new QuoteWriter(t.db.withPlugin(inserts), t.deps.logger, { flushMs: 20 });
    const used = { ...row(), consumed_at: new Date() };
    await t.db.insertInto('quotes').values({ ...used, breakdown: JSON.stringify(used.breakdown), inputs: JSON.stringify(used.inputs) }).execute();
    const rows = [row(), row(), { ...used, consumed_at: null }];
    for (const r of rows) writer.record(r);
    assert.equal(await stored(rows.map((r) => r.id)), 1, 'nothing written before the flush');
    const until = Date.now() + 5000;
    while ((await stored(rows.map((r) => r.id))) < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(await stored(rows.map((r) => r.id)), 3);
    assert.equal(writer.stats.written, 3);
    const kept = await t.db.selectFrom('quotes').select('consumed_at').where('id', '=', used.id).executeTakeFirstOrThrow();
    assert.ok(kept.consumed_at, 'the used mark stays');
  });

  test('a row the database refuses loses only itself; one warning for the stretch', async () => {
    const warnings: unknown[] = [];
    const logger = Object.assign(Object.create(t.deps.logger), { warn: (...args: unknown[]) => warnings.push(args) });
    const writer = new QuoteWriter(t.db, logger);
    const good = [row(), row()];
    writer.record(row(randomUUID())); // no such account: the foreign key refuses it
    writer.record(row(randomUUID()));
    for (const r of good) writer.record(r);
    await writer.drain();
    assert.equal(await stored(good.map((r) => r.id)), 2);
    assert.deepEqual(writer.stats, { written: 2, dropped: 2 });
    assert.equal(warnings.length, 1);
  });

  test('drain() waits for the statement in flight and the records queued behind it; beyond maxQueued new records are dropped', async () => {
    const inserts = new Inserts();
    const writer = new QuoteWriter(t.db.withPlugin(inserts), t.deps.logger, { flushMs: 1, maxQueued: 4 });
    inserts.holdNext();
    const rows = Array.from({ length: 6 }, () => row());
    writer.record(rows[0]!);
    await untilInFlight(inserts);
    for (const r of rows.slice(1)) writer.record(r);
    assert.equal(writer.stats.dropped, 2, '1 in flight + 3 queued: the 5th and 6th are dropped');
    const drained = writer.drain();
    setTimeout(() => inserts.release(), 50);
    await drained;
    assert.equal(await stored(rows.slice(0, 4).map((r) => r.id)), 4);
    assert.equal(await stored(rows.slice(4).map((r) => r.id)), 0);
  });
});
