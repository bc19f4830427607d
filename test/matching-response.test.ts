import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DriverIndex, type NearestResult, type Position } from '../src/modules/matching/driver-index.js';
import { etaSeconds, FoundDriversJson } from '../src/modules/matching/found-drivers-json.js';
import { FindDriversResponse } from '../src/modules/matching/matching.schemas.js';
import { compileResponseSchema } from '../src/http/validation.js';

const matchesSchema = compileResponseSchema(FindDriversResponse);

// What the route returned before it sent text: the schema's objects, in the schema's key order.
function asObjects(found: NearestResult[], radiusMeters: number) {
  return {
    drivers: found.map(({ driver, distanceMeters }) => ({
      driverId: driver.id,
      firstName: driver.firstName,
      vehicleType: driver.vehicleType,
      vehiclePlate: driver.vehiclePlate,
      rating: driver.rating,
      location: { lat: driver.position!.lat, lng: driver.position!.lng },
      distanceMeters: Math.round(distanceMeters),
      etaSeconds: etaSeconds(distanceMeters, driver.vehicleType),
    })),
    radiusMeters,
  };
}

const at = (lat: number, lng: number): Position => ({ lat, lng, heading: null, speed: null, at: 1_000 });

function seeded() {
  const index = new DriverIndex();
  const drivers = [
    {
      id: '00000000-0000-4000-8000-000000000001',
      firstName: 'Zoë "Z" O\'Neil',
      vehiclePlate: 'KB\\1 <x>',
      rating: 4.75,
      p: at(-1.2921, 36.8219),
    },
    {
      id: '00000000-0000-4000-8000-000000000002',
      firstName: 'Ann\n\u2028Tab\t',
      vehiclePlate: '',
      rating: null,
      p: at(-1.30000000000001, 36.81234567890123),
    },
    {
      id: '00000000-0000-4000-8000-000000000003',
      firstName: '😀 emoji',
      vehiclePlate: 'KC 3',
      rating: 5,
      p: at(-1.2850000001, 36.8300000001),
    },
  ];
  for (const d of drivers) {
    index.upsert(
      {
        id: d.id,
        firstName: d.firstName,
        vehicleType: 'CAR',
        vehiclePlate: d.vehiclePlate,
        rating: d.rating,
        countryId: null,
        serviceTypes: ['RIDE'],
        active: true,
        online: true,
        busy: false,
      },
      d.p,
    );
  }
  const find = (radiusMeters: number) =>
    index.nearest({
      lat: -1.29,
      lng: 36.82,
      radiusMeters,
      limit: 10,
      vehicleType: 'CAR',
      orderType: 'RIDE',
      staleBefore: 0,
    });
  return { index, drivers, find };
}

test('find-drivers text is byte for byte the JSON of the schema objects, escapes and all', () => {
  const { find } = seeded();
  const json = new FoundDriversJson();
  for (const radius of [5000, 1234.5, 0.5]) {
    const found = find(radius);
    const text = json.render(found, radius);
    assert.equal(text, JSON.stringify(asObjects(found, radius)));
    assert.ok(matchesSchema(JSON.parse(text)), JSON.stringify(matchesSchema.errors));
    // Again, from what it remembered.
    assert.equal(json.render(found, radius), text);
  }
  assert.equal(json.render([], 5000), '{"drivers":[],"radiusMeters":5000}');
  assert.equal(find(5000).length, 3);
});

test('find-drivers text follows a driver changed in place and a new position', () => {
  const { index, drivers, find } = seeded();
  const json = new FoundDriversJson();
  const render = () => {
    const found = find(5000);
    const text = json.render(found, 5000);
    assert.equal(text, JSON.stringify(asObjects(found, 5000)));
    return text;
  };
  const before = render();
  // The index updates a record in place: each field the text holds must follow it, one at a time.
  const base = {
    id: drivers[0].id,
    firstName: drivers[0].firstName,
    vehicleType: 'CAR' as const,
    vehiclePlate: drivers[0].vehiclePlate,
    rating: drivers[0].rating,
    countryId: null,
    serviceTypes: ['RIDE' as const],
    active: true,
    online: true,
    busy: false,
  };
  for (const change of [{ firstName: 'Renamed' }, { vehiclePlate: 'NEW 1' }, { rating: 3.5 }, { rating: null }]) {
    Object.assign(base, change);
    index.upsert(base, null);
    const text = render();
    assert.ok(text.includes(JSON.stringify(change).slice(1, -1)), `${JSON.stringify(change)} in ${text}`);
  }
  index.setPosition(drivers[1].id, { ...at(-1.2905, 36.8201), at: 2_000 });
  const after = render();
  assert.notEqual(after, before);
  assert.match(after, /"firstName":"Renamed","vehicleType":"CAR","vehiclePlate":"NEW 1","rating":null/);
  assert.match(after, /"location":\{"lat":-1.2905,"lng":36.8201\}/);
});
