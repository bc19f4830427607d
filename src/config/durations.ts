// Parses durations written as `500ms`, `30s`, `15m`, `2h`, `7d` into milliseconds.
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]) * UNITS[match[2]];
  return Number.isSafeInteger(value) ? value : undefined;
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNITS[unit] && ms % UNITS[unit] === 0) return `${ms / UNITS[unit]}${unit}`;
  }
  return `${ms}ms`;
}

export interface RateLimitSpec {
  max: number;
  windowMs: number;
}

/** `N/window` (`100/15m`) or `off` (returns null). */
export function parseRateLimit(text: string): RateLimitSpec | null | undefined {
  const trimmed = text.trim();
  if (trimmed === 'off') return null;
  const match = /^(\d+)\/(.+)$/.exec(trimmed);
  if (!match) return undefined;
  const max = Number(match[1]);
  const windowMs = parseDuration(match[2]);
  if (!Number.isSafeInteger(max) || max < 1 || windowMs === undefined || windowMs < 1) return undefined;
  return { max, windowMs };
}
