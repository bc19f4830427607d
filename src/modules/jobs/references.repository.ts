// Lookups of the rows a job refers to (its country, its customer, the driver it is given to).
import type { Executor } from '../../db/executor.js';

export async function countryExists(db: Executor, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('countries').select('id').where('id', '=', id).executeTakeFirst());
}

/** A country's currency, cash-on-delivery maximum (section 21) and time zone (section 22), or undefined when there is no such country. */
export function countryMoney(db: Executor, id: string) {
  return db
    .selectFrom('countries')
    .select(['currency', 'cod_max', 'time_zone'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function customerExists(db: Executor, id: string): Promise<boolean> {
  return Boolean(
    await db.selectFrom('users').select('id').where('id', '=', id).where('role', '=', 'CUSTOMER').executeTakeFirst(),
  );
}

/** A driver account with a profile, and the company it drives for. */
export function findDriver(db: Executor, id: string) {
  return db
    .selectFrom('driver_profiles as d')
    .innerJoin('users as u', 'u.id', 'd.user_id')
    .select(['d.user_id', 'd.company_id'])
    .where('d.user_id', '=', id)
    .where('u.role', '=', 'DRIVER')
    .executeTakeFirst();
}
