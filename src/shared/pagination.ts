// Cursor pagination: an opaque base64url cursor holding the last item's (createdAt, id).
import { Type, type Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import { badRequest, UUID_PATTERN } from './errors.js';

export const PaginationQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
export type PaginationQuery = Static<typeof PaginationQuery>;

export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt.toISOString(), cursor.id])).toString('base64url');
}

export function decodeCursor(text: string | undefined): Cursor | undefined {
  if (text === undefined) return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [string, string];
    const createdAt = new Date(at);
    const year = createdAt.getUTCFullYear();
    if (typeof id !== 'string' || !UUID_PATTERN.test(id) || Number.isNaN(year) || year < 1970 || year > 9999)
      throw new Error();
    return { createdAt, id };
  } catch {
    throw badRequest('Invalid cursor', 'INVALID_CURSOR');
  }
}

/**
 * Rows after the cursor in (createdAt desc, id desc) order, as one row comparison: PostgreSQL can
 * start an index scan on (…, created_at desc, id desc) right at the cursor, which it cannot do for
 * the equivalent `created_at < c or (created_at = c and id < i)`.
 */
export const beforeCursor = (cursor: Cursor, createdAtColumn: string, idColumn: string) =>
  sql<boolean>`(${sql.ref(createdAtColumn)}, ${sql.ref(idColumn)}) < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)`;

export function toPage<T extends { createdAt: Date; id: string }, R>(rows: T[], limit: number, map: (row: T) => R) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(map),
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}

export const toRowPage = <T extends { created_at: Date; id: string }, R>(
  rows: T[],
  limit: number,
  map: (row: T) => R,
) =>
  toPage(
    rows.map((r) => ({ ...r, createdAt: r.created_at })),
    limit,
    map,
  );

export const pageSchema = <T extends import('@sinclair/typebox').TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
