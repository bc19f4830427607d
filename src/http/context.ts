// What every feature module receives when it registers its routes.
import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.js';
import type { Services } from '../services.js';
import type { AuthGuard } from './authenticate.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface ModuleContext {
  deps: Deps;
  services: Services;
  guard: AuthGuard;
}

/** A feature module: registers its routes (under /api) and its lifecycle hooks. */
export type FeatureModule = (app: App, ctx: ModuleContext) => Promise<void> | void;

/**
 * Answers 204 with no body. Sending no payload at all (rather than `null`, which the route's 204
 * schema would serialize to "null" for Fastify to strip again) skips serialization: the position
 * report, a hot route, answers this way.
 */
export const noContent = <T>(reply: { code(status: 204): { send(payload: never): T } }): T => reply.code(204).send(undefined as never);

/**
 * Answers with JSON text the route already has (built by PostgreSQL, or from remembered pieces):
 * sent as it is, so the route's 200 schema documents it but does not serialize it. A test must hold
 * the text equal to what the schema would produce.
 */
export const sendJsonText = <T>(reply: { type(contentType: string): { send(payload: never): T } }, json: string): T =>
  reply.type('application/json; charset=utf-8').send(json as never);
