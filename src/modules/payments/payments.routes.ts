// M-Pesa collections' routes (contract section 26): a new STK Push prompt on request, and Daraja's
// STK and refund callbacks (a per-request token in the path, never logged; outside the global per-IP
// limit and limited per token; stored before the 200 and worked after).
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FeatureModule } from '../../http/context.js';
import { createKeyedLimiter } from '../../http/rate-limit.js';
import { AppError } from '../../shared/errors.js';
import { Body, IdParams, Phone, errorResponses as errors } from '../../shared/schemas.js';
import { JobPayment } from './payments.schemas.js';
import { CALLBACK_ACK } from '../mpesa/daraja-callbacks.js';
import { MpesaB2cPayouts } from '../mpesa/b2c-payouts.service.js';

const TokenParams = Type.Object(
  { token: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$' }) },
  { additionalProperties: false },
);
const Ack = Type.Object({ ResultCode: Type.Integer(), ResultDesc: Type.String() });
const RetryBody = Body({
  phone: Type.Optional(
    Type.String({ ...Phone, description: 'Another Kenyan M-Pesa number for this prompt (default: the last one)' }),
  ),
});

/** The callback routes of collections, by their Fastify URL (rate-limit.ts keeps them out of the global per-IP limit). */
export const STK_CALLBACK_ROUTES = [
  '/hooks/daraja/stk/:token/result',
  '/hooks/daraja/refund/:token/result',
  '/hooks/daraja/refund/:token/timeout',
] as const;

export const paymentsModule: FeatureModule = async (app, { services, guard, deps }) => {
  const stk = services.stk;
  app.post(
    '/packages/:id/payment/retry',
    {
      onRequest: guard.required(['CUSTOMER', 'ADMIN']),
      schema: {
        tags: ['packages'],
        security: [{ bearerAuth: [] }],
        summary:
          'Send a new M-Pesa prompt for a package whose payment FAILED (its creator or an admin). 409 PAYMENT_NOT_RETRYABLE once paid, cancelled or no longer waiting; 409 MPESA_PROMPT_PENDING while the last prompt is still on the phone',
        params: IdParams,
        body: Type.Optional(RetryBody),
        response: { 202: JobPayment, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      if (!stk) throw new AppError(409, 'MPESA_DISABLED', 'M-Pesa is not configured (MPESA_CONSUMER_KEY)');
      const body = request.body as { phone?: string } | undefined;
      return reply.code(202).send(await stk.retry('PACKAGE', request.params.id, request.auth, body?.phone));
    },
  );

  if (!stk) return;
  const limit = deps.config.mpesa?.callbackLimit;
  const perToken = limit ? createKeyedLimiter(deps, 'mpesa-stk-callback', limit) : undefined;
  for (const url of STK_CALLBACK_ROUTES) {
    const kind = url.includes('/stk/') ? 'STK_RESULT' : url.endsWith('/timeout') ? 'REFUND_TIMEOUT' : 'REFUND_RESULT';
    app.post(
      url,
      {
        schema: {
          tags: ['mpesa'],
          summary: `Daraja's ${kind.toLowerCase().replace('_', ' ')} callback (per-request token; stored before the 200)`,
          params: TokenParams,
          body: Type.Unknown(),
          response: { 200: Ack, ...errors(404, 429) },
        },
      },
      async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
        const tokenHash = MpesaB2cPayouts.hashToken(request.params.token);
        if (perToken && !(await perToken(tokenHash)).allowed)
          throw new AppError(429, 'RATE_LIMITED', 'Too many callbacks for this request');
        const id =
          kind === 'STK_RESULT'
            ? await stk.receive(request.params.token, request.body)
            : await stk.refunds.receive(kind, request.params.token, request.body);
        if (!id) throw new AppError(404, 'NOT_FOUND', 'Not found');
        // Committed: answer, then work it (the loop works it if this process stops first).
        setImmediate(() => void stk.work(id).catch((err) => request.log.warn({ err }, 'M-Pesa callback work failed')));
        return reply.code(200).send(CALLBACK_ACK);
      },
    );
  }
};
