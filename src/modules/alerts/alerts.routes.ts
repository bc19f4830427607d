// Routes of alerts (contract section 23), registered under /api by app.ts.
import type { FeatureModule } from '../../http/context.js';
import { IdParams, errorResponses as errors } from '../../shared/schemas.js';
import { AlertPage, AlertResponse, AlertsQuery } from './alerts.schemas.js';

const tags = ['alerts'];
const security = [{ bearerAuth: [] }];

export const alertsModule: FeatureModule = async (app, { services, guard }) => {
  const { alerts } = services;
  // Admins see every alert, a company its drivers' jobs', a business its own packages'; others 403.
  const onRequest = guard.required(['ADMIN', 'COMPANY', 'BUSINESS']);

  app.get(
    '/alerts',
    {
      onRequest,
      schema: {
        tags,
        security,
        summary:
          "Lateness alerts the caller may see, newest first (admins: all; a company: its drivers' jobs; a business: its own)",
        querystring: AlertsQuery,
        response: { 200: AlertPage, ...errors(400, 401, 403) },
      },
    },
    async (request) => alerts.list(request.auth, request.query),
  );

  for (const [action, summary] of [
    ['acknowledge', 'Acknowledge an alert (an audit row is written; a resolved alert: 409 ALERT_RESOLVED)'],
    ['resolve', 'Resolve an alert (an audit row is written; already resolved: 409 ALERT_RESOLVED)'],
  ] as const) {
    app.post(
      `/alerts/:id/${action}`,
      {
        onRequest,
        schema: {
          tags,
          security,
          summary,
          params: IdParams,
          response: { 200: AlertResponse, ...errors(400, 401, 403, 404, 409) },
        },
      },
      async (request) =>
        action === 'acknowledge'
          ? alerts.acknowledge(request.auth, request.params.id)
          : alerts.resolve(request.auth, request.params.id),
    );
  }
};
