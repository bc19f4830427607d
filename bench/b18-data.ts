// Solomon (VRPTW) and Li & Lim (PDPTW) instances as VROOM problems, converted as VROOM's benchmark
// scripts do (vroom-scripts/benchmarks): Euclidean distances, windows and service times × 1000,
// rounded (CUSTOM_PRECISION = 1000). Data: bench/data/vrp/ (README there).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { VroomProblem } from '../src/modules/optimizer/vroom.js';

export const DATA = path.join(path.dirname(fileURLToPath(import.meta.url)), 'data', 'vrp');
const P = 1000;

function matrix(xy: [number, number][]): number[][] {
  return xy.map((a) => xy.map((b) => Math.round(P * Math.hypot(a[0] - b[0], a[1] - b[1]))));
}

export function solomonNames(): string[] {
  return readdirSync(path.join(DATA, 'solomon'))
    .filter((f) => f.endsWith('.txt'))
    .map((f) => f.slice(0, -4))
    .sort();
}

export function solomon(name: string): VroomProblem {
  const lines = readFileSync(path.join(DATA, 'solomon', `${name}.txt`), 'utf8').split('\n');
  const vline = lines.findIndex((l) => /NUMBER\s+CAPACITY/.test(l));
  const [vehicles, capacity] = lines[vline + 1].trim().split(/\s+/).map(Number);
  const rows = lines
    .slice(vline + 2)
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter((r) => r.length === 7 && r.every((x) => Number.isFinite(x)));
  const xy = rows.map((r) => [r[1], r[2]] as [number, number]);
  const depot = rows[0];
  return {
    vehicles: Array.from({ length: vehicles }, (_, i) => ({
      id: i,
      start_index: 0,
      end_index: 0,
      capacity: [capacity],
      time_window: [P * depot[4], P * depot[5]] as [number, number],
    })),
    jobs: rows.slice(1).map((r, i) => ({
      id: r[0],
      location_index: i + 1,
      service: P * r[6],
      delivery: [r[3]],
      time_windows: [[P * r[4], P * r[5]] as [number, number]],
    })),
    matrices: { car: { durations: matrix(xy) } },
  };
}

export function liLimNames(): string[] {
  return readdirSync(path.join(DATA, 'li_lim_100'))
    .filter((f) => f.endsWith('.txt'))
    .map((f) => f.slice(0, -4))
    .sort();
}

/** A Li & Lim instance; `fleet` caps the number of vehicles. */
export function liLim(name: string, fleet?: number): VroomProblem {
  const lines = readFileSync(path.join(DATA, 'li_lim_100', `${name}.txt`), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const [vehicles, capacity] = lines[0].split(/\s+/).map(Number);
  const rows = lines.slice(1).map((l) => l.split(/\s+/).map(Number));
  const xy = rows.map((r) => [r[1], r[2]] as [number, number]);
  const depot = rows[0];
  const shipments: NonNullable<VroomProblem['shipments']> = [];
  for (const r of rows.slice(1)) {
    if (r[7] !== 0) continue; // a delivery: listed with its pickup
    const d = rows[r[8]];
    shipments.push({
      amount: [r[3]],
      pickup: { id: r[0], location_index: r[0], service: P * r[6], time_windows: [[P * r[4], P * r[5]]] },
      delivery: { id: d[0], location_index: d[0], service: P * d[6], time_windows: [[P * d[4], P * d[5]]] },
    });
  }
  return {
    vehicles: Array.from({ length: Math.min(vehicles, fleet ?? vehicles) }, (_, i) => ({
      id: i,
      start_index: 0,
      end_index: 0,
      capacity: [capacity],
      time_window: [P * depot[4], P * depot[5]] as [number, number],
    })),
    shipments,
    matrices: { car: { durations: matrix(xy) } },
  };
}

export function bks(
  set: 'solomon' | 'li_lim',
): Record<string, { best_known_cost: number; solved_with_vehicles: number }> {
  return JSON.parse(readFileSync(path.join(DATA, `${set}-BKS.json`), 'utf8'));
}
