// One driver's earnings report for an admin (any driver) and for a company (its own drivers):
// GET /admin/drivers/:driverId/earnings and GET /companies/me/drivers/:driverId/earnings, the same
// JSON or CSV as GET /drivers/me/earnings gives the driver (contract section 21).
import { Type } from '@sinclair/typebox';
import type { FeatureModule } from '../../http/context.js';
import { Uuid, errorResponses as errors } from '../../shared/schemas.js';
import { DriverEarningsResponse, EarningsQuery } from './earnings.schemas.js';
import { driverEarningsCsv } from './earnings.service.js';
import { sendCsv, wantsCsv } from '../../http/csv-download.js';

const security = [{ bearerAuth: [] }];
const DriverParams = Type.Object({ driverId: Uuid }, { additionalProperties: false });
const reportResponses = {
  200: {
    description: 'The earnings report, as the driver gets it from GET /drivers/me/earnings',
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
  ...errors(400, 401, 403, 404),
};
const period =
  'booked in [from, to) (default today UTC until now, at most 92 days) with earnings, tips and cash collected, the totals and the current balance (CSV with Accept: text/csv or format=csv)';

export const driverEarningsModule: FeatureModule = async (app, { services, guard }) => {
  const reports = services.driverEarnings;
  const routes = [
    {
      url: '/admin/drivers/:driverId/earnings',
      role: 'ADMIN',
      tags: ['admin'],
      summary: `Any driver's jobs ${period}`,
    },
    {
      url: '/companies/me/drivers/:driverId/earnings',
      role: 'COMPANY',
      tags: ['companies'],
      summary: `One of the company's drivers' jobs ${period}; another company's driver is 404`,
    },
  ] as const;

  for (const route of routes) {
    app.get(
      route.url,
      {
        onRequest: guard.required([route.role]),
        schema: {
          tags: [...route.tags],
          security,
          summary: route.summary,
          params: DriverParams,
          querystring: EarningsQuery,
          response: reportResponses,
        },
      },
      async (request, reply) => {
        const report = await reports.forViewer(request.auth, request.params.driverId, request.query);
        if (!wantsCsv(request)) return report;
        const name = `earnings-${report.driverId}-${report.from.slice(0, 10)}-${report.to.slice(0, 10)}.csv`;
        return sendCsv(reply, name, driverEarningsCsv(report));
      },
    );
  }
};
