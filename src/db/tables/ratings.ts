// Ratings, their per-party summaries and tips (see src/db/migrations/0019_ratings_tips.ts).
import type { ColumnType } from 'kysely';

export type JobKind = 'PACKAGE' | 'RIDE';
/** CREATOR: the ride's customer or the package's creator rates the driver; DRIVER: the driver rates them. */
export type RaterSide = 'CREATOR' | 'DRIVER';

export interface RatingsTable {
  id: string;
  job_type: JobKind;
  job_id: string;
  rater_side: RaterSide;
  rater_id: string;
  rated_id: string;
  driver_id: string;
  stars: number;
  comment: string | null;
  created_at: ColumnType<Date, Date, never>;
}

export interface RatingSummariesTable {
  user_id: string;
  /** The average of the last 500 ratings in tenths (45 is 4.5); null before the first. */
  average_tenths: number | null;
  rating_count: number;
  updated_at: Date;
}

export interface TipsTable {
  id: string;
  job_type: JobKind;
  job_id: string;
  payer_id: string;
  driver_id: string;
  amount: number;
  currency: string;
  payment_method: 'CASH' | 'ACCOUNT';
  created_at: ColumnType<Date, Date, never>;
}

export interface RatingTables {
  ratings: RatingsTable;
  rating_summaries: RatingSummariesTable;
  tips: TipsTable;
}
