import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { DatabaseAvailability, isDatabaseUnavailable } from './availability.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('connection-class errors are told from statement errors', () => {
  for (const err of [
    withCode('57P01', 'terminating connection due to administrator command'),
    withCode('57P03', 'the database system is starting up'),
    withCode('08006'),
    withCode('ECONNREFUSED'),
    withCode('ECONNRESET'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    new Error('Client has encountered a connection error and is not queryable'),
    Object.assign(new AggregateError([withCode('ECONNREFUSED')], ''), {}),
    new Error('wrapped', { cause: withCode('57P01') }),
  ]) {
    assert.equal(isDatabaseUnavailable(err), true, String((err as Error).message));
  }
  for (const err of [
    withCode('23505', 'duplicate key'),
    withCode('22P02'),
    withCode('40001'),
    new Error('boom'),
    undefined,
    'text',
  ]) {
    assert.equal(isDatabaseUnavailable(err), false, String(err));
  }
});

test('one line when lost and one when recovered, with counts', () => {
  const lines: { msg: string; failedRequests?: number }[] = [];
  const availability = new DatabaseAvailability();
  availability.watch(pino({}, { write: (line: string) => void lines.push(JSON.parse(line)) }));
  availability.lost(withCode('23505'));
  assert.equal(availability.available, true);
  availability.lost(withCode('57P01'));
  availability.requestFailed(withCode('ECONNREFUSED'));
  availability.requestFailed(withCode('ECONNREFUSED'));
  assert.equal(availability.available, false);
  availability.recovered();
  availability.recovered();
  assert.deepEqual(
    lines.map((l) => [l.msg, l.failedRequests]),
    [
      ['database lost', undefined],
      ['database recovered', 2],
    ],
  );
});
