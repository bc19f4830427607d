// POST /optimizations (contract section 25): a VROOM problem in, a VROOM solution out. Admins and
// companies; its own body limit (OPTIMIZATION_MAX_BODY), the one beside proof uploads.
import type { FeatureModule } from '../../http/context.js';
import { errorResponses as errors } from '../../shared/schemas.js';
import { OptimizationBody, OptimizationSolution } from './optimizer.schemas.js';

export const optimizerModule: FeatureModule = async (app, { services, guard, deps }) => {
  app.post(
    '/optimizations',
    {
      onRequest: guard.required(['ADMIN', 'COMPANY']),
      bodyLimit: deps.config.optimizer.maxBodyBytes,
      schema: {
        tags: ['optimization'],
        summary:
          "Solve a routing problem in VROOM's shape (admins, companies): jobs, shipments, vehicles, optional matrices; options.timeLimitMs (default 2000, at most 30000), options.maxIterations (then no time limit), options.seed. 400 INVALID_PROBLEM names the field; 503 OPTIMIZER_BUSY; with OPTIMIZER_URL, 502 OPTIMIZER_FAILED / 504 OPTIMIZER_TIMEOUT",
        security: [{ bearerAuth: [] }],
        body: OptimizationBody,
        response: { 200: OptimizationSolution, ...errors(400, 401, 403, 413, 502, 503, 504) },
      },
    },
    async (request) => services.optimizer.optimize(request.body),
  );
};
