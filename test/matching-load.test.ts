import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';

test('a starting instance reads every driver into its index, over several pages of the driver table', async () => {
  const database = await createTestDatabase();
  try {
    const drivers = 12_345;
    await sql`
      insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
      select gen_random_uuid(), 'load-' || g || '@example.com', '+2547' || lpad(g::text, 8, '0'), 'x', 'Driver', 'Load',
             'DRIVER', 'ACTIVE', (select id from countries where code = 'KE')
      from generate_series(1, ${drivers}::int) g`.execute(database.db);
    await sql`
      insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability, rating, last_lat, last_lng, last_location_at)
      select id, 'CAR', 'KB 1', 'ONLINE', 4.5, -1.29, 36.82, now() from users where email like 'load-%'`.execute(database.db);
    const t = await buildTestApp({ database });
    try {
      await t.services.live.start();
      assert.equal(t.services.live.index.size, drivers);
      assert.equal(t.services.live.index.onlineCount, drivers);
    } finally {
      await t.close();
    }
  } finally {
    await database.close();
  }
});
