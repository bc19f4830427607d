// Recurring rules, pure (contract section 22): occurrences at the same local time across
// daylight-saving changes, windows from offsets, and the 400s of a bad rule or zone. Local times are
// checked with Intl formatting of the instants (an independent conversion), never with the code's own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../src/shared/errors.js';
import {
  checkOffsets,
  checkPerDay,
  checkTimeZone,
  occurrences,
  parseRule,
  zoneInstant,
} from '../src/modules/recurring/recurring-rule.js';

const DAY = 86_400_000;

/** The local wall clock of an instant in a zone, by Intl (not by the code under test). */
function wall(at: Date, timeZone: string): { date: string; time: string } {
  const f = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
  });
  const [date, time] = f.format(at).split(' ');
  return { date, time };
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
}

function fails(fn: () => unknown, field: RegExp, status = 400): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.statusCode, status);
    assert.match(err.message, field);
    return true;
  });
}

const EVENING = {
  pickupWindow: { startOffset: 'PT0S', endOffset: 'PT1H' },
  // 18:00 + 14 h of wall clock: 08:00 the next day, whatever the clocks did overnight.
  dropoffWindow: { startOffset: 'PT13H', endOffset: 'PT14H' },
};

for (const timeZone of ['Africa/Nairobi', 'Europe/London', 'America/New_York']) {
  describe(`a daily 18:00 pickup / 08:00 next-day drop-off for 365 days in ${timeZone}`, () => {
    const rule = parseRule('FREQ=DAILY;BYHOUR=18;BYMINUTE=0;BYSECOND=0', timeZone, '2027-01-01T00:00:00');
    const from = new Date('2027-01-01T00:00:00Z');
    const list = occurrences(rule, EVENING, { from, until: new Date(from.getTime() + 365 * DAY) });

    it('is 18:00 local every day, no gap, no duplicate', () => {
      // The first day's 18:00 is after `from` in every one of these zones (UTC−5 to UTC+3).
      assert.equal(list.length, 365);
      const days = new Set<string>();
      list.forEach((o, i) => {
        const { date, time } = wall(o.at, timeZone);
        assert.equal(time, '18:00', `${o.local} is ${date} ${time}`);
        assert.equal(date, addDays('2027-01-01', i), `day ${i}`);
        assert.equal(o.local, `${date}T18:00:00`);
        days.add(date);
        // The pickup window is 18:00–19:00, the drop-off 07:00–08:00 the next day, local.
        assert.deepEqual(wall(o.pickupWindow!.start, timeZone), { date, time: '18:00' });
        assert.deepEqual(wall(o.pickupWindow!.end, timeZone), { date, time: '19:00' });
        assert.deepEqual(wall(o.dropoffWindow!.start, timeZone), { date: addDays(date, 1), time: '07:00' });
        assert.deepEqual(wall(o.dropoffWindow!.end, timeZone), { date: addDays(date, 1), time: '08:00' });
      });
      assert.equal(days.size, 365);
    });

    if (timeZone !== 'Africa/Nairobi') {
      it('crosses both daylight-saving changes (the UTC hour moves, the local one does not)', () => {
        const utcHours = new Set(list.map((o) => o.at.getUTCHours()));
        assert.equal(utcHours.size, 2, [...utcHours].join(','));
        // The nights of the changes: the drop-off is still 08:00 local, 13 or 15 hours of real time later.
        const spans = new Set(list.map((o) => (o.dropoffWindow!.end.getTime() - o.at.getTime()) / 3_600_000));
        assert.deepEqual([...spans].sort(), [13, 14, 15]);
      });
    } else {
      it('is 15:00 UTC every day (no daylight saving)', () => {
        assert.ok(list.every((o) => o.at.getUTCHours() === 15));
      });
    }
  });
}

