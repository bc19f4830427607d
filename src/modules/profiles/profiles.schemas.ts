// Request and response schemas of the businesses' and companies' profile routes.
import { Type } from '@sinclair/typebox';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

export const BusinessResponse = Type.Object({
  id: Uuid,
  businessName: Type.String(),
  businessAddress: Nullable(Type.String()),
  email: Type.String(),
  phone: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  countryId: Nullable(Uuid),
  status: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export const PatchBusinessBody = Body(
  { businessName: Type.Optional(Name), businessAddress: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) },
  { minProperties: 1 },
);

export const CompanyResponse = Type.Object({
  id: Uuid,
  companyName: Type.String(),
  email: Type.String(),
  phone: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  countryId: Nullable(Uuid),
  status: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
});
export const PatchCompanyBody = Body({ companyName: Name });
