// Schemas shared by several modules.
import { Type, type ObjectOptions, type Static, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** A request body object: unknown properties are rejected with 400 (no mass assignment). */
export const Body = <T extends TProperties>(properties: T, options: ObjectOptions = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const DateTime = Type.String({ format: 'date-time' });
/**
 * The schema or null. A nullable object is written `type: ['object', 'null']` (JSON Schema 2020-12,
 * OpenAPI 3.1): for an `anyOf` the response serializer validates the object (formats included) on
 * every response to pick the branch, which showed in the GET /packages/:id profile.
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> =>
  (schema as { type?: unknown }).type === 'object'
    ? Type.Unsafe<Static<T> | null>({ ...schema, type: ['object', 'null'] })
    : Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));

export const Phone = Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164: + and 7 to 15 digits' });
export const Email = Type.String({ format: 'email', maxLength: 254 });

export const Location = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lng: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false },
);

export const VehicleType = Type.Union([
  Type.Literal('BIKE'),
  Type.Literal('CAR'),
  Type.Literal('VAN'),
  Type.Literal('TRUCK'),
]);
export const OrderType = Type.Union([Type.Literal('RIDE'), Type.Literal('PACKAGE_DELIVERY')]);
export const Role = Type.Union([
  Type.Literal('CUSTOMER'),
  Type.Literal('DRIVER'),
  Type.Literal('BUSINESS'),
  Type.Literal('COMPANY'),
  Type.Literal('ADMIN'),
]);

export const ErrorResponse = Type.Object(
  {
    statusCode: Type.Integer(),
    message: Type.String(),
    error: Type.String(),
    code: Type.Optional(Type.String()),
  },
  { $id: 'ErrorResponse' },
);

export const SuccessMessage = Type.Object({ success: Type.Boolean(), message: Type.String() });

/** The error responses of a route, for its schema (the contract's error shape, one shared schema). */
export const errorResponses = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [c, { $ref: 'ErrorResponse#' }]));
