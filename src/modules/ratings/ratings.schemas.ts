// Request and response schemas of ratings and tips (contract section 20).
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';

export const RateBody = Body({
  stars: Type.Integer({ minimum: 1, maximum: 5, description: '1 to 5' }),
  comment: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'Seen by admins and its author only (the rated party sees the stars)',
    }),
  ),
});
export type RateBody = Static<typeof RateBody>;

export const TipBody = Body({
  amount: Type.Integer({
    minimum: 1,
    maximum: 1_000_000_000,
    description: "In the minor unit of the job's currency; at most TIP_MAX_SHARE of the price",
  }),
});

const JobType = Type.Union([Type.Literal('PACKAGE'), Type.Literal('RIDE')]);
const Side = Type.Union([Type.Literal('CREATOR'), Type.Literal('DRIVER')], {
  description: "CREATOR: the ride's customer or the package's creator rated the driver; DRIVER: the driver rated them",
});
const Party = Type.Union(['CUSTOMER', 'BUSINESS', 'DRIVER'].map((r) => Type.Literal(r)));

/** The rating as its author sees it (POST's 201). */
export const RatingResponse = Type.Object({
  id: Type.String(),
  jobType: JobType,
  jobId: Type.String(),
  side: Side,
  ratedId: Type.String(),
  stars: Type.Integer(),
  comment: Nullable(Type.String()),
  createdAt: DateTime,
});

/** A rating in a list; `comment` only for admins and the author (absent for anyone else). */
export const RatingItem = Type.Object({
  id: Type.String(),
  jobType: JobType,
  jobId: Type.String(),
  side: Side,
  raterId: Type.String(),
  raterRole: Party,
  ratedId: Type.String(),
  ratedRole: Party,
  driverId: Type.String({ description: "The job's driver (the rated party or the rater)" }),
  stars: Type.Integer(),
  comment: Type.Optional(Nullable(Type.String({ description: 'Admins and the author only' }))),
  createdAt: DateTime,
});
export type RatingItem = Static<typeof RatingItem>;
export const RatingPage = pageSchema(RatingItem);

export const AdminRatingsQuery = Type.Object(
  { ...PaginationQuery.properties, driverId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export type AdminRatingsQuery = Static<typeof AdminRatingsQuery>;
export const CompanyRatingsQuery = AdminRatingsQuery;
export const OwnRatingsQuery = Type.Object({ ...PaginationQuery.properties }, { additionalProperties: false });

export const DriverRatingsQuery = Type.Object(
  {
    ...PaginationQuery.properties,
    side: Type.Union([Type.Literal('given'), Type.Literal('received')], {
      description:
        'received: the ratings of the driver (stars only); given: the ratings the driver gave, with its comments',
    }),
  },
  { additionalProperties: false },
);
export type DriverRatingsQuery = Static<typeof DriverRatingsQuery>;

/** A rating in the driver's own lists: no rater (received ones are anonymous), a comment only on those it gave. */
export const DriverRatingItem = Type.Object({
  id: Type.String(),
  jobType: JobType,
  jobId: Type.String(),
  side: Side,
  stars: Type.Integer(),
  comment: Type.Optional(Nullable(Type.String({ description: 'Only on the ratings the driver gave' }))),
  createdAt: DateTime,
});
export type DriverRatingItem = Static<typeof DriverRatingItem>;
export const DriverRatingPage = pageSchema(DriverRatingItem);

export const RatingAlerts = Type.Object({
  threshold: Type.Number({ description: 'RATING_ALERT_BELOW' }),
  minimumRatings: Type.Integer(),
  items: Type.Array(
    Type.Object({
      driverId: Type.String(),
      firstName: Type.String(),
      lastName: Type.String(),
      companyId: Nullable(Type.String()),
      rating: Type.Number(),
      ratingCount: Type.Integer(),
    }),
    { description: 'Lowest rating first' },
  ),
});
export const AlertsQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) },
  { additionalProperties: false },
);

export const TipResponse = Type.Object({
  jobType: JobType,
  jobId: Type.String(),
  amount: Type.Integer(),
  currency: Type.String(),
  paymentMethod: Type.Union([Type.Literal('CASH'), Type.Literal('ACCOUNT')], {
    description: "CASH: the driver was handed it (a customer's job); ACCOUNT: charged to the business's account",
  }),
  createdAt: DateTime,
});
