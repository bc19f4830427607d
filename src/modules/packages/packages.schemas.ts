// Request and response schemas of the packages module.
import { SlaField } from '../alerts/alerts.schemas.js';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { LocaleSchema } from '../../i18n/schemas.js';
import { Body, DateTime, Location, Nullable, Phone, Uuid, VehicleType } from '../../shared/schemas.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import {
  DispatchInfo,
  DriverSummary,
  EarningsField,
  Money,
  NullableMoney,
  ParcelSize,
  PaymentMethod,
  QuoteIdField,
  StatusHistoryItem,
  ViewerMoneyFields,
} from '../jobs/jobs.schemas.js';
import { WindowFields, WindowViews } from '../scheduling/scheduling.schemas.js';
import { JobPayment } from '../payments/payments.schemas.js';
import { PACKAGE_STATUSES } from './package-status.js';
import { FAIL_REASON_CODES } from '../../db/tables/jobs.js';

const Text = (max: number, min = 1) => Type.String({ minLength: min, maxLength: max });

export const Stop = Type.Object(
  {
    location: Location,
    address: Text(500),
    contactName: Text(200),
    contactPhone: Phone,
    notes: Type.Optional(Text(1000, 0)),
  },
  { additionalProperties: false },
);

/** The drop-off adds the recipient's language for the SMS they get (contract section 27). */
export const DropoffStop = Type.Object(
  {
    ...Stop.properties,
    contactLocale: Type.Optional(
      Type.Union(LocaleSchema.anyOf, {
        description:
          "The recipient's language for the tracking SMS (en, sw or fr); absent: the creator's, else the country's default",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Parcel = Type.Object(
  {
    description: Text(1000),
    weightKg: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 50_000 })),
    size: Type.Optional(ParcelSize),
  },
  { additionalProperties: false },
);

export const ProofKind = Type.Union([Type.Literal('PHOTO'), Type.Literal('SIGNATURE')]);

/** The proof of delivery as packages show it: API paths that need the bearer header (never public links). */
export const ProofView = Type.Object(
  {
    photoUrl: Type.Optional(
      Type.String({
        description: 'API path of the photo (GET with the bearer header): /api/packages/{id}/proof/photo',
      }),
    ),
    signatureUrl: Type.Optional(
      Type.String({
        description: 'API path of the signature (GET with the bearer header): /api/packages/{id}/proof/signature',
      }),
    ),
    recipientName: Type.Optional(Type.String()),
    at: DateTime,
  },
  { description: 'Proof of delivery sent by the driver (POST /packages/:id/proof); null until then' },
);

export const CreatePackageBody = Body({
  pickup: Stop,
  dropoff: DropoffStop,
  vehicleType: VehicleType,
  countryId: Uuid,
  customerId: Type.Optional(Uuid),
  parcel: Parcel,
  reference: Type.Optional(Text(100)),
  requireDeliveryCode: Type.Optional(Type.Boolean()),
  quoteId: QuoteIdField,
  ...WindowFields,
  notifyRecipient: Type.Optional(
    Type.Boolean({
      description: 'Send the drop-off contact the tracking link by SMS on creation and when the package is IN_TRANSIT',
    }),
  ),
  paymentMethod: Type.Optional(PaymentMethod),
  payment: Type.Optional(
    Body(
      {
        phone: Type.Optional(
          Type.String({
            ...Phone,
            description: "The M-Pesa number that gets the prompt (E.164, Kenyan); default the account's phone",
          }),
        ),
      },
      { description: 'paymentMethod MPESA only' },
    ),
  ),
  cashOnDelivery: Type.Optional(
    Body(
      {
        amount: Type.Integer({
          minimum: 1,
          maximum: 1_000_000_000_000,
          description: "in the minor unit of the country's currency, at most the country's codMax",
        }),
      },
      {
        description:
          'Cash the driver collects at the drop-off for the business (BUSINESS only); the driver confirms it as cashCollected to deliver',
      },
    ),
  ),
  proofRequired: Type.Optional(
    Type.Array(ProofKind, {
      uniqueItems: true,
      maxItems: 2,
      description:
        'Proof of delivery the driver must upload (POST /packages/:id/proof) before the package can be DELIVERED (409 PROOF_REQUIRED otherwise)',
    }),
  ),
});
export type CreatePackageBody = Static<typeof CreatePackageBody>;

export const PackageStatus = Type.Union(PACKAGE_STATUSES.map((status) => Type.Literal(status)));

/** Why a delivery failed (contract section 23); free text alone means OTHER. */
export const FailReasonCode = Type.Union(
  FAIL_REASON_CODES.map((code) => Type.Literal(code)),
  { description: `Why the delivery failed: ${FAIL_REASON_CODES.join(', ')}` },
);

const linkedId = (description: string) =>
  Type.Optional(described(Nullable(Type.String({ format: 'uuid' })), description));

/** What a company may not see of a PENDING package none of its drivers holds (contract section 9). */
const HIDDEN_FROM_COMPANIES =
  "absent in a company's view of a PENDING package none of its drivers holds (only what deciding to take it needs)";

const described = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description });

