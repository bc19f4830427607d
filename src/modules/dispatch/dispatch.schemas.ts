// Schemas of the dispatch routes: the offer, the driver's open offers, the admin's offer log.
import { Type } from '@sinclair/typebox';
import { DateTime, Location, Nullable, Uuid, VehicleType } from '../../shared/schemas.js';
import { DispatchInfo, NullableMoney } from '../jobs/jobs.schemas.js';

export const JobType = Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]);

export const Offer = Type.Object(
  {
    id: Type.String(),
    jobType: JobType,
    jobId: Type.String(),
    pickup: Type.Object({ location: Location, address: Type.Optional(Type.String()) }),
    dropoff: Type.Optional(Type.Object({ location: Location })),
    vehicleType: VehicleType,
    distanceMeters: Type.Integer({ description: 'From the driver to the pickup' }),
    etaSeconds: Type.Integer({ description: 'From the driver to the pickup (distance at the vehicle average speed)' }),
    price: NullableMoney(
      "What the job pays: the package's or ride's price (a ride's final fare may differ, at most 1.25 × it)",
    ),
    earnings: Type.Optional(
      NullableMoney(
        "What the driver would earn from the price: price − booking fee − the operator's commission (section 21)",
      ),
    ),
    customerRating: Nullable(
      Type.Number({
        description:
          "The rating of who ordered the job (a ride's customer, a package's creator): the average of its last 500 ratings, one decimal; null before the first",
      }),
    ),
    expiresAt: DateTime,
    batch: Type.Optional(
      Type.Object(
        {
          addedSeconds: Type.Integer({ description: "Seconds the job's two stops add to the driver's route" }),
          stopsBefore: Type.Integer({ description: "The route's pending stops before the job's drop-off" }),
        },
        { description: 'Offered to a driver already on a route (section 24)' },
      ),
    ),
  },
  { description: 'A job offered to one driver until expiresAt: enough to decide, no contact details' },
);

export const OfferList = Type.Object({ offers: Type.Array(Offer) });

export const OfferParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const JobIdParams = Type.Object({ jobId: Uuid }, { additionalProperties: false });
export const AdminReleaseParams = Type.Object({ jobType: JobType, id: Uuid }, { additionalProperties: false });

const OfferState = Type.Union(['OPEN', 'ACCEPTED', 'DECLINED', 'LAPSED', 'WITHDRAWN'].map((s) => Type.Literal(s)));
const SkipReason = Type.Union(
  [
    'DECLINED',
    'LAPSED',
    'OFFERED_BEFORE',
    'WITHDRAWN',
    'RELEASED',
    'HOLDING_OFFER',
    'BATCH_FULL',
    'BATCH_CAPACITY',
    'BATCH_WINDOW',
    'BATCH_DETOUR',
  ].map((s) => Type.Literal(s)),
);

export const DispatchLog = Type.Object({
  jobId: Type.String(),
  jobType: JobType,
  status: Type.String(),
  dispatch: Type.Object({ ...DispatchInfo.properties, nextAttemptAt: Nullable(DateTime) }),
  scheduled: Nullable(
    Type.Object(
      {
        start: DateTime,
        leadSeconds: Type.Integer({
          description:
            "The lead used: p90 of the area's accept-to-arrival times over 7 days (at least 20 samples) or DISPATCH_LEAD_DEFAULT, plus DISPATCH_LEAD_BUFFER",
        }),
        leadSamples: Type.Integer({
          description: 'The samples the p90 was taken over (fewer than 20: the default was used)',
        }),
        enteredAt: Nullable(DateTime),
        customerToldAt: Nullable(DateTime),
      },
      { description: 'A scheduled job (section 22): it entered dispatch at start − lead; null for an ASAP job' },
    ),
  ),
  offers: Type.Array(
    Type.Object({
      id: Type.String(),
      driverId: Type.String(),
      outcome: OfferState,
      sentAt: DateTime,
      expiresAt: DateTime,
      answeredAt: Nullable(DateTime),
      why: Type.Object(
        {
          etaSeconds: Type.Integer(),
          distanceMeters: Type.Integer(),
          radiusMeters: Type.Integer({ description: 'The radius the driver was found in' }),
          candidates: Type.Integer({
            description: 'Eligible drivers (ACTIVE, ONLINE, free, fitting, fresh position) considered, nearest first',
          }),
          skipped: Type.Array(Type.Object({ driverId: Type.String(), reason: SkipReason }), {
            description:
              'Nearer drivers passed over, and why (BATCH_*: a driver on a route the job does not fit: full, capacity, a window, the detour)',
          }),
          batch: Type.Optional(
            Type.Object(
              {
                addedSeconds: Type.Integer(),
                stopsBefore: Type.Integer(),
                bestFreeEtaSeconds: Nullable(
                  Type.Integer({ description: 'The ETA to the pickup of the best free driver it was ranked against' }),
                ),
              },
              { description: "Chosen on its route (section 24): the detour against the best free driver's ETA" },
            ),
          ),
        },
        { description: 'Why this driver: busy drivers are never candidates (the live index holds free drivers only)' },
      ),
    }),
  ),
  releases: Type.Array(
    Type.Object({
      driverId: Type.String(),
      reason: Nullable(Type.String()),
      actorId: Nullable(Type.String()),
      at: DateTime,
    }),
    {
      description: 'The drivers who released the job (by themselves or by an admin), each once, latest release',
    },
  ),
  releaseCount: Type.Integer({
    minimum: 0,
    description: 'How many times the job was released (every return to PENDING / REQUESTED)',
  }),
  flagged: Type.Boolean({ description: "Released more than DISPATCH_MAX_RELEASES times: worth an admin's look" }),
});
