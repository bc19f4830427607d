// Builds the Fastify app from config and deps; never listens.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { perProcessWork, runLoops, sharedWork } from './background.js';
import type { Deps } from './deps.js';
import type { App, FeatureModule, ModuleContext } from './http/context.js';
import { errorBody, registerErrorHandling, SERVICE_UNAVAILABLE } from './http/errors.js';
import { registerRateLimits } from './http/rate-limit.js';
import { OneLinePerRequest, requestLogger, serializeRequest } from './http/request-logger.js';
import { lazySerializerFactory, validatorCompiler } from './http/validation.js';
import { registerWebConsole } from './http/web-console.js';
import { completeOpenApi } from './http/openapi.js';
import { coalesceWrites } from './http/write-coalescing.js';
import { noStoreForCredentials } from './http/no-store.js';
import { strictTransportSecurity } from './http/hsts.js';
import { allowLongerUploads } from './http/upload-timeout.js';
import { UUID_PATTERN } from './shared/errors.js';
import { ErrorResponse } from './shared/schemas.js';
import { optimizerModule } from './modules/optimizer/optimizer.routes.js';
import { healthModule } from './modules/health/health.routes.js';
import { countriesModule, countryAdminModule } from './modules/countries/countries.routes.js';
import { authModule } from './modules/auth/auth.routes.js';
import { adminModule } from './modules/admin/admin.routes.js';
import { driversModule } from './modules/drivers/drivers.routes.js';
import { profilesModule } from './modules/profiles/profiles.routes.js';
import { routesModule } from './modules/routes/routes.routes.js';
import { matchingModule } from './modules/matching/matching.routes.js';
import { driverJobsModule } from './modules/jobs/driver-jobs.routes.js';
import { packagesModule } from './modules/packages/packages.routes.js';
import { ridesModule } from './modules/rides/rides.routes.js';
import { webhooksModule } from './modules/webhooks/webhooks.routes.js';
import { dispatchModule } from './modules/dispatch/dispatch.routes.js';
import type { Services } from './services.js';
import { pricingModule } from './modules/pricing/pricing.routes.js';
import { trackingModule } from './modules/tracking/tracking.routes.js';
import { ledgerModule } from './modules/ledger/ledger.routes.js';
import { payoutsModule } from './modules/payouts/payouts.routes.js';
import { pushModule } from './modules/push/push.routes.js';
import { invoicesModule } from './modules/invoices/invoices.routes.js';
import { earningsModule } from './modules/earnings/earnings.routes.js';
import { driverEarningsModule } from './modules/earnings/driver-earnings.routes.js';
import { deviceKeysModule } from './modules/device-keys/device-keys.routes.js';
import { ratingsModule } from './modules/ratings/ratings.routes.js';
import { geocodingModule } from './modules/geocoding/geocoding.routes.js';
import { proofModule } from './modules/proof/proof.routes.js';
import { mpesaModule } from './modules/mpesa/mpesa.routes.js';
import { paymentsModule } from './modules/payments/payments.routes.js';
import { recurringModule } from './modules/recurring/recurring.routes.js';
import { alertsModule } from './modules/alerts/alerts.routes.js';
import { smsModule } from './modules/sms/sms.routes.js';

declare module './http/context.js' {
  interface ModuleContext {
    deps: Deps;
    services: Services;
  }
}

