// VROOM's problem and solution shapes (VROOM's docs/API.md) and ProblemError, the fault that names its field.
export type Location = [number, number];
export type TimeWindow = [number, number];

export interface VroomJob {
  id: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup?: number;
  service?: number;
  delivery?: number[];
  pickup?: number[];
  skills?: number[];
  priority?: number;
  time_windows?: TimeWindow[];
}

export interface VroomShipmentStep {
  id: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup?: number;
  service?: number;
  time_windows?: TimeWindow[];
}

export interface VroomShipment {
  pickup: VroomShipmentStep;
  delivery: VroomShipmentStep;
  amount?: number[];
  skills?: number[];
  priority?: number;
}

export interface VroomBreak {
  id: number;
  description?: string;
  time_windows?: TimeWindow[];
  service?: number;
}

export interface VroomVehicle {
  id: number;
  description?: string;
  profile?: string;
  start?: Location;
  start_index?: number;
  end?: Location;
  end_index?: number;
  capacity?: number[];
  skills?: number[];
  time_window?: TimeWindow;
  breaks?: VroomBreak[];
  max_tasks?: number;
  max_travel_time?: number;
}

export interface VroomProblem {
  jobs?: VroomJob[];
  shipments?: VroomShipment[];
  vehicles: VroomVehicle[];
  matrices?: Record<string, { durations: number[][]; distances?: number[][] }>;
}

export interface VroomStep {
  type: 'start' | 'job' | 'pickup' | 'delivery' | 'break' | 'end';
  id?: number;
  description?: string;
  location?: Location;
  location_index?: number;
  setup: number;
  service: number;
  waiting_time: number;
  arrival: number;
  duration: number;
  load?: number[];
  distance?: number;
}

export interface VroomRoute {
  vehicle: number;
  description?: string;
  cost: number;
  setup: number;
  service: number;
  duration: number;
  waiting_time: number;
  priority: number;
  distance?: number;
  steps: VroomStep[];
}

export interface VroomSolution {
  code: number;
  summary: {
    cost: number;
    routes: number;
    unassigned: number;
    setup: number;
    service: number;
    duration: number;
    waiting_time: number;
    priority: number;
    distance?: number;
  };
  unassigned: { id: number; type: 'job' | 'pickup' | 'delivery'; description?: string; location?: Location }[];
  routes: VroomRoute[];
}

/** A fault in a problem, named by its field (a 400 at the HTTP edge). */
export class ProblemError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** The largest time a problem may hold (seconds). */
export const MAX_TIME = 2 ** 40;
