// Kysely type of the Idempotency-Key records (see src/db/migrations/0004).
export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  state: 'IN_FLIGHT' | 'DONE';
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable;
}
