// Named prepared statements for the hot paths' SQL (PostgreSQL server only). A statement marked with
// `prepared()` is parsed once per pooled connection, and after five runs PostgreSQL keeps one generic
// plan for it when that plan costs no more than the ones made for the parameters (plan_cache_mode
// auto: key lookups and the ledger's JSON-driven statements, whose plans do not depend on the
// values). For the job read and the ledger's posting, parsing and planning cost more CPU in
// PostgreSQL than running them (bench/RESULTS.md, B14). Only statements whose text comes from a fixed
// set of shapes may be marked: each distinct text stays prepared on every connection for the
// connection's life. The session's plan_cache_mode is left alone: it would apply to every statement
// with parameters, and a generic plan cannot use a partial index on `status = $1`.
import { createHash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';

/** The mark a statement's text starts with (an SQL comment: harmless where it is not honoured, as in PGlite). */
export const PREPARED_MARK = '/*prepared*/ ';

/** The query, marked to be run as a named prepared statement on a PostgreSQL server. */
export function prepared<R>(query: CompiledQuery<R>): CompiledQuery<R> {
  return query.sql.startsWith(PREPARED_MARK) ? query : { ...query, sql: PREPARED_MARK + query.sql };
}

const names = new Map<string, string>();

/** The statement name of a marked text: the same on every connection, distinct per text (kept: the texts are a fixed set). */
export function preparedName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = 'p_' + createHash('sha1').update(text).digest('hex').slice(0, 30);
    // A bound all the same, should a caller mark texts that vary without one.
    if (names.size >= 1000) names.clear();
    names.set(text, name);
  }
  return name;
}

interface QueryableClient {
  query: (...args: unknown[]) => unknown;
}

/**
 * Makes a pooled pg client run marked texts as named statements (node-postgres parses a name once per
 * connection, then only binds and executes it); every other call goes through unchanged.
 */
export function honourPreparedMarks(client: QueryableClient): void {
  const query = client.query.bind(client);
  client.query = (...args: unknown[]) => {
    const [text, values] = args;
    if (
      typeof text === 'string' &&
      text.startsWith(PREPARED_MARK) &&
      (values === undefined || Array.isArray(values)) &&
      args.length <= 2
    ) {
      return query({ name: preparedName(text), text, values });
    }
    return query(...args);
  };
}

/** Runs a marked statement in `db` (a transaction or the database) and returns its rows. */
export async function runPrepared<R>(
  db: { executeQuery<T>(query: CompiledQuery<T>): Promise<{ rows: T[] }> },
  query: CompiledQuery<R>,
): Promise<R[]> {
  return (await db.executeQuery(prepared(query))).rows;
}