/** A stop as responses show it: the contacts and notes are left out where the caller may not see them. */
export const StopView = Type.Object({
  location: Location,
  address: Type.String(),
  contactName: Type.Optional(Type.String({ description: `The contact at this stop; ${HIDDEN_FROM_COMPANIES}` })),
  contactPhone: Type.Optional(Type.String({ description: `E.164; ${HIDDEN_FROM_COMPANIES}` })),
  notes: Type.Optional(Type.String({ description: `When given; ${HIDDEN_FROM_COMPANIES}` })),
  contactLocale: Type.Optional(
    Type.String({ description: `The drop-off contact's language, when given (section 27); ${HIDDEN_FROM_COMPANIES}` }),
  ),
});

const packageProperties = {
  id: Type.String(),
  status: PackageStatus,
  orderType: Type.Literal('PACKAGE_DELIVERY'),
  vehicleType: VehicleType,
  countryId: Type.String(),
  businessId: Nullable(Type.String()),
  customerId: Type.Optional(
    described(Nullable(Type.String()), `The customer it names (null: none); ${HIDDEN_FROM_COMPANIES}`),
  ),
  reference: Type.Optional(
    described(Nullable(Type.String()), `The creator's own reference (null: none); ${HIDDEN_FROM_COMPANIES}`),
  ),
  pickup: StopView,
  dropoff: StopView,
  parcel: Parcel,
  driver: Nullable(DriverSummary),
  statusHistory: Type.Array(StatusHistoryItem),
  createdAt: DateTime,
  updatedAt: DateTime,
  dispatch: DispatchInfo,
  ...WindowViews,
  sla: SlaField,
  price: NullableMoney(
    'Locked from the quote, or computed at creation (a scheduled package without a quote: when it enters dispatch); null only for packages created before prices existed',
  ),
  cancellationFee: NullableMoney('Charged when the creator cancels after a driver was assigned; else null'),
  paymentMethod: Type.Optional(PaymentMethod),
  payment: Type.Optional(
    Nullable(
      Type.Object(JobPayment.properties, {
        additionalProperties: false,
        description: 'paymentMethod MPESA: where the M-Pesa payment stands (section 26); else null',
      }),
    ),
  ),
  cashOnDelivery: Type.Optional(
    Nullable(
      Type.Object(Money.properties, {
        additionalProperties: false,
        description:
          'Cash the driver collects at the drop-off for the business; null: none. Shown to the business, the driver (and its company) and admins',
      }),
    ),
  ),
  cashCollected: Type.Optional(
    Nullable(
      Type.Object(Money.properties, {
        additionalProperties: false,
        description: 'The cash on delivery the driver confirmed at delivery; null before. Shown with cashOnDelivery',
      }),
    ),
  ),
  earnings: EarningsField,
  ...ViewerMoneyFields,
  proofRequired: Type.Array(ProofKind, { description: 'Proof of delivery needed before DELIVERED (empty: none)' }),
  proof: Nullable(ProofView),
  trackingUrl: Type.Optional(
    Type.String({
      description:
        "Public live-tracking link (no account needed); replaced by POST /packages/:id/tracking/rotate. Never shown to a company (it follows its drivers' jobs through GET /packages/:id/track)",
    }),
  ),
  reasonCode: Type.Optional(
    described(
      Nullable(FailReasonCode),
      `A FAILED package's reason code (the free text is the FAILED history item's reason); null otherwise. ${HIDDEN_FROM_COMPANIES}`,
    ),
  ),
  previousAttemptId: linkedId(
    `The failed package this one re-attempts (POST /packages/:id/reattempt); null otherwise. ${HIDDEN_FROM_COMPANIES}`,
  ),
  returnOf: linkedId(
    `The failed package this one returns to its pickup (POST /packages/:id/return); null otherwise. ${HIDDEN_FROM_COMPANIES}`,
  ),
  followUpId: linkedId(
    `The re-attempt or return created from this failed package; null until then. ${HIDDEN_FROM_COMPANIES}`,
  ),
};

