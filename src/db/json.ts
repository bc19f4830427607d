/** A json column: PGlite hands back text where the pg driver parses it. */
export function json<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}
