// Schemas of the alert routes (contract section 23).
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { pageSchema } from '../../shared/pagination.js';

export const ALERT_KINDS = [
  'job.at_risk',
  'job.late',
  'offer.unanswered',
  'driver.not_at_pickup',
  'driver.stalled',
] as const;
export const AlertKind = Type.Union(ALERT_KINDS.map((k) => Type.Literal(k)));
export const AlertState = Type.Union([Type.Literal('OPEN'), Type.Literal('ACKNOWLEDGED'), Type.Literal('RESOLVED')]);

export const AlertResponse = Type.Object({
  id: Uuid,
  kind: AlertKind,
  jobType: Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]),
  jobId: Uuid,
  driverId: Type.Optional(Uuid),
  raisedAt: DateTime,
  details: Type.Record(Type.String(), Type.Unknown(), {
    description: 'What held when it was raised: the step and its promise (`by`), the ETA, offers made, distances',
  }),
  state: AlertState,
  by: Type.Optional(Type.String({ description: 'Who acknowledged or resolved it last' })),
  at: Type.Optional(DateTime),
});
export type AlertResponse = Static<typeof AlertResponse>;

export const AlertPage = pageSchema(AlertResponse);

export const AlertsQuery = Type.Object(
  {
    state: Type.Optional(AlertState),
    kind: Type.Optional(AlertKind),
    from: Type.Optional(
      Type.String({
        maxLength: 40,
        description: 'Raised at or after: a date (midnight UTC) or an instant with its zone',
      }),
    ),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'Raised before: a date or an instant with its zone' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type AlertsQuery = Static<typeof AlertsQuery>;

/** Every active job's `sla` (null once it has ended): its promise, and the risk at the moment of the read. */
export const SlaField = Type.Optional(
  Nullable(
    Type.Object(
      {
        pickupBy: DateTime,
        dropoffBy: DateTime,
        risk: Type.Union([Type.Literal('OK'), Type.Literal('AT_RISK'), Type.Literal('LATE')]),
      },
      {
        description:
          "The promise (the windows, scheduledAt, or for an ASAP job the quote's ETA plus ASAP_SLACK) and the risk from the straight-line ETA: LATE once an end passed with its step not done, AT_RISK once an ETA passes an end less AT_RISK_MARGIN; null once the job ended",
      },
    ),
  ),
);
