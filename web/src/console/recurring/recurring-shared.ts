// Recurring jobs' shared pieces: the API's types, the query keys and the rule helpers (read and written).
import type { Schemas } from '../../shared/api/types';

export type CreateBody = Schemas['/api/recurring-jobs']['post']['requestBody']['content']['application/json'];
export type Job = Schemas['/api/recurring-jobs/{id}']['get']['responses'][200]['content']['application/json'];
export type Occurrence = NonNullable<Job['nextOccurrences']>[number];

export const keys = {
  list: ['recurring-jobs'] as const,
  one: (id: string) => ['recurring-jobs', id] as const,
};

/** The RRULE of the picker's choice. */
export function ruleOf(kind: 'DAILY' | 'WEEKLY' | 'RAW', time: string, days: string[], raw: string): string {
  if (kind === 'RAW') return raw.trim();
  const [h, m] = time.split(':').map(Number);
  const at = `BYHOUR=${h};BYMINUTE=${m};BYSECOND=0`;
  return kind === 'DAILY' ? `FREQ=DAILY;${at}` : `FREQ=WEEKLY;BYDAY=${days.join(',')};${at}`;
}

/** A rule as people read it: "Daily at 18:00", "Weekly on MO,WE at 09:30", else the rule itself. */
export function describeRule(rule: string): string {
  const line =
    rule
      .split('\n')
      .find((l) => l.startsWith('RRULE:'))
      ?.slice(6) ?? rule;
  const parts = Object.fromEntries(line.split(';').map((p) => p.split('=') as [string, string]));
  const keysOf = Object.keys(parts).sort().join(',');
  const time =
    parts.BYHOUR !== undefined && /^\d+$/.test(parts.BYHOUR) && /^\d+$/.test(parts.BYMINUTE ?? '0')
      ? `${parts.BYHOUR.padStart(2, '0')}:${(parts.BYMINUTE ?? '0').padStart(2, '0')}`
      : undefined;
  if (time && parts.FREQ === 'DAILY' && /^BYHOUR,(BYMINUTE,)?(BYSECOND,)?FREQ$/.test(keysOf)) return `Daily at ${time}`;
  if (time && parts.FREQ === 'WEEKLY' && /^BYDAY,BYHOUR,(BYMINUTE,)?(BYSECOND,)?FREQ$/.test(keysOf))
    return `Weekly on ${parts.BYDAY} at ${time}`;
  return line;
}
