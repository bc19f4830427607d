import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../shared/errors.js';
import { DecodeSlots } from './decode-slots.js';

const isBusy = (err: unknown) =>
  err instanceof AppError && err.statusCode === 503 && err.code === 'PROOF_BUSY' && err.headers['retry-after'] === '5';

test('at most `concurrency` hold a slot; a release hands the slot to the first waiting, in order', async () => {
  const slots = new DecodeSlots(2, 4);
  const a = await slots.acquire(1000);
  await slots.acquire(1000);
  const order: string[] = [];
  const third = slots.acquire(1000).then((release) => (order.push('third'), release));
  const fourth = slots.acquire(1000).then((release) => (order.push('fourth'), release));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([slots.inUse, slots.queued, order], [2, 2, []]);
  a();
  a(); // a second release of the same slot changes nothing
  (await third)();
  (await fourth)();
  assert.deepEqual(order, ['third', 'fourth']);
  assert.deepEqual([slots.inUse, slots.queued], [1, 0]);
});

test('a full queue is 503 at once; a wait longer than the time left is 503 when it runs out, and leaves the queue', async () => {
  const slots = new DecodeSlots(1, 1);
  const held = await slots.acquire(1000);
  const started = performance.now();
  const waiting = slots.acquire(60);
  await assert.rejects(slots.acquire(1000), isBusy);
  await assert.rejects(waiting, isBusy);
  assert.ok(performance.now() - started >= 55);
  assert.equal(slots.queued, 0);
  // No time left at all: refused without waiting.
  await assert.rejects(slots.acquire(0), isBusy);
  held();
  assert.equal(slots.inUse, 0);
  (await slots.acquire(0))();
});