export const PackageResponse = Type.Object(packageProperties, {
  description:
    "A package. A company sees its drivers' packages without trackingUrl, and the PENDING packages of its country without trackingUrl, customerId, reference, the stops' contacts and notes, and the history's reasons",
});
export type PackageResponse = Static<typeof PackageResponse>;
/** The package as its creator, the customer it names, its driver and admins see it: every field. */
export type FullPackage = PackageResponse & {
  trackingUrl: string;
  customerId: string | null;
  reference: string | null;
  pickup: Static<typeof Stop>;
  dropoff: Static<typeof DropoffStop>;
};

const trackingUrl = Type.String({
  description: 'Public live-tracking link (no account needed); replaced by POST /packages/:id/tracking/rotate',
});

/** The creator's 201: the whole package plus, when asked for, its delivery code (shown only here). */
export const CreatedPackageResponse = Type.Object({
  ...packageProperties,
  customerId: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  pickup: Stop,
  dropoff: DropoffStop,
  trackingUrl,
  deliveryCode: Type.Optional(Type.String({ pattern: '^[0-9]{4}$' })),
});

export const PackageListQuery = Type.Object(
  { ...PaginationQuery.properties, status: Type.Optional(PackageStatus) },
  { additionalProperties: false },
);
export type PackageListQuery = Static<typeof PackageListQuery>;
export const PackagePage = pageSchema(PackageResponse);

export const DeliverBody = Body({
  deliveryCode: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: '4 digits' })),
  recipientName: Type.Optional(Text(200)),
  cashCollected: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2_000_000_000,
      description:
        'Required for a package with cash on delivery: the cash collected, in minor units; must equal cashOnDelivery.amount (409 COD_MISMATCH)',
    }),
  ),
});
export const FailBody = Body(
  {
    reason: Type.Optional(Text(500)),
    reasonCode: Type.Optional(FailReasonCode),
  },
  { description: 'At least one of reason and reasonCode; reason alone means reasonCode OTHER' },
);

/** A re-attempt of a failed package (contract section 23): new windows, and the pickup when it is elsewhere now. */
export const ReattemptBody = Body({
  pickup: Type.Optional({
    ...Stop,
    description: "Where the parcel is picked up this time (absent: the original's pickup)",
  }),
  ...WindowFields,
});
export type ReattemptBody = Static<typeof ReattemptBody>;
export const CancelBody = Body({ reason: Type.Optional(Text(500)) });
export const AssignBody = Body({ driverId: Uuid });
