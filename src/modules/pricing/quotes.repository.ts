// The `quotes` table: quotes kept in PostgreSQL (no Redis, or Redis away: quote-store.ts), and the
// used mark of every quote a job was created from (in the job's transaction).
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { QuotesTable } from '../../db/tables/pricing.js';
import { quoteInputs, type PriceInputs, type StoredQuote } from './price.js';
import type { Breakdown } from './tariff.js';

type Db = Kysely<Database>;

const COLUMNS = [
  'id',
  'account_id',
  'kind',
  'pickup_lat',
  'pickup_lng',
  'dropoff_lat',
  'dropoff_lng',
  'vehicle_type',
  'country_id',
  'amount',
  'currency',
  'breakdown',
  'tariff_version',
  'surge',
  'inputs',
  'created_at',
  'expires_at',
  'consumed_at',
] as const;

export class QuotesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the quotes in one statement whose one parameter is the rows as JSON: serialising them is
   * one native JSON.stringify, where a VALUES list of 18 parameters a row costs the event loop
   * milliseconds per thousand rows. A quote already there is left as it is.
   */
  async insertMany(quotes: readonly StoredQuote[]): Promise<void> {
    const rows = quotes.map((q) => toRow(q, null));
    const columns = sql.join(COLUMNS.map((c) => sql.ref(c)));
    await sql`insert into quotes (${columns}) select ${columns} from json_populate_recordset(null::quotes, ${JSON.stringify(rows)}::json)
      on conflict (id) do nothing`.execute(this.db);
  }

  async getById(id: string, db: Db = this.db): Promise<StoredQuote | undefined> {
    const row = await db.selectFrom('quotes').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  /**
   * Marks the quote used at `at`, writing its row if it has none (a quote kept in Redis or memory).
   * False when it was used already. In the job's transaction: a second use waits for the first
   * transaction's row and sees its mark; a use rolled back leaves the quote usable.
   */
  async markUsed(db: Db, quote: StoredQuote, at: Date): Promise<boolean> {
    const { breakdown, inputs, ...row } = toRow(quote, at);
    const marked = await db
      .insertInto('quotes')
      .values({ ...row, breakdown: JSON.stringify(breakdown), inputs: JSON.stringify(inputs) })
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet({ consumed_at: (eb) => eb.ref('excluded.consumed_at') })
          .where('quotes.consumed_at', 'is', null),
      )
      .returning('id')
      .executeTakeFirst();
    return marked !== undefined;
  }

  /** Deletes up to `limit` unused quotes that expired before `before`; returns how many. */
  async deleteUnusedExpiredBefore(before: Date, limit: number): Promise<number> {
    const result = await this.db
      .deleteFrom('quotes')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('quotes')
          .select('id')
          .where('consumed_at', 'is', null)
          .where('expires_at', '<', before)
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function toRow(
  quote: StoredQuote,
  consumedAt: Date | null,
): Omit<Insertable<QuotesTable>, 'breakdown' | 'inputs'> & { breakdown: Breakdown; inputs: PriceInputs } {
  return {
    id: quote.id,
    account_id: quote.accountId,
    kind: quote.kind,
    pickup_lat: quote.pickup.lat,
    pickup_lng: quote.pickup.lng,
    dropoff_lat: quote.dropoff.lat,
    dropoff_lng: quote.dropoff.lng,
    vehicle_type: quote.vehicleType,
    country_id: quote.countryId,
    amount: quote.amount,
    currency: quote.currency,
    breakdown: quote.breakdown,
    tariff_version: quote.tariff.version,
    surge: quote.breakdown.surge,
    inputs: quoteInputs(quote),
    created_at: new Date(quote.createdAt),
    expires_at: new Date(quote.expiresAt),
    consumed_at: consumedAt,
  };
}

function fromRow(row: Pick<Selectable<QuotesTable>, (typeof COLUMNS)[number]>): StoredQuote {
  const inputs = row.inputs as PriceInputs;
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    pickup: { lat: row.pickup_lat, lng: row.pickup_lng },
    dropoff: { lat: row.dropoff_lat, lng: row.dropoff_lng },
    vehicleType: row.vehicle_type,
    countryId: row.country_id,
    currency: row.currency.trim(),
    tariff: inputs.tariff,
    routing: inputs.routing,
    distanceMeters: inputs.distanceMeters,
    durationSeconds: inputs.durationSeconds,
    amount: row.amount,
    breakdown: row.breakdown as Breakdown,
    createdAt: new Date(row.created_at).getTime(),
    expiresAt: new Date(row.expires_at).getTime(),
  };
}
