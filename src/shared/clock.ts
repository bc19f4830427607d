// Time is a dependency so tests can move it without sleeping.
export interface Clock {
  now(): Date;
  /** The same instant in epoch milliseconds, without a Date (for paths that run per message). */
  nowMs(): number;
  /**
   * How many times faster than real time this clock runs (CLOCK_RATE, contract section 22; absent: 1).
   * The timers that implement section 22's timing divide their delays by it (clockRate below).
   */
  readonly rate?: number;
}

export const systemClock: Clock = { now: () => new Date(), nowMs: () => Date.now() };

/** The clock's rate (1 unless it is a scaled clock). */
export const clockRate = (clock: Clock): number => clock.rate ?? 1;

/**
 * CLOCK_RATE (tests and the simulator only; config refuses it in production): time runs `rate` times
 * faster from `anchor` (the real instant at which both clocks agree: real now by default; instances
 * given the same anchor, CLOCK_ANCHOR, tell the same time), so that a simulated day fits in minutes.
 */
export function scaledClock(rate: number, anchor: number = Date.now()): Clock {
  const nowMs = () => anchor + (Date.now() - anchor) * rate;
  return { rate, nowMs, now: () => new Date(nowMs()) };
}

/** A clock tests can move by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | number = Date.now()) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  nowMs(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(at: Date | number): void {
    this.current = typeof at === 'number' ? at : at.getTime();
  }
}
