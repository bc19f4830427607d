// What every feature module receives when it registers its routes.
import type {
  FastifyInstance,
  FastifyBaseLogger,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthGuard } from './authenticate.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * The http layer declares only its own part; the composition root (app.ts) adds the connections and
 * the services by declaration merging, so that http/ imports nothing above it.
 */
export interface ModuleContext {
  guard: AuthGuard;
}

export type FeatureModule = (app: App, ctx: ModuleContext) => Promise<void> | void;

/** 204 with no payload at all (not `null`, which would be serialized and stripped again). */
export const noContent = <T>(reply: { code(status: 204): { send(payload: never): T } }): T =>
  reply.code(204).send(undefined as never);

/** JSON text the route already has, sent as it is: a test must hold it equal to the 200 schema's output. */
export const sendJsonText = <T>(reply: { type(contentType: string): { send(payload: never): T } }, json: string): T =>
  reply.type('application/json; charset=utf-8').send(json as never);
