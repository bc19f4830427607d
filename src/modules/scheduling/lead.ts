// The lead of a scheduled job (contract section 22), pure: how long before its start it enters dispatch.

/** Fewer accept-to-arrival samples than this in the area over 7 days: DISPATCH_LEAD_DEFAULT is used. */
export const MIN_LEAD_SAMPLES = 20;
/** The samples' period. */
export const LEAD_PERIOD_MS = 7 * 24 * 3600_000;

export interface LeadRules {
  leadDefaultMs: number;
  leadBufferMs: number;
}

export interface Lead {
  /** The whole lead (p90 or the default, plus the buffer). */
  ms: number;
  /** The p90 of the area's samples, in whole seconds; null when the default was used. */
  p90Seconds: number | null;
  samples: number;
  source: 'P90' | 'DEFAULT';
}

/** Lead = p90 of the samples when there are at least 20, else DISPATCH_LEAD_DEFAULT, plus DISPATCH_LEAD_BUFFER. */
export function leadOf(p90Seconds: number | null, samples: number, rules: LeadRules): Lead {
  if (samples >= MIN_LEAD_SAMPLES && p90Seconds !== null && Number.isFinite(p90Seconds)) {
    const p90 = Math.max(0, Math.ceil(p90Seconds));
    return { ms: p90 * 1000 + rules.leadBufferMs, p90Seconds: p90, samples, source: 'P90' };
  }
  return { ms: rules.leadDefaultMs + rules.leadBufferMs, p90Seconds: null, samples, source: 'DEFAULT' };
}
