// The quote writer: a failed group fails only its own quotes, and drain() (at shutdown) waits for the
// groups in flight and the quotes queued behind them.
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
      breakdown: JSON.stringify({ base: 100 }),
      tariff_version: 1,
      surge: 1,
      inputs: JSON.stringify({ routing: 'test' }),
      created_at: new Date(now),
      expires_at: new Date(now + 600_000),
    };
  };
  const stored = async (ids: string[]) =>
    (await t.db.selectFrom('quotes').select('id').where('id', 'in', ids).execute()).length;

  test('a group that fails rejects its own quotes only; the next group is written', async () => {
    const writer = new QuoteWriter(t.db, t.deps.logger);
    const bad = writer.insert(row(randomUUID())); // no such account: the foreign key refuses the group
    const badToo = writer.insert(row());
    await assert.rejects(bad);
    await assert.rejects(badToo, 'the same statement, the same outcome');
    const good = row();
    await writer.insert(good);
    assert.equal(await stored([good.id]), 1);
  });

  test('drain() waits for the group in flight and for the quotes queued behind it', async () => {
    const inserts = new Inserts();
    const writer = new QuoteWriter(t.db.withPlugin(inserts), t.deps.logger);
    inserts.holdNext();
    const rows = Array.from({ length: 5 }, () => row());
    const settled: boolean[] = [];
    void writer.insert(rows[0]!).then(() => settled.push(true));
    await untilInFlight(inserts);
    for (const r of rows.slice(1)) void writer.insert(r).then(() => settled.push(true));
    const drained = writer.drain();
    setTimeout(() => inserts.release(), 50);
    await drained;
    assert.equal(settled.length, 5);
    assert.equal(await stored(rows.map((r) => r.id)), 5);
  });
});
