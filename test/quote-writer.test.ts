// The quote writer's group commit: one INSERT in flight at a time, the quotes made meanwhile written
// together in the next statement, a failed group failing only its own quotes, drain() waiting for
// everything taken in, and the relaxed commit confined to its own transaction.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { QuoteWriter } from '../src/modules/pricing/quote-writer.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { countryId, createUser } from './helpers/factories.js';

/** Counts INSERT statements (rows each, how many at once) and can hold the next one's answer back. */
class Inserts implements KyselyPlugin {
  statements: number[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private running = new Set<PluginTransformQueryArgs['queryId']>();
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

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
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.running.delete(args.queryId)) {
      const gate = this.gate;
      if (gate) await gate;
      this.inFlight -= 1;
      this.statements.push(Number(args.result.numAffectedRows ?? 0));
    }
    return args.result;
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
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

  test('quotes made while a group is written wait for it and go together in the next statement', async () => {
    const inserts = new Inserts();
    const writer = new QuoteWriter(t.db.withPlugin(inserts), t.deps.logger);
    inserts.holdNext();
    const first = row();
    const firstDone = writer.insert(first);
    const later = Array.from({ length: 30 }, () => row());
    const laterDone: Promise<void>[] = [];
    try {
      await untilInFlight(inserts);
      for (const r of later) {
        laterDone.push(writer.insert(r));
        await turn();
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(inserts.inFlight, 1, 'nothing else started while the first group was in flight');
    } finally {
      inserts.release();
    }
    await Promise.all([firstDone, ...laterDone]);
    assert.deepEqual(inserts.statements, [1, 30]);
    assert.equal(inserts.maxInFlight, 1);
    assert.equal(await stored([first.id, ...later.map((r) => r.id)]), 31);
  });

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

  test('the relaxed commit stays inside the quotes transaction', async () => {
    const writer = new QuoteWriter(t.db, t.deps.logger);
    await Promise.all(Array.from({ length: 20 }, () => writer.insert(row())));
    // Every pooled connection is back at the server's default.
    const settings = await Promise.all(
      Array.from({ length: 10 }, () => t.db.connection().execute((db) => db.selectNoFrom((eb) => eb.fn<string>('current_setting', [eb.val('synchronous_commit')]).as('value')).executeTakeFirstOrThrow())),
    );
    for (const s of settings) assert.equal(s.value, 'on');
  });
});
