// Admin routes: accounts (list, read, approve, reject, suspend, reactivate, create).
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { pageSchema, PaginationQuery } from '../../shared/pagination.js';
import { Body, IdParams, Role, errorResponses as errors } from '../../shared/schemas.js';
import { AccountFields, RoleFields } from '../auth/auth.schemas.js';
import { AccountStatus, UserResponse } from '../auth/users.schemas.js';

const tags = ['admin'];
const security = [{ bearerAuth: [] }];

const ListUsersQuery = Type.Object(
  { role: Type.Optional(Role), status: Type.Optional(AccountStatus), ...PaginationQuery.properties },
  { additionalProperties: false },
);
const ReasonBody = Body({ reason: Type.String({ minLength: 1, maxLength: 500 }) });
const CreateUserBody = Body({
  ...AccountFields,
  phone: Type.String({ minLength: 1, maxLength: 32 }),
  role: Role,
  countryId: Type.Optional(Type.String({ format: 'uuid' })),
  ...RoleFields,
});
export const adminModule: FeatureModule = async (app, ctx) => {
  const { deps } = ctx;
  const { admin } = ctx.services;
  const onlyAdmin = ctx.guard.required(['ADMIN']);

  if (deps.config.auth.admin) {
    const bootstrap = deps.config.auth.admin;
    app.addHook('onReady', async () => {
      const result = await admin.ensureAdmin(bootstrap);
      if (result === 'created') deps.logger.info({ email: bootstrap.email }, 'created the bootstrap admin account');
    });
  }

  app.get(
    '/admin/users',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'List accounts, newest first (filter by role and status)',
        querystring: ListUsersQuery,
        response: { 200: pageSchema(UserResponse), ...errors(400, 401, 403) },
      },
    },
    async (request) => admin.listUsers(request.query),
  );

  app.get(
    '/admin/users/:id',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'One account',
        params: IdParams,
        response: { 200: UserResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (request) => admin.getUser(request.params.id),
  );

  app.post(
    '/admin/users',
    {
      onRequest: onlyAdmin,
      schema: {
        tags,
        security,
        summary: 'Create an account of any role (ADMIN included), ACTIVE at once',
        body: CreateUserBody,
        response: { 201: UserResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      reply.code(201);
      return admin.createUser({ ...request.body, status: 'ACTIVE' });
    },
  );

  const transitions = [
    ['approve', 'Approve a pending or rejected account (the user gets an SMS)', false],
    ['reject', 'Reject a pending account', true],
    ['suspend', 'Suspend an account (revokes all its sessions)', true],
    ['reactivate', 'Reactivate a suspended account', false],
  ] as const;
  for (const [action, summary, needsReason] of transitions) {
    app.post(
      `/admin/users/:id/${action}`,
      {
        onRequest: onlyAdmin,
        schema: {
          tags,
          security,
          summary,
          params: IdParams,
          ...(needsReason ? { body: ReasonBody } : {}),
          response: { 200: UserResponse, ...errors(400, 401, 403, 404, 409) },
        },
      },
      async (request) => {
        const reason = (request.body as { reason?: string } | undefined)?.reason;
        return admin.transition(request.auth.userId, request.params.id, action, reason);
      },
    );
  }
};
