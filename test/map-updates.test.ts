// The console maps' pending changes (web/src/shared/map/updates.ts), in Node: a new list queues only what
// changed, a marker changed twice waits once with its newest value, and the slices fit the budget.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Pacer, PendingChanges } from '../web/src/shared/map/updates.js';
import type { MapPoint } from '../web/src/shared/map/types.js';

const driver = (id: string, lat: number, lng = 36.8, label = id): MapPoint => ({ id, lat, lng, label, kind: 'driver' });

test('a new list queues what was added, moved, relabelled or removed, and nothing else', () => {
  const pending = new PendingChanges();
  pending.set([driver('a', 1), driver('b', 2), driver('c', 3)]);
  assert.deepEqual(
    pending.take(10).map(([id]) => id),
    ['a', 'b', 'c'],
  );
  pending.set([driver('a', 1), driver('b', 2.5), driver('c', 3, 36.8, 'c · on a job')]);
  assert.deepEqual(pending.take(10), [
    ['b', driver('b', 2.5)],
    ['c', driver('c', 3, 36.8, 'c · on a job')],
  ]);
  pending.set([driver('b', 2.5), driver('c', 3, 36.8, 'c · on a job')]);
  assert.deepEqual(pending.take(10), [['a', null]]);
  pending.set([driver('b', 2.5), driver('c', 3, 36.8, 'c · on a job')]);
  assert.equal(pending.size, 0);
});

test('a marker that changes again before its turn waits once, in its place, with the newest value', () => {
  const pending = new PendingChanges();
  pending.set([driver('a', 1), driver('b', 2), driver('c', 3)]);
  assert.deepEqual(
    pending.take(1).map(([id]) => id),
    ['a'],
  );
  pending.set([driver('a', 1.1), driver('b', 2.1), driver('c', 3.1)]);
  pending.set([driver('a', 1.2), driver('b', 2.2)]);
  assert.equal(pending.size, 3);
  assert.deepEqual(pending.take(10), [
    ['b', driver('b', 2.2)],
    ['c', null],
    ['a', driver('a', 1.2)],
  ]);
  // Gone and back before its turn: the newest value only.
  pending.set([driver('a', 1.2)]);
  pending.set([driver('a', 1.2), driver('b', 2.3)]);
  assert.deepEqual(pending.take(10), [['b', driver('b', 2.3)]]);
});

test('the slices are sized to the budget by the time the last ones took', () => {
  const pacer = new Pacer(6, 100, 10);
  assert.equal(pacer.size(), 100);
  pacer.record(100, 12);
  assert.equal(pacer.size(), 50);
  for (let i = 0; i < 20; i++) pacer.record(50, 1);
  assert.ok(pacer.size() > 250, `cheap changes make bigger slices (${pacer.size()})`);
  for (let i = 0; i < 20; i++) pacer.record(10, 100);
  assert.equal(pacer.size(), 10, 'never below the minimum');
  pacer.record(0, 50);
  assert.equal(pacer.size(), 10, 'an empty slice teaches nothing');
});
