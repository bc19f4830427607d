// What a job paid by M-Pesa shows of its payment (contract section 26).
import { Type } from '@sinclair/typebox';

/** A job paid by M-Pesa (section 26): where its payment stands. */
export const JobPayment = Type.Object(
  {
    method: Type.Literal('MPESA'),
    phone: Type.String({ description: 'The payer (E.164)' }),
    state: Type.Union(
      ['PENDING', 'PAID', 'FAILED', 'CANCELLED', 'REFUNDED'].map((s) => Type.Literal(s)),
      {
        description:
          'PENDING: the prompt is on the phone (or being sent); PAID; FAILED: declined, cancelled or unanswered (POST …/payment/retry sends a new prompt); CANCELLED: unpaid in MPESA_PAYMENT_TIMEOUT, the package cancelled; REFUNDED: paid, then cancelled or failed, and sent back by B2C',
      },
    ),
    receipt: Type.Optional(Type.String({ description: 'The M-Pesa receipt, once paid' })),
    amount: Type.Integer({ description: 'What is charged, in minor units (whole shillings)' }),
    currency: Type.String(),
    failure: Type.Optional(Type.String({ description: "Why the last prompt failed (Daraja's ResultDesc)" })),
  },
  { additionalProperties: false },
);
