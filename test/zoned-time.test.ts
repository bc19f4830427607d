// The slot pickers' local-time arithmetic (web/src/shared/zoned-time.ts, contract section 22): local
// days and slots of a zone turned into UTC instants whatever the process's own zone, across London's
// daylight-saving changes (a skipped time moves on by the gap, a repeated one is its first instant).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { localDate, localTime, nextDays, slotsOf, zonedInstant } from '../web/src/shared/zoned-time.js';

const iso = (ms: number) => new Date(ms).toISOString();

describe('zoned time (slot pickers)', () => {
  test('Nairobi (UTC+3, no daylight saving): a local time is 3 hours ahead of UTC', () => {
    assert.equal(iso(zonedInstant('2026-12-08', '10:00', 'Africa/Nairobi')), '2026-12-08T07:00:00.000Z');
    assert.equal(iso(zonedInstant('2026-12-09', '00:15', 'Africa/Nairobi')), '2026-12-08T21:15:00.000Z');
    assert.equal(localDate(Date.parse('2026-12-08T21:15:00Z'), 'Africa/Nairobi'), '2026-12-09');
    assert.equal(localTime(Date.parse('2026-12-08T21:15:00Z'), 'Africa/Nairobi'), '00:15');
  });

  test('London: summer and winter offsets, the skipped 01:30 moves to 02:30, the repeated 01:30 is its first instant', () => {
    assert.equal(iso(zonedInstant('2027-01-15', '18:00', 'Europe/London')), '2027-01-15T18:00:00.000Z');
    assert.equal(iso(zonedInstant('2027-07-15', '18:00', 'Europe/London')), '2027-07-15T17:00:00.000Z');
    // 28 March 2027: 01:00 GMT → 02:00 BST.
    assert.equal(iso(zonedInstant('2027-03-28', '01:30', 'Europe/London')), '2027-03-28T01:30:00.000Z');
    assert.equal(localTime(zonedInstant('2027-03-28', '01:30', 'Europe/London'), 'Europe/London'), '02:30');
    // 31 October 2027: 02:00 BST → 01:00 GMT; 01:30 happens twice, first at 00:30Z.
    assert.equal(iso(zonedInstant('2027-10-31', '01:30', 'Europe/London')), '2027-10-31T00:30:00.000Z');
  });

  test('a day’s slots: only those not begun, each one hour, in the zone', () => {
    const options = { stepMinutes: 60, lengthMinutes: 60, firstHour: 7, lastHour: 21 };
    const all = slotsOf('2027-03-28', 'Europe/London', { ...options, earliestMs: 0 });
    assert.equal(all.length, 15);
    assert.equal(all[0]!.label, '07:00–08:00');
    assert.equal(iso(all[0]!.start), '2027-03-28T06:00:00.000Z');
    const later = slotsOf('2027-03-28', 'Europe/London', {
      ...options,
      earliestMs: Date.parse('2027-03-28T12:30:00Z'),
    });
    assert.equal(later[0]!.value, '14:00');
  });

  test('the next days are local days, today and tomorrow named', () => {
    // 22:30 UTC on 7 December is already the 8th in Nairobi.
    const days = nextDays(Date.parse('2026-12-07T22:30:00Z'), 'Africa/Nairobi', 3);
    assert.deepEqual(
      days.map((d) => d.value),
      ['2026-12-08', '2026-12-09', '2026-12-10'],
    );
    assert.equal(days[0]!.label, 'Today, Tue 8 Dec');
    assert.equal(days[1]!.label, 'Tomorrow, Wed 9 Dec');
    assert.equal(days[2]!.label, 'Thu 10 Dec');
  });
});
