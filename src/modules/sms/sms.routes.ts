// GET /admin/sms (contract section 27): the SMS sent, newest first.
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { Nullable, errorResponses as errors } from '../../shared/schemas.js';

const SmsLogItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  sentAt: Type.String({ format: 'date-time' }),
  recipient: Type.String({ description: 'The number with its middle masked' }),
  template: Type.String({ description: 'Which message: code.LOGIN, tracking.CREATED, accountApproved…' }),
  locale: Type.String({ description: 'en, sw or fr' }),
  encoding: Type.Union([Type.Literal('GSM-7'), Type.Literal('UCS-2')]),
  segments: Type.Integer({ minimum: 1 }),
  status: Type.Union([Type.Literal('SENT'), Type.Literal('FAILED')]),
  text: Nullable(
    Type.String({ description: 'The text; null for a message holding a code or a tracking link (never stored)' }),
  ),
});

const SmsListQuery = Type.Object({ ...PaginationQuery.properties }, { additionalProperties: false });

export const smsModule: FeatureModule = async (app, ctx) => {
  const { sms } = ctx.services;
  app.get(
    '/admin/sms',
    {
      onRequest: ctx.guard.required(['ADMIN']),
      schema: {
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        summary: 'The SMS sent, newest first: masked recipient, template, locale, encoding and segments',
        querystring: SmsListQuery,
        response: { 200: pageSchema(SmsLogItem), ...errors(400, 401, 403) },
      },
    },
    async (request) => sms.list(request.query),
  );
};
