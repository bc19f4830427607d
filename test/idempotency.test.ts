// The Idempotency-Key store on its own: a request that is merely slow keeps its key, a crashed one's
// key is taken over after ABANDONED_CLAIM_MS. Real database (PGlite or the server).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ABANDONED_CLAIM_MS, IdempotencyStore } from '../src/http/idempotency.js';
import { IdempotencyRepository } from '../src/http/idempotency.repository.js';
import type { RecordAnswer } from '../src/shared/record-answer.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

describe('Idempotency-Key claims', () => {
  let t: TestApp;
  let user: TestUser;
  let store: IdempotencyStore;

  before(async () => {
    t = await buildTestApp();
    user = await createUser(t, { role: 'BUSINESS' });
    store = new IdempotencyStore({
      db: t.db,
      repo: new IdempotencyRepository(t.db),
      clock: t.clock,
      secret: 'idempotency-test-secret',
    });
  });
  after(() => t.close());

  test('a request still running after the takeover age is not run twice: the second gets its response', async () => {
    const options = { accountId: user.id, key: 'slow-request', scope: 'test', body: { n: 1 } };
    let markStarted!: () => void;
    let finishFirst!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const first = store.run(options, async () => {
      markStarted();
      await new Promise<void>((resolve) => (finishFirst = resolve));
      return { statusCode: 201, body: { run: 'first' } };
    });
    await started;
    // The first request has been running "for" longer than a crashed claim may live.
    t.clock.advance(ABANDONED_CLAIM_MS + 1000);
    let secondRan = false;
    const second = store.run(options, async () => {
      secondRan = true;
      return { statusCode: 201, body: { run: 'second' } };
    });
    // Let the second request reach the database while the first still holds its claim.
    await new Promise((resolve) => setTimeout(resolve, 200));
    finishFirst();
    assert.deepEqual(await first, { statusCode: 201, body: { run: 'first' }, replayed: false });
    assert.deepEqual(await second, { statusCode: 201, body: { run: 'first' }, replayed: true });
    assert.equal(secondRan, false);
  });

  test('the claim of a request that never finished (a crashed instance) is taken over after the takeover age', async () => {
    const options = { accountId: user.id, key: 'crashed-request', scope: 'test', body: { n: 2 } };
    // What a crash leaves behind: a committed IN_FLIGHT claim and no transaction.
    await t.db
      .insertInto('idempotency_keys')
      .values({
        account_id: user.id,
        key: options.key,
        request_hash: 'x',
        state: 'IN_FLIGHT',
        response_status: null,
        response_body: null,
        created_at: t.clock.now(),
      })
      .execute();
    const work = async () => ({ statusCode: 201, body: { run: 'retry' } });
    await assert.rejects(store.run(options, work), (err: { code?: string }) => err.code === 'IDEMPOTENCY_KEY_REUSED');
    t.clock.advance(ABANDONED_CLAIM_MS + 1000);
    assert.deepEqual(await store.run(options, work), { statusCode: 201, body: { run: 'retry' }, replayed: false });
    assert.deepEqual(await store.run(options, work), { statusCode: 201, body: { run: 'retry' }, replayed: true });
  });

  test("a step (once) whose claim was taken over while it was slow rolls back with 409; the taker's answer is stored", async () => {
    const options = { accountId: user.id, key: 'slow-step', scope: 'step', body: { n: 4 }, statusCode: 200 };
    const applied: string[] = [];
    const step = (name: string, wait?: Promise<void>) => async (record: RecordAnswer | undefined) => {
      await wait;
      await t.db.transaction().execute(async (trx) => {
        applied.push(name);
        await record!(trx, { run: name });
      });
      return { run: name };
    };
    let finishFirst!: () => void;
    const first = store.once(options, step('first', new Promise<void>((resolve) => (finishFirst = resolve))));
    await new Promise((resolve) => setTimeout(resolve, 100));
    t.clock.advance(ABANDONED_CLAIM_MS + 1000);
    assert.deepEqual(await store.once(options, step('second')), {
      statusCode: 200,
      body: { run: 'second' },
      replayed: false,
    });
    finishFirst();
    await assert.rejects(first, (err: { code?: string }) => err.code === 'IDEMPOTENCY_KEY_IN_FLIGHT');
    assert.deepEqual(await store.once(options, step('third')), {
      statusCode: 200,
      body: { run: 'second' },
      replayed: true,
    });
    // The first step's change was rolled back with its answer; only the second's is kept.
    assert.deepEqual(applied, ['second', 'first']);
    const row = await t.db
      .selectFrom('idempotency_keys')
      .select(['state', 'response_status'])
      .where('key', '=', 'slow-step')
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { state: 'DONE', response_status: 200 });
  });

  test('a step (once) that stores nothing itself has its answer stored after it; one that fails stores nothing', async () => {
    const options = { accountId: user.id, key: 'plain-step', scope: 'step', body: {}, statusCode: 204 };
    let runs = 0;
    const work = async () => {
      runs += 1;
      return null;
    };
    assert.deepEqual(await store.once(options, work), { statusCode: 204, body: null, replayed: false });
    assert.deepEqual(await store.once(options, work), { statusCode: 204, body: null, replayed: true });
    assert.equal(runs, 1);
    const failing = { ...options, key: 'failing-step' };
    await assert.rejects(
      store.once(failing, async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.deepEqual(
      await t.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'failing-step').execute(),
      [],
    );
  });

  test('a failed request releases only its own claim', async () => {
    const options = { accountId: user.id, key: 'failing-request', scope: 'test', body: { n: 3 } };
    await assert.rejects(
      store.run(options, async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    const left = await t.db.selectFrom('idempotency_keys').select('key').where('key', '=', options.key).execute();
    assert.deepEqual(left, []);
  });
});
