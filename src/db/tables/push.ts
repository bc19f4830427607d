// Kysely types of the Web Push table (src/db/migrations/0020_push).
export interface PushSubscriptionsTable {
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: Date;
  last_success_at: Date | null;
}

export interface PushTables {
  push_subscriptions: PushSubscriptionsTable;
}