const API_MODULES: FeatureModule[] = [
  countriesModule,
  authModule,
  adminModule,
  smsModule,
  countryAdminModule,
  driversModule,
  profilesModule,
  routesModule,
  matchingModule,
  packagesModule,
  ridesModule,
  driverJobsModule,
  webhooksModule,
  dispatchModule,
  pricingModule,
  trackingModule,
  ledgerModule,
  payoutsModule,
  pushModule,
  invoicesModule,
  earningsModule,
  driverEarningsModule,
  deviceKeysModule,
  ratingsModule,
  geocodingModule,
  proofModule,
  optimizerModule,
  mpesaModule,
  paymentsModule,
  recurringModule,
  alertsModule,
];

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Runs the per-process background work and, by default, the shared work (background.ts). */
export async function buildApp({ deps, services }: { deps: Deps; services: Services }): Promise<App> {
  const { config } = deps;
  const app = Fastify({
    // Fastify's request serializer, with the secrets clients put in URLs redacted (access_token, tracking links).
    loggerInstance: deps.logger.child({}, { serializers: { req: serializeRequest } }) as FastifyBaseLogger,
    // Fastify trusts nothing for a bare hop count (it cannot check the peer): the count is applied here,
    // the socket's peer being hop 0, so TRUST_PROXY=1 takes the address the one proxy in front added.
    trustProxy:
      typeof config.server.trustProxy === 'number' ? trustHops(config.server.trustProxy) : config.server.trustProxy,
    bodyLimit: 1024 * 1024,
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } },
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    logController: new OneLinePerRequest({ requestIdLogLabel: 'requestId' } as ConstructorParameters<
      typeof OneLinePerRequest
    >[0]),
    childLoggerFactory: requestLogger as never,
    // Our own 503 while closing (below), in the error shape.
    return503OnClosing: false,
    // Slow clients (slowloris): Node answers 408 and closes a request not received in time. Once
    // received (a WebSocket upgraded, an SSE stream answering), these timeouts no longer apply.
    requestTimeout: config.server.requestTimeoutMs,
    keepAliveTimeout: config.server.keepAliveTimeoutMs,
    http: {
      requestTimeout: config.server.requestTimeoutMs,
      headersTimeout: config.server.headersTimeoutMs,
      // Node checks these deadlines on an interval (30 s by default), which would stretch them.
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.server.headersTimeoutMs / 4)),
    },
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Connections beyond the cap are closed at once, before they cost a file descriptor for long.
  app.server.maxConnections = config.server.maxConnections;
  // The proof upload's own PROOF_UPLOAD_TIMEOUT instead of REQUEST_TIMEOUT (http/upload-timeout.ts).
  allowLongerUploads(app.server);

  app.setValidatorCompiler(validatorCompiler);
  // JSON only: without this, text/plain bodies would reach validation instead of getting a 415.
  app.removeContentTypeParser('text/plain');
  // Many clients send `Content-Type: application/json` on every request, body or not: an empty body
  // is no body (body-less actions then work, and a route that needs one says "body must be object").
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    body === '' ? done(null, undefined) : parseJson(request, body as string, done),
  );
  app.addSchema(ErrorResponse);
  const consolePage = await registerWebConsole(app as unknown as App, config);
  registerErrorHandling(app, {
    onDatabaseUnavailable: (err) => deps.database.availability.requestFailed(err),
    consolePage,
  });

  // Requests that still arrive while closing (on a connection already open) are refused, so that the
  // client retries on another instance.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // These run on every request: callback hooks, which cost less than async ones.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    strictTransportSecurity(request, reply);
    if (!closing) return done();
    reply
      .code(503)
      .header('connection', 'close')
      .send(errorBody(503, 'The server is shutting down; try again', SERVICE_UNAVAILABLE));
  });
  // Ids in paths are used as given (cache keys, webhook payloads): make an upper-case UUID the same id.
  app.addHook('preValidation', (request, _reply, done) => {
    const params = request.params as Record<string, unknown> | undefined;
    if (params) {
      for (const key in params) {
        const value = params[key];
        if (typeof value === 'string' && /[A-F]/.test(value) && UUID_PATTERN.test(value))
          params[key] = value.toLowerCase();
      }
    }
    done();
  });
  // One line per request is written when it completes (OneLinePerRequest): one that never completes
  // says so here instead.
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info({ req: request }, 'request aborted');
    done();
  });
  noStoreForCredentials(app);
  coalesceWrites(app);
  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics.http.observe(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Ride-hailing and package delivery API',
        version: '0.1.0',
        description: 'One HTTP API for customer, driver, business, company and admin apps and integrators.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              'The access token from POST /api/auth/login/verify-otp: a JWT (HS256 only, exp, iss and aud checked, as RFC8725 advises).',
          },
          deviceKey: {
            type: 'apiKey',
            in: 'query',
            name: 'id',
            description:
              "A driver's device key for Traccar Client (POST /api/drivers/me/device-keys), as the OsmAnd protocol sends it: id (or deviceid, or device_id in the JSON body). Stored hashed, never logged.",
          },
        },
      },
    },
    transformObject: (documentObject) =>
      completeOpenApi((documentObject as { openapiObject: Record<string, any> }).openapiObject) as never,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  const { guard } = services;
  const ctx: ModuleContext = { deps, services, guard };
  const background = runLoops([
    ...perProcessWork(services),
    ...sharedWork(deps, services, { webhookWorker: config.webhooks.workerInProcess }),
  ]);
  app.addHook('onReady', () => background.start());
  app.addHook('onClose', async () => {
    await background.stop();
  });

  await app.register(async (root) => {
    await healthModule(root as App, ctx);
  });

  await app.register(
    async (api) => {
      await registerRateLimits(api as App, ctx);
      api.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      for (const register of API_MODULES) {
        await api.register(async (scope) => register(scope as App, ctx));
      }
    },
    { prefix: '/api' },
  );

  return app;
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}
