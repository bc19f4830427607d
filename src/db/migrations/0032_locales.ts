// Languages (contract section 27): a user's locale, a country's default, and the log of SMS sent
// (GET /admin/sms) with their encoding and segments. A package's `dropoff.contactLocale` lives in
// its dropoff JSON, as the rest of the stop does.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table users add column locale text check (locale in ('en', 'sw', 'fr'));
    alter table countries add column default_locale text not null default 'en' check (default_locale in ('en', 'sw', 'fr'));

    create table sms_messages (
      id uuid primary key,
      sent_at timestamptz not null,
      -- The number with its middle masked: the log says who was reached, not the whole number.
      recipient text not null,
      template text not null,
      locale text not null,
      encoding text not null check (encoding in ('GSM-7', 'UCS-2')),
      segments int not null,
      status text not null check (status in ('SENT', 'FAILED')),
      -- Null for a message that holds a code or a tracking link (never stored, never shown).
      text text
    );
    create index sms_messages_sent_at_idx on sms_messages (sent_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table if exists sms_messages;
    alter table countries drop column if exists default_locale;
    alter table users drop column if exists locale;
  `.execute(db);
}
