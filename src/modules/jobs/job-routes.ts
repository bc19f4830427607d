// Route helpers both kinds of job use: the optional body of an action, and one POST per step.
import type { TSchema } from '@sinclair/typebox';
import type { App } from '../../http/context.js';
import type { AuthGuard } from '../../http/authenticate.js';
import { stepOnce, type IdempotencyStore } from '../../http/idempotency.js';
import type { RecordAnswer } from '../../shared/record-answer.js';
import type { Role } from '../../db/schema.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';

/** Routes whose body is optional: no body at all means `{}` (then validated like any other). */
export const optionalBody = async (request: { body: unknown }) => {
  if (request.body === undefined || request.body === null) request.body = {};
};

/**
 * Registers `POST /<collection>/:id/<step>` actions that answer the job (200), once per
 * `Idempotency-Key` (contract section 1): `run` stores its answer with `record` in the step's transaction.
 */
export function jobSteps(
  app: App,
  guard: AuthGuard,
  options: { collection: string; tags: string[]; response: TSchema; idempotency: IdempotencyStore },
) {
  const security = [{ bearerAuth: [] }];
  return (
    path: string,
    summary: string,
    run: (id: string, request: any, record: RecordAnswer | undefined) => Promise<unknown>,
    roles: Role[],
    body?: TSchema,
    /** The step may claim its key in its own statement; `replayRow` presents the row it stored. */
    replayRow?: (row: string, request: any) => unknown,
  ) =>
    app.route({
      method: 'POST',
      url: `/${options.collection}/:id/${path}`,
      onRequest: guard.required(roles),
      preValidation: optionalBody,
      schema: {
        tags: options.tags,
        summary: `${summary} (honours Idempotency-Key)`,
        security,
        params: IdParams,
        ...(body ? { body } : {}),
        response: { 200: options.response, ...errors(400, 401, 403, 404, 409, 422) },
      } as any,
      handler: async (request: any, reply: any) =>
        stepOnce(
          options.idempotency,
          request,
          reply,
          `POST /${options.collection}/${request.params.id}/${path}`,
          200,
          (record) => run(request.params.id, request, record),
          replayRow && { render: (row: string) => replayRow(row, request) },
        ),
    });
}
