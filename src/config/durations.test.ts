import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseDuration, parseRateLimit } from './durations.js';

test('parseDuration reads every unit and refuses everything else', () => {
  assert.equal(parseDuration('500ms'), 500);
  assert.equal(parseDuration('30s'), 30_000);
  assert.equal(parseDuration('15m'), 900_000);
  assert.equal(parseDuration('2h'), 7_200_000);
  assert.equal(parseDuration('7d'), 604_800_000);
  for (const bad of ['', '15', 'm', '1.5h', '-1s', '10 minutes', '1w', '15M'])
    assert.equal(parseDuration(bad), undefined, bad);
});

test('formatDuration picks the largest whole unit', () => {
  assert.equal(formatDuration(900_000), '15m');
  assert.equal(formatDuration(1500), '1500ms');
  assert.equal(formatDuration(86_400_000), '1d');
});

test('parseRateLimit reads N/window and off', () => {
  assert.deepEqual(parseRateLimit('100/15m'), { max: 100, windowMs: 900_000 });
  assert.equal(parseRateLimit('off'), null);
  for (const bad of ['100', '0/15m', '100/15', 'x/1m', '5/']) assert.equal(parseRateLimit(bad), undefined, bad);
});
