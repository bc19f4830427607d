// Schemas of POST /optimizations: VROOM's problem in, VROOM's solution out (VROOM's docs/API.md; the
// problem's details are checked field by field in vroom.ts, which names the bad field).
import { Type } from '@sinclair/typebox';

const Item = Type.Unknown();
/** Seconds (VROOM's integers), from 0 to 2^40. */
const Seconds = Type.Integer({ minimum: 0, maximum: 2 ** 40 });
const Row = Type.Array(Seconds, { maxItems: 5000 });
const Matrix = Type.Array(Row, { maxItems: 5000 });

export const OptimizationBody = Type.Object(
  {
    jobs: Type.Optional(
      Type.Array(Item, {
        maxItems: 2000,
        description:
          'VROOM jobs: id, location or location_index, setup, service, delivery, pickup, skills, priority, time_windows',
      }),
    ),
    shipments: Type.Optional(
      Type.Array(Item, {
        maxItems: 1000,
        description: 'VROOM shipments: pickup and delivery steps, amount, skills, priority',
      }),
    ),
    vehicles: Type.Array(Item, {
      minItems: 1,
      maxItems: 500,
      description:
        'VROOM vehicles: id, start/end or start_index/end_index, capacity, skills, time_window, breaks, max_tasks, max_travel_time',
    }),
    matrices: Type.Optional(
      Type.Object(
        {
          car: Type.Object({
            durations: Matrix,
            distances: Type.Optional(Matrix),
          }),
        },
        { description: 'Custom matrices (seconds); without them, durations come from the router' },
      ),
    ),
    options: Type.Optional(
      Type.Object(
        {
          timeLimitMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 30000, description: 'Default 2000' })),
          maxIterations: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 100_000_000,
              description: 'At most OPTIMIZATION_MAX_ITERATIONS; no time limit applies then',
            }),
          ),
          seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Location = Type.Array(Type.Number(), { minItems: 2, maxItems: 2 });
const Amount = Type.Array(Type.Integer());

const Step = Type.Object({
  type: Type.Union(['start', 'job', 'pickup', 'delivery', 'break', 'end'].map((t) => Type.Literal(t))),
  id: Type.Optional(Type.Integer()),
  description: Type.Optional(Type.String()),
  location: Type.Optional(Location),
  location_index: Type.Optional(Type.Integer()),
  setup: Type.Optional(Type.Integer()),
  service: Type.Integer(),
  waiting_time: Type.Integer(),
  arrival: Type.Integer(),
  duration: Type.Integer(),
  load: Type.Optional(Amount),
  distance: Type.Optional(Type.Integer()),
});

const Route = Type.Object({
  vehicle: Type.Integer(),
  description: Type.Optional(Type.String()),
  cost: Type.Integer(),
  setup: Type.Optional(Type.Integer()),
  service: Type.Integer(),
  duration: Type.Integer(),
  waiting_time: Type.Integer(),
  priority: Type.Optional(Type.Integer()),
  distance: Type.Optional(Type.Integer()),
  steps: Type.Array(Step),
});

export const OptimizationSolution = Type.Object({
  code: Type.Integer({ description: '0: solved' }),
  summary: Type.Object({
    cost: Type.Integer(),
    routes: Type.Integer(),
    unassigned: Type.Integer(),
    setup: Type.Optional(Type.Integer()),
    service: Type.Integer(),
    duration: Type.Integer({ description: 'Total travel time (seconds)' }),
    waiting_time: Type.Integer(),
    priority: Type.Optional(Type.Integer()),
    distance: Type.Optional(Type.Integer()),
  }),
  unassigned: Type.Array(
    Type.Object({
      id: Type.Integer(),
      type: Type.Union(['job', 'pickup', 'delivery', 'shipment'].map((t) => Type.Literal(t))),
      description: Type.Optional(Type.String()),
      location: Type.Optional(Location),
    }),
  ),
  routes: Type.Array(Route),
});
