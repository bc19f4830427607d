// Request and response schemas of recurring jobs (contract section 22; docs/scheduling.md#recurring-jobs).
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { pageSchema } from '../../shared/pagination.js';
import { CreatePackageBody } from '../packages/packages.schemas.js';

const OFFSET_PATTERN = '^-?P(?:\\d{1,3}D)?(?:T(?:\\d{1,4}H)?(?:\\d{1,6}M)?(?:\\d{1,7}S)?)?$';

const Offset = (description: string) =>
  Type.String({
    pattern: OFFSET_PATTERN,
    maxLength: 40,
    description,
    examples: ['PT0S', 'PT1H', 'PT13H30M', '-PT30M'],
  });

export const OffsetWindow = Body(
  {
    startOffset: Offset('ISO 8601 duration added to the occurrence’s LOCAL time for the window’s start'),
    endOffset: Offset('ISO 8601 duration added to the occurrence’s LOCAL time for the window’s end (after the start)'),
  },
  {
    description:
      'A window as offsets from each occurrence, in wall-clock time of the job’s zone: 18:00 with PT13H–PT14H is 07:00–08:00 the next day, across daylight-saving changes too. At most 7 days.',
  },
);
export type OffsetWindow = Static<typeof OffsetWindow>;

// The package body (POST /packages) without a quote (a quote expires long before most occurrences);
// its windows are offsets (the absolute windows of POST /packages are computed per occurrence).
const { quoteId: _quoteId, ...packageFields } = CreatePackageBody.properties;

export const RecurringTemplate = Body(
  {
    ...packageFields,
    pickupWindow: Type.Optional(OffsetWindow),
    dropoffWindow: Type.Optional(OffsetWindow),
  },
  { description: 'A POST /packages body (no quoteId) whose windows are offsets from each occurrence' },
);
export type RecurringTemplate = Static<typeof RecurringTemplate>;

const Rule = Type.String({
  minLength: 1,
  maxLength: 1000,
  description:
    'An RFC 5545 RRULE ("FREQ=DAILY;BYHOUR=18;BYMINUTE=0" or "RRULE:…"), optionally after a "DTSTART:20270101T180000" line in LOCAL time of timeZone (no Z, no TZID). Without DTSTART the rule starts on the day it is created (00:00 local), so BYHOUR/BYMINUTE give the time. UNTIL is read as local time.',
  examples: ['FREQ=DAILY;BYHOUR=18;BYMINUTE=0', 'DTSTART:20270104T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR'],
});

const TimeZone = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "IANA time zone of the rule; default: the business's country's zone",
  examples: ['Africa/Nairobi', 'Europe/London'],
});

export const CreateRecurringBody = Body({
  rule: Rule,
  timeZone: Type.Optional(TimeZone),
  template: RecurringTemplate,
});
export type CreateRecurringBody = Static<typeof CreateRecurringBody>;

export const UpdateRecurringBody = Body(
  { rule: Type.Optional(Rule), timeZone: Type.Optional(TimeZone), template: Type.Optional(RecurringTemplate) },
  {
    minProperties: 1,
    description:
      'The occurrences to come follow the change: their PENDING packages are cancelled and made again under it; those already assigned go ahead; skipped ones stay skipped.',
  },
);
export type UpdateRecurringBody = Static<typeof UpdateRecurringBody>;

export const PauseBody = Body({
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      maxLength: 64,
      description:
        'The pause ends by itself then (occurrences from this instant on are created again); without it, the pause lasts until POST …/resume',
    }),
  ),
});
export type PauseBody = Static<typeof PauseBody>;

export const OccurrenceParams = Type.Object(
  {
    id: Uuid,
    date: Type.String({
      pattern: '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2})?)?$',
      maxLength: 19,
      description:
        'A local date (YYYY-MM-DD: every occurrence on that day) or date-time (YYYY-MM-DDTHH:MM[:SS]: that occurrence) in the job’s zone',
    }),
  },
  { additionalProperties: false },
);
export type OccurrenceParams = Static<typeof OccurrenceParams>;

const Window = Type.Object({ start: DateTime, end: DateTime });

export const OccurrenceView = Type.Object({
  date: Type.String({ description: 'Local date-time in the job’s zone, YYYY-MM-DDTHH:MM:SS: the occurrence’s key' }),
  at: DateTime,
  state: Type.Union(
    ['UPCOMING', 'CREATED', 'SKIPPED', 'PAUSED', 'FAILED'].map((s) => Type.Literal(s)),
    {
      description:
        'UPCOMING: not created yet (beyond RECURRING_HORIZON); CREATED: its package exists; SKIPPED; PAUSED: cancelled or not created because of a pause; FAILED: its package could not be created (error says why)',
    },
  ),
  packageId: Nullable(Uuid),
  pickupWindow: Type.Optional(Window),
  dropoffWindow: Type.Optional(Window),
  error: Type.Optional(Type.String()),
});
export type OccurrenceView = Static<typeof OccurrenceView>;

export const RecurringJobResponse = Type.Object({
  id: Uuid,
  rule: Type.String({ description: 'The rule as stored: its DTSTART line (local) and its RRULE line' }),
  timeZone: Type.String(),
  template: RecurringTemplate,
  state: Type.Union([Type.Literal('ACTIVE'), Type.Literal('PAUSED')]),
  pausedUntil: Nullable(DateTime),
  createdAt: DateTime,
  updatedAt: DateTime,
  nextOccurrences: Type.Optional(
    Type.Array(OccurrenceView, {
      description: 'GET /recurring-jobs/:id only: the next 10 occurrences from now (skipped and paused ones included)',
    }),
  ),
});
export type RecurringJobResponse = Static<typeof RecurringJobResponse>;

export const RecurringJobPage = pageSchema(RecurringJobResponse);

export const SkipResponse = Type.Object({
  skipped: Type.Array(OccurrenceView, { description: 'The occurrences skipped (their PENDING packages cancelled)' }),
});
