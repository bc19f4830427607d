// The user object (contract section 3) and its mapper, shared by every module that returns a user.
import { Type, type Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { UsersTable } from '../../db/schema.js';
import { LocaleSchema } from '../../i18n/schemas.js';
import type { Locale } from '../../shared/locales.js';
import { Nullable, Role } from '../../shared/schemas.js';

export const AccountStatus = Type.Union([
  Type.Literal('ACTIVE'),
  Type.Literal('PENDING_APPROVAL'),
  Type.Literal('REJECTED'),
  Type.Literal('SUSPENDED'),
]);

export const UserResponse = Type.Object({
  id: Type.String({ format: 'uuid' }),
  email: Type.String(),
  phone: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  role: Role,
  isEmailVerified: Type.Boolean(),
  isPhoneVerified: Type.Boolean(),
  status: AccountStatus,
  countryId: Nullable(Type.String({ format: 'uuid' })),
  locale: Nullable(
    Type.Union(LocaleSchema.anyOf, {
      description: "The language the user chose (PATCH /auth/me); null: the browser's, else the country's default",
    }),
  ),
  createdAt: Type.String({ format: 'date-time' }),
});
export type UserResponse = Static<typeof UserResponse>;

/** The columns toUserResponse needs. */
export const USER_COLUMNS = [
  'id',
  'email',
  'phone',
  'first_name',
  'last_name',
  'role',
  'is_email_verified',
  'is_phone_verified',
  'status',
  'country_id',
  'locale',
  'created_at',
] as const;

export type UserRow = Pick<Selectable<UsersTable>, (typeof USER_COLUMNS)[number]>;

export function toUserResponse(row: UserRow): UserResponse {
  return {
    id: row.id,
    email: row.email,
    phone: row.phone,
    firstName: row.first_name,
    lastName: row.last_name,
    role: row.role,
    isEmailVerified: row.is_email_verified,
    isPhoneVerified: row.is_phone_verified,
    status: row.status,
    countryId: row.country_id,
    locale: (row.locale as Locale | null) ?? null,
    createdAt: new Date(row.created_at).toISOString(),
  };
}
