// GET /drivers/me/earnings (JSON or CSV) and GET /companies/me/earnings (contract section 21).
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { CompanyEarningsResponse, DriverEarningsResponse, EarningsQuery } from './earnings.schemas.js';
import { driverEarningsCsv } from './earnings.service.js';
import { sendCsv, wantsCsv } from '../../http/csv-download.js';

const security = [{ bearerAuth: [] }];

export const earningsModule: FeatureModule = async (app, { services, guard }) => {
  const { earnings } = services;

  app.get(
    '/drivers/me/earnings',
    {
      onRequest: guard.required(['DRIVER']),
      schema: {
        tags: ['drivers'],
        security,
        summary:
          "The driver's jobs booked in [from, to) (default today UTC until now, at most 92 days) with earnings, tips and cash collected, the totals and the current balance (CSV with Accept: text/csv or format=csv)",
        querystring: EarningsQuery,
        response: {
          200: {
            description: 'The earnings report',
            content: {
              'application/json': { schema: DriverEarningsResponse },
              'text/csv': {
                schema: {
                  type: 'string',
                  description:
                    'RFC 4180 with a header row: a JOB row per job, a TOTAL row per currency, a BALANCE row per currency; amounts in minor units',
                },
              },
            },
          },
          ...errors(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const report = await earnings.driver(request.auth.userId, request.query);
      if (!wantsCsv(request)) return report;
      const name = `earnings-${report.from.slice(0, 10)}-${report.to.slice(0, 10)}.csv`;
      return sendCsv(reply, name, driverEarningsCsv(report));
    },
  );

  app.get(
    '/companies/me/earnings',
    {
      onRequest: guard.required(['COMPANY']),
      schema: {
        tags: ['companies'],
        security,
        summary:
          "The company's drivers, each with the totals booked in [from, to) (default today UTC until now, at most 92 days) and the current balance",
        querystring: EarningsQuery,
        response: { 200: CompanyEarningsResponse, ...errors(400, 401, 403) },
      },
    },
    async (request) => earnings.company(request.auth.userId, { from: request.query.from, to: request.query.to }),
  );
};
