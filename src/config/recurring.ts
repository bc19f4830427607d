// Recurring jobs (contract section 22): how far ahead occurrences are created, how many a day a rule may have.
import type { EnvReader } from './env-reader.js';

export interface RecurringConfig {
  /** Occurrences are created (as packages) this far ahead, in ms (RECURRING_HORIZON, default 7d). */
  horizonMs: number;
  /** A rule may give at most this many occurrences on one local day (RECURRING_MAX_PER_DAY, default 50). */
  maxPerDay: number;
}

export function readRecurring(r: EnvReader): RecurringConfig {
  return {
    horizonMs: r.duration('RECURRING_HORIZON', '7d', '21d'),
    maxPerDay: r.int('RECURRING_MAX_PER_DAY', 50, 1, 1440),
  };
}
