// Schemas of section 22's fields, shared by packages, rides, quotes and the tracking answer.
import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../shared/schemas.js';

/** An RFC 3339 instant in a request (bounded, as every request string is). */
const Instant = Type.String({ format: 'date-time', maxLength: 40 });

export const TimeWindowBody = Type.Object(
  { start: Instant, end: Instant },
  {
    additionalProperties: false,
    description:
      'RFC 3339 instants (UTC on the wire): at least MIN_WINDOW long, ending after it starts and not in the past, starting at most SCHEDULE_MAX_AHEAD ahead',
  },
);

export const TimeWindowView = Type.Object({ start: DateTime, end: DateTime });

export const TimeZoneField = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "An IANA time zone (Africa/Nairobi): the job's days and slots; the country's when absent",
});

/** The request fields of a package (and a package quote). */
export const WindowFields = {
  pickupWindow: Type.Optional({
    ...TimeWindowBody,
    description: `When the driver is to pick up (absent: as soon as possible). ${TimeWindowBody.description}`,
  }),
  dropoffWindow: Type.Optional({
    ...TimeWindowBody,
    description: `When the package is to be delivered; its end is not before the pickup window's. ${TimeWindowBody.description}`,
  }),
  timeZone: Type.Optional(TimeZoneField),
};

export const ScheduledAtField = Type.Optional({
  ...Instant,
  description:
    'A ride booked ahead: the driver is to be at the pickup then (at least RIDE_SCHEDULE_MIN_AHEAD, at most SCHEDULE_MAX_AHEAD ahead); absent: now',
});

/** The response fields of a package. */
export const WindowViews = {
  pickupWindow: Nullable(TimeWindowView),
  dropoffWindow: Nullable(TimeWindowView),
  timeZone: Nullable(
    Type.String({
      description:
        "The job's IANA time zone: its own, else its country's (null: a job made before time zones were kept)",
    }),
  ),
};