describe('local times and daylight saving', () => {
  it('a skipped local time moves forward by the gap; a repeated one is its first instant', () => {
    // London, 2027-03-28 01:30 does not exist (01:00 → 02:00): 02:30 BST = 01:30Z.
    assert.equal(
      zoneInstant(Date.parse('2027-03-28T01:30:00Z'), 'Europe/London').toISOString(),
      '2027-03-28T01:30:00.000Z',
    );
    // London, 2027-10-31 01:30 happens twice: the first is BST, 00:30Z.
    assert.equal(
      zoneInstant(Date.parse('2027-10-31T01:30:00Z'), 'Europe/London').toISOString(),
      '2027-10-31T00:30:00.000Z',
    );
  });

  it('a weekly rule with a DTSTART keeps its days and time', () => {
    const rule = parseRule(
      'DTSTART:20270301T123000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE',
      'Europe/London',
      '2026-01-01T00:00:00',
    );
    const list = occurrences(
      rule,
      {},
      { from: new Date('2027-03-01T00:00:00Z'), until: new Date('2027-04-15T00:00:00Z') },
    );
    assert.ok(list.length >= 12);
    for (const o of list) {
      assert.equal(wall(o.at, 'Europe/London').time, '12:30');
      assert.ok([1, 3].includes(new Date(`${o.local}Z`).getUTCDay()));
    }
    assert.equal(list[0].local, '2027-03-01T12:30:00');
  });

  it('COUNT and UNTIL end the rule; limit caps the answer', () => {
    const counted = parseRule('FREQ=DAILY;COUNT=3;BYHOUR=9', 'Africa/Nairobi', '2027-01-01T00:00:00');
    const range = { from: new Date('2026-12-01T00:00:00Z'), until: new Date('2027-12-01T00:00:00Z') };
    assert.equal(occurrences(counted, {}, range).length, 3);
    const until = parseRule('FREQ=DAILY;UNTIL=20270105;BYHOUR=9', 'Africa/Nairobi', '2027-01-01T00:00:00');
    assert.deepEqual(
      occurrences(until, {}, range).map((o) => o.local.slice(0, 10)),
      ['2027-01-01', '2027-01-02', '2027-01-03', '2027-01-04', '2027-01-05'],
    );
    const daily = parseRule('FREQ=DAILY;BYHOUR=9', 'Africa/Nairobi', '2027-01-01T00:00:00');
    assert.equal(occurrences(daily, {}, { ...range, limit: 10 }).length, 10);
  });
});

describe('bad rules, zones and offsets are 400s naming the field', () => {
  const start = '2027-01-01T00:00:00';
  for (const bad of [
    '',
    'garbage',
    'FREQ=DAILYX',
    'FREQ=DAILY;BYHOUR=25',
    'FREQ=WEEKLY;BYDAY=MO,XX',
    'FREQ=DAILY;INTERVAL=abc',
    'FREQ=DAILY;FREQ=WEEKLY',
    'BYHOUR=9',
    'FREQ=DAILY;COUNT=2;UNTIL=20270101',
    'FREQ=SECONDLY',
    'FREQ=MINUTELY;INTERVAL=30',
    // Never: refused at once (rrule alone looks for one until the year 9999).
    'FREQ=HOURLY;BYMONTH=6;BYMONTHDAY=31',
    'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30',
    'DTSTART:20270101T180000Z\nRRULE:FREQ=DAILY',
    'DTSTART;TZID=Europe/London:20270101T180000\nRRULE:FREQ=DAILY',
  ]) {
    it(`rejects ${JSON.stringify(bad)}`, () => fails(() => parseRule(bad, 'Africa/Nairobi', start), /body\.rule/));
  }

  it('rejects a rule of more than RECURRING_MAX_PER_DAY a day', () => {
    const hourly = parseRule('FREQ=HOURLY', 'Africa/Nairobi', start);
    checkPerDay(hourly, 50, start); // 24 a day
    fails(() => checkPerDay(hourly, 20, start), /RECURRING_MAX_PER_DAY \(20\)/);
    const quarterly = parseRule('FREQ=HOURLY;BYMINUTE=0,15,30,45', 'Africa/Nairobi', start);
    fails(() => checkPerDay(quarterly, 50, start), /body\.rule/);
    // A burst on one day of the year counts too.
    const burst = parseRule('FREQ=YEARLY;BYMONTH=6;BYMONTHDAY=1;BYHOUR=1,2,3,4,5,6', 'Africa/Nairobi', start);
    fails(() => checkPerDay(burst, 5, start), /2027-06-01/);
  });

  it('rejects an unknown time zone', () => {
    fails(() => checkTimeZone('Mars/Olympus'), /body\.timeZone/);
    fails(() => checkTimeZone(''), /body\.timeZone/);
    checkTimeZone('Europe/London');
  });

  it('rejects bad offsets', () => {
    fails(() => checkOffsets({ pickupWindow: { startOffset: '1h', endOffset: 'PT1H' } }), /pickupWindow\.startOffset/);
    fails(() => checkOffsets({ pickupWindow: { startOffset: 'PT1H', endOffset: 'PT1H' } }), /pickupWindow\.endOffset/);
    fails(() => checkOffsets({ dropoffWindow: { startOffset: 'PT0S', endOffset: 'P8D' } }), /dropoffWindow\.endOffset/);
    fails(
      () =>
        checkOffsets({
          pickupWindow: { startOffset: 'PT0S', endOffset: 'PT2H' },
          dropoffWindow: { startOffset: '-PT1H', endOffset: 'PT1H' },
        }),
      /dropoffWindow\.endOffset/,
    );
    checkOffsets({ pickupWindow: { startOffset: '-PT30M', endOffset: 'PT30M' }, dropoffWindow: EVENING.dropoffWindow });
  });
});
