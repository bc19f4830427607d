// Reading environment variables for loadConfig: every reader returns a usable value (the default
// when the variable is bad) and records what is wrong, so that one error names every bad variable.
import { parseDuration, parseRateLimit, type RateLimitSpec } from './durations.js';

export type Env = Record<string, string | undefined>;

/**
 * A variable that is or holds a duration, and its maximum (contract section 12: every duration has
 * a documented one). Node runs a timer of more than 2^31-1 ms (24.8 days) after 1 ms.
 */
export interface DurationSetting {
  name: string;
  maxMs: number;
  /** duration: `30s`; rate-limit: the window of `N/window`; list: each entry of a comma-separated list. */
  kind: 'duration' | 'rate-limit' | 'list';
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

export class EnvReader {
  readonly problems: string[] = [];
  readonly durations: DurationSetting[] = [];
  /** Variables set to a valid value: only these can contradict each other. */
  private readonly given = new Set<string>();

  constructor(private readonly env: Env) {}

  /** The trimmed value; unset or blank is undefined. */
  get(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  str(name: string, fallback: string): string {
    return this.get(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.get(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      this.problem(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.get(name);
    if (raw === undefined) return fallback;
    if (TRUE.includes(raw.toLowerCase())) return true;
    if (FALSE.includes(raw.toLowerCase())) return false;
    this.problem(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T, options: { lowercase?: boolean } = {}): T {
    const raw = this.get(name);
    if (raw === undefined) return fallback;
    const value = options.lowercase ? raw.toLowerCase() : raw;
    if ((values as readonly string[]).includes(value)) return value as T;
    this.problem(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
    return fallback;
  }

  /** A positive duration (`30s`), at most `max`. */
  duration(name: string, fallback: string, max: string): number {
    const maxMs = parseDuration(max)!;
    this.durations.push({ name, maxMs, kind: 'duration' });
    const raw = this.get(name) ?? fallback;
    const ms = parseDuration(raw);
    if (ms === undefined || ms <= 0) {
      this.problem(`${name} must be a duration such as 500ms, 30s, 15m, 2h or 7d (got "${raw}")`);
      return parseDuration(fallback)!;
    }
    if (ms > maxMs) {
      this.problem(`${name} must be at most ${max} (got "${raw}")`);
      return parseDuration(fallback)!;
    }
    if (this.get(name) !== undefined) this.given.add(name);
    return ms;
  }

  /** A comma-separated list of durations (zero allowed), each at most `max`. */
  durationList(name: string, fallback: string, max: string): number[] {
    const maxMs = parseDuration(max)!;
    this.durations.push({ name, maxMs, kind: 'list' });
    const list: number[] = [];
    for (const part of this.str(name, fallback).split(',')) {
      const ms = parseDuration(part);
      if (ms === undefined) {
        this.problem(`${name} must be a comma-separated list of durations (bad entry "${part}")`);
        break;
      }
      if (ms > maxMs) {
        this.problem(`${name} entries must be at most ${max} (bad entry "${part.trim()}")`);
        break;
      }
      list.push(ms);
    }
    return list;
  }

  /** `N/window` with a window of at most `maxWindow`, or `off` (null). */
  rateLimit(name: string, fallback: string, maxWindow: string): RateLimitSpec | null {
    const maxMs = parseDuration(maxWindow)!;
    this.durations.push({ name, maxMs, kind: 'rate-limit' });
    const raw = this.get(name) ?? fallback;
    const spec = parseRateLimit(raw);
    if (spec === undefined) {
      this.problem(`${name} must be N/window such as 100/15m, or off (got "${raw}")`);
      return parseRateLimit(fallback) ?? null;
    }
    if (spec && spec.windowMs > maxMs) {
      this.problem(`${name} must have a window of at most ${maxWindow} (got "${raw}")`);
      return parseRateLimit(fallback) ?? null;
    }
    return spec;
  }

  /** A size written `8MB`, `512KB` or in bytes (`1048576`), in bytes from `minBytes` to `maxBytes` (KB and MB are 1024-based). */
  size(name: string, fallback: string, minBytes: number, maxBytes: number): number {
    const raw = this.get(name);
    if (raw === undefined) return parseBytes(fallback);
    const bytes = parseBytes(raw);
    if (!(bytes >= minBytes && bytes <= maxBytes)) {
      this.problem(
        `${name} must be a size such as 512KB or 8MB, from ${formatBytes(minBytes)} to ${formatBytes(maxBytes)} (got "${raw}")`,
      );
      return parseBytes(fallback);
    }
    this.given.add(name);
    return bytes;
  }

  /** A distance written `800m` or `5km`, in whole metres from `minMeters` to `maxMeters`. */
  distance(name: string, fallback: string, minMeters: number, maxMeters: number): number {
    const raw = this.get(name);
    if (raw === undefined) return parseMeters(fallback);
    const meters = parseMeters(raw);
    if (!(meters >= minMeters && meters <= maxMeters)) {
      this.problem(
        `${name} must be a distance such as 800m or 5km, from ${formatMeters(minMeters)} to ${formatMeters(maxMeters)} (got "${raw}")`,
      );
      return parseMeters(fallback);
    }
    this.given.add(name);
    return meters;
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.get(name);
    if (raw === undefined) return undefined;
    let protocol: string | undefined;
    try {
      protocol = new URL(raw).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol !== undefined && protocols.includes(protocol)) return raw;
    this.problem(`${name} must be a ${protocols.join(' or ')} URL`);
    return undefined;
  }

  /**
   * Settings whose values must not decrease in the order given (contract section 12): two the
   * operator set that contradict each other are refused, naming both; a default that would
   * contradict a set value follows it (it is clamped between the set values around it).
   */
  ascending(settings: [name: string, value: number][]): number[] {
    const isGiven = settings.map(([name]) => this.given.has(name));
    for (let i = 0; i < settings.length; i++) {
      for (let j = i + 1; j < settings.length; j++) {
        const [[low, lowValue], [high, highValue]] = [settings[i]!, settings[j]!];
        if (isGiven[i] && isGiven[j] && lowValue > highValue)
          this.problem(`${low} (${this.get(low)}) must not exceed ${high} (${this.get(high)})`);
      }
    }
    return settings.map(([, value], i) => {
      if (isGiven[i]) return value;
      const below = settings.filter((_, k) => k < i && isGiven[k]).map(([, v]) => v);
      const above = settings.filter((_, k) => k > i && isGiven[k]).map(([, v]) => v);
      return Math.min(Math.max(value, ...below), ...above);
    });
  }
}

function parseBytes(raw: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb)?$/i.exec(raw);
  if (!match) return NaN;
  const unit = (match[2] ?? 'b').toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1));
}

function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)}MB`;
  return bytes % 1024 === 0 ? `${bytes / 1024}KB` : `${bytes}B`;
}

function parseMeters(raw: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(m|km)$/i.exec(raw);
  return match ? Math.round(Number(match[1]) * (match[2]!.toLowerCase() === 'km' ? 1000 : 1)) : NaN;
}

function formatMeters(meters: number): string {
  return meters >= 1000 && meters % 1000 === 0 ? `${meters / 1000}km` : `${meters}m`;
}
