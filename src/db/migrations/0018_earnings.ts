// Money on jobs (contract section 21): each tariff's commission rate; on packages and rides the
// payment method and the commission rate snapshotted at creation; cash on delivery on packages
// (its amount and what the driver confirmed collecting); each country's cash-on-delivery maximum.
import { sql, type Kysely } from 'kysely';

/**
 * codMax per currency, in its minor unit: about 1,000 USD, rounded to a figure a cashier would
 * recognise (rates of late 2024). A currency not listed (a country added later) gets the column's
 * default, 100,000 minor units, until an admin sets it (PATCH /admin/countries/:id { codMax }).
 */
export const COD_MAX_BY_CURRENCY: Record<string, number> = {
  KES: 13_000_000, // KES 130,000.00
  NGN: 150_000_000, // NGN 1,500,000.00
  GHS: 1_500_000, // GHS 15,000.00
  UGX: 3_700_000, // UGX 3,700,000 (no minor unit)
  TZS: 270_000_000, // TZS 2,700,000.00
  RWF: 1_400_000, // RWF 1,400,000 (no minor unit)
  ZAR: 1_800_000, // ZAR 18,000.00
  EGP: 5_000_000, // EGP 50,000.00
  ETB: 12_000_000, // ETB 120,000.00
  MAD: 1_000_000, // MAD 10,000.00
  XOF: 600_000, // XOF 600,000 (no minor unit)
  GBP: 80_000, // GBP 800.00
  USD: 100_000, // USD 1,000.00
  EUR: 90_000, // EUR 900.00
  INR: 8_500_000, // INR 85,000.00
  AED: 370_000, // AED 3,700.00
};

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table tariffs
      add column commission_rate integer not null default 2000 check (commission_rate between 0 and 10000);

    alter table countries
      add column cod_max integer not null default 100000 check (cod_max >= 0);

    alter table packages
      add column payment_method text not null default 'ACCOUNT' check (payment_method in ('CASH', 'ACCOUNT')),
      add column commission_rate integer not null default 2000 check (commission_rate between 0 and 10000),
      add column cod_amount integer check (cod_amount > 0),
      add column cash_collected integer check (cash_collected >= 0);

    alter table rides
      add column payment_method text not null default 'CASH' check (payment_method in ('CASH', 'ACCOUNT')),
      add column commission_rate integer not null default 2000 check (commission_rate between 0 and 10000),
      add column cash_collected integer check (cash_collected >= 0);

    -- A customer's packages were always paid in cash (section 21: no payment provider yet).
    update packages set payment_method = 'CASH' where business_id is null;
  `,
    )
    .execute(db);
  for (const [currency, max] of Object.entries(COD_MAX_BY_CURRENCY)) {
    await sql`update countries set cod_max = ${max} where currency = ${currency}`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table tariffs drop column commission_rate;
    alter table countries drop column cod_max;
    alter table packages drop column payment_method, drop column commission_rate, drop column cod_amount, drop column cash_collected;
    alter table rides drop column payment_method, drop column commission_rate, drop column cash_collected;
  `,
    )
    .execute(db);
}
