import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import type { DriverRecord } from '../src/modules/matching/driver-index.js';

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
      select id, 'CAR', 'KB 1', 'ONLINE', 4.5, -1.29, 36.82, now() from users where email like 'load-%'`.execute(
      database.db,
    );
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

test('what the index reads of a driver: status, availability, service types, job, and the position to the millisecond', async () => {
  const database = await createTestDatabase();
  try {
    // The loader computes these in SQL (booleans, a service mask, epoch milliseconds): each case pinned.
    const cases = [
      {
        email: 'shape-ride@example.com',
        status: 'ACTIVE',
        availability: 'ONLINE',
        services: '{RIDE}',
        job: false,
        at: '2026-11-26 10:00:00.123456+00',
      },
      {
        email: 'shape-parcel@example.com',
        status: 'SUSPENDED',
        availability: 'OFFLINE',
        services: '{PACKAGE_DELIVERY}',
        job: true,
        at: '2026-11-26 10:00:00.999+00',
      },
      {
        email: 'shape-both@example.com',
        status: 'ACTIVE',
        availability: 'ONLINE',
        services: '{RIDE,PACKAGE_DELIVERY}',
        job: false,
        at: null,
      },
      {
        email: 'shape-none@example.com',
        status: 'PENDING_APPROVAL',
        availability: 'OFFLINE',
        services: '{}',
        job: false,
        at: '1999-12-31 23:59:59.0005+00',
      },
      // Before 1970 truncating and flooring differ: a Date of it is -1 ms.
      {
        email: 'shape-old@example.com',
        status: 'ACTIVE',
        availability: 'OFFLINE',
        services: '{RIDE}',
        job: false,
        at: '1969-12-31 23:59:59.9995+00',
      },
    ] as const;
    for (const [i, c] of cases.entries()) {
      await sql`
        insert into users (id, email, phone, password_hash, first_name, last_name, role, status, country_id)
        values (gen_random_uuid(), ${c.email}, ${`+25479000000${i}`}, 'x', ${`Name ${i}`}, 'Shape', 'DRIVER', ${c.status}, (select id from countries where code = 'KE'))`.execute(
        database.db,
      );
      await sql`
        insert into driver_profiles (user_id, vehicle_type, vehicle_plate, availability, rating, service_types,
                                     active_job_type, active_job_id, last_lat, last_lng, last_heading, last_speed, last_location_at)
        select id, 'VAN', ${`KV ${i}`}, ${c.availability}, ${i === 0 ? 4.5 : null}, ${c.services}::text[],
               ${c.job ? 'PACKAGE' : null}, ${c.job ? randomUUID() : null}::uuid,
               ${c.at ? -1.29 : null}::float8, ${c.at ? 36.82 : null}::float8, ${c.at ? 90 : null}::float8, ${c.at ? 12.5 : null}::float8, ${c.at}::timestamptz
        from users where email = ${c.email}`.execute(database.db);
    }
    const t = await buildTestApp({ database });
    try {
      await t.services.live.start();
      const read = async (email: string) => {
        const { id } = await t.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
        const rec = t.services.live.index.get(id)!;
        assert.ok(rec, email);
        return rec;
      };
      const ride = await read('shape-ride@example.com');
      assert.deepEqual(
        { ...pick(ride), position: ride.position },
        {
          firstName: 'Name 0',
          vehicleType: 'VAN',
          vehiclePlate: 'KV 0',
          rating: 4.5,
          active: true,
          online: true,
          busy: false,
          serviceTypes: ['RIDE'],
          serviceMask: 1,
          position: { lat: -1.29, lng: 36.82, heading: 90, speed: 12.5, at: Date.parse('2026-11-26T10:00:00.123Z') },
        },
      );
      const parcel = await read('shape-parcel@example.com');
      assert.deepEqual(pick(parcel), {
        firstName: 'Name 1',
        vehicleType: 'VAN',
        vehiclePlate: 'KV 1',
        rating: null,
        active: false,
        online: false,
        busy: true,
        serviceTypes: ['PACKAGE_DELIVERY'],
        serviceMask: 2,
      });
      assert.equal(parcel.position!.at, Date.parse('2026-11-26T10:00:00.999Z'));
      const both = await read('shape-both@example.com');
      assert.deepEqual([both.serviceTypes, both.serviceMask, both.position], [['RIDE', 'PACKAGE_DELIVERY'], 3, null]);
      const none = await read('shape-none@example.com');
      assert.deepEqual(
        [none.serviceTypes, none.serviceMask, none.active, none.position!.at],
        [[], 0, false, Date.parse('1999-12-31T23:59:59.000Z')],
      );
      assert.equal((await read('shape-old@example.com')).position!.at, -1);
      // The same reading for one driver (reload), as when its profile changes.
      await t.db
        .updateTable('driver_profiles')
        .set({ service_types: ['PACKAGE_DELIVERY'] })
        .where('user_id', '=', ride.id)
        .execute();
      const reloaded = await t.services.live.reload(ride.id);
      assert.deepEqual(
        [reloaded!.serviceTypes, reloaded!.serviceMask, reloaded!.position!.at],
        [['PACKAGE_DELIVERY'], 2, Date.parse('2026-11-26T10:00:00.123Z')],
      );
    } finally {
      await t.close();
    }
  } finally {
    await database.close();
  }
});

function pick(rec: DriverRecord) {
  const { firstName, vehicleType, vehiclePlate, rating, active, online, busy, serviceTypes, serviceMask } = rec;
  return { firstName, vehicleType, vehiclePlate, rating, active, online, busy, serviceTypes, serviceMask };
}
