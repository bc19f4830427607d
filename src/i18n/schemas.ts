// The locale as the API takes and gives it (contract section 27).
import { Type } from '@sinclair/typebox';
import { LOCALES } from '../shared/locales.js';

export const LocaleSchema = Type.Union(
  LOCALES.map((l) => Type.Literal(l)),
  { description: 'en (English), sw (Swahili) or fr (French)' },
);
