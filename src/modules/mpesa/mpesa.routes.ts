// M-Pesa routes (contract section 26): sending a payout batch by B2C, and Daraja's callbacks. The
// callbacks carry a per-request token in the path (never logged: request-logger redacts `:token`),
// are outside the global per-IP limit and limited per token instead, are stored before the 200
// and worked after it.
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureModule } from '../../http/context.js';
import { createKeyedLimiter } from '../../http/rate-limit.js';
import { AppError } from '../../shared/errors.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import type { MpesaCallbackKind } from '../../db/tables/mpesa.js';
import { CALLBACK_ACK } from './daraja-callbacks.js';
import { MpesaB2cPayouts } from './b2c-payouts.service.js';

const SendResponse = Type.Object(
  {
    lines: Type.Integer({ description: 'Lines handed to M-Pesa (each one or more B2C payments)' }),
    payments: Type.Integer({ description: 'B2C payments queued (a line above MPESA_B2C_MAX_AMOUNT is several)' }),
    belowMinimum: Type.Integer({
      description:
        'Lines under MPESA_B2C_MIN_AMOUNT (or without a Kenyan number): FAILED, the amount back on the balance',
    }),
  },
  { additionalProperties: false },
);
const TokenParams = Type.Object(
  { token: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) },
  { additionalProperties: false },
);
const Ack = Type.Object({ ResultCode: Type.Integer(), ResultDesc: Type.String() });
const CallbackBody = Type.Unknown();

/** The callback routes, by their Fastify URL (rate-limit.ts keeps them out of the global per-IP limit). */
export const MPESA_CALLBACK_ROUTES: [string, MpesaCallbackKind][] = [
  ['/hooks/daraja/b2c/:token/result', 'B2C_RESULT'],
  ['/hooks/daraja/b2c/:token/timeout', 'B2C_TIMEOUT'],
  ['/hooks/daraja/status/:token/result', 'STATUS_RESULT'],
  ['/hooks/daraja/status/:token/timeout', 'STATUS_TIMEOUT'],
];

export const mpesaModule: FeatureModule = async (app, { services, guard, deps }) => {
  const b2c = services.mpesaB2c;
  app.post(
    '/admin/payouts/:id/send',
    {
      onRequest: guard.required(['ADMIN']),
      schema: {
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        summary:
          "Send a KES batch's OPEN lines by M-Pesa B2C (whole shillings; under the minimum left on the balance; above the maximum split). 409 MPESA_DISABLED without M-Pesa; sending again restarts a batch stopped by an insufficient float",
        params: IdParams,
        response: { 202: SendResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      if (!b2c) throw new AppError(409, 'MPESA_DISABLED', 'M-Pesa is not configured (MPESA_CONSUMER_KEY)');
      return reply.code(202).send(await b2c.send(request.params.id));
    },
  );

  if (!b2c) return;
  const limit = deps.config.mpesa?.callbackLimit;
  const perToken = limit ? createKeyedLimiter(deps, 'mpesa-callback', limit) : undefined;
  for (const [url, kind] of MPESA_CALLBACK_ROUTES) {
    app.post(
      url,
      {
        schema: {
          tags: ['mpesa'],
          summary: `Daraja's ${kind.toLowerCase().replace('_', ' ')} callback (per-request token; stored before the 200)`,
          params: TokenParams,
          body: CallbackBody,
          response: { 200: Ack, ...errors(404, 429) },
        },
      },
      async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
        const tokenHash = MpesaB2cPayouts.hashToken(request.params.token);
        if (perToken && !(await perToken(tokenHash)).allowed)
          throw new AppError(429, 'RATE_LIMITED', 'Too many callbacks for this request');
        const id = await b2c.receive(kind, request.params.token, request.body);
        if (!id) throw new AppError(404, 'NOT_FOUND', 'Not found');
        // Committed: answer, then work it (the loop works it if this process stops first).
        setImmediate(() => void b2c.work(id).catch((err) => request.log.warn({ err }, 'M-Pesa callback work failed')));
        return reply.code(200).send(CALLBACK_ACK);
      },
    );
  }
};
