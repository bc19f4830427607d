// Request and response schemas of the auth routes.
import { Type } from '@sinclair/typebox';
import { LocaleSchema } from '../../i18n/schemas.js';
import { Body, Email, Nullable, OrderType, Uuid, VehicleType } from '../../shared/schemas.js';
import { UserResponse } from './users.schemas.js';

const PhoneText = Type.String({ minLength: 1, maxLength: 32, description: 'E.164: + and digits, e.g. +254712345678' });
const Code = Type.String({ pattern: '^[0-9]{6}$', description: 'the 6-digit code from the SMS' });
export const NewPassword = Type.String({
  minLength: 8,
  maxLength: 128,
  description: '8 to 128 characters, not a common password',
});
const Name = Type.String({ minLength: 1, maxLength: 100 });

export const SendRegisterOtpBody = Body({ phone: PhoneText });

/** Role profile fields, shared by registration and admin creation. */
export const RoleFields = {
  businessName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'BUSINESS (required)' })),
  businessAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'BUSINESS' })),
  companyName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'COMPANY (required)' })),
  vehicleType: Type.Optional({ ...VehicleType, description: 'DRIVER (required)' }),
  vehiclePlate: Type.Optional(Type.String({ minLength: 1, maxLength: 20, description: 'DRIVER (required)' })),
  companyId: Type.Optional({ ...Uuid, description: 'DRIVER: an ACTIVE company' }),
  serviceTypes: Type.Optional(
    Type.Array(OrderType, { minItems: 1, maxItems: 2, uniqueItems: true, description: 'DRIVER; default both' }),
  ),
};

export const AccountFields = {
  email: Email,
  password: NewPassword,
  firstName: Name,
  lastName: Name,
};

export const RegisterBody = Body({
  sessionId: Uuid,
  phone: PhoneText,
  code: Code,
  ...AccountFields,
  role: Type.Union([
    Type.Literal('CUSTOMER'),
    Type.Literal('DRIVER'),
    Type.Literal('BUSINESS'),
    Type.Literal('COMPANY'),
  ]),
  countryId: Uuid,
  rememberMe: Type.Optional(Type.Boolean()),
  ...RoleFields,
});

export const LoginBody = Body({
  identifier: Type.String({ minLength: 1, maxLength: 254, description: 'e-mail or E.164 phone' }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  rememberMe: Type.Optional(Type.Boolean({ description: 'longer refresh token lifetime' })),
});

// Contract section 27: one of en, sw, fr (anything else: 400); null gives the choice back to the browser.
export const UpdateMeBody = Body({ locale: Type.Optional(Nullable(LocaleSchema)) }, { minProperties: 1 });
export const CodeSessionBody = Body({ sessionId: Uuid, phone: PhoneText });
export const VerifyOtpBody = Body({ sessionId: Uuid, phone: PhoneText, code: Code });
export const RefreshTokenBody = Body({ refreshToken: Type.String({ minLength: 1, maxLength: 200 }) });
export const LogoutBody = Body({
  refreshToken: RefreshTokenBody.properties.refreshToken,
  pushEndpoint: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        "The browser's push endpoint on this phone: the caller's subscription with it is deleted with the session",
    }),
  ),
});
export const ForgotPasswordBody = Body({ identifier: Type.String({ minLength: 1, maxLength: 254 }) });
export const ResetPasswordBody = Body({ sessionId: Uuid, phone: PhoneText, code: Code, newPassword: NewPassword });
export const ChangePasswordBody = Body({
  currentPassword: Type.String({ minLength: 1, maxLength: 1024 }),
  newPassword: NewPassword,
});

export const CodeSessionResponse = Type.Object({
  success: Type.Boolean(),
  sessionId: Type.String({ format: 'uuid' }),
  phone: Type.String(),
  message: Type.String(),
});

export const RegisterResponse = Type.Object({
  success: Type.Boolean(),
  user: UserResponse,
  message: Type.String(),
  accessToken: Type.Optional(Type.String()),
  refreshToken: Type.Optional(Type.String()),
});

export const VerifyOtpResponse = Type.Object({
  success: Type.Boolean(),
  accessToken: Type.String(),
  refreshToken: Type.String(),
  user: UserResponse,
});

export const RefreshResponse = Type.Object({ success: Type.Boolean(), accessToken: Type.String() });
