// Request and response schemas of the device keys and the OsmAnd positions route.
import { Type } from '@sinclair/typebox';
import { Body, DateTime, Nullable, Uuid } from '../../shared/schemas.js';

export const CreateDeviceKeyBody = Body({
  name: Type.Optional(
    Type.String({ minLength: 1, maxLength: 60, pattern: '\\S', description: 'for the driver: which phone holds it' }),
  ),
});

export const DeviceKeyResponse = Type.Object({
  id: Uuid,
  name: Type.String(),
  createdAt: DateTime,
  lastUsedAt: Nullable(DateTime),
});
export const CreatedDeviceKeyResponse = Type.Object({
  id: Uuid,
  name: Type.String(),
  key: Type.String({ description: 'shown once: only its hash is stored' }),
  createdAt: DateTime,
});
export const DeviceKeyList = Type.Object({ items: Type.Array(DeviceKeyResponse) });
export const DeviceKeyParams = Type.Object({ id: Uuid });

const Text = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

/** For the document only: the route reads its input itself (osmand-decode.ts), as Traccar's decoder does. */
export const OsmAndQuery = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 128, description: 'the device key (or `deviceid`); never logged' })),
    lat: Text('latitude, degrees'),
    lon: Text('longitude, degrees'),
    timestamp: Text('Unix seconds, milliseconds, or an ISO 8601 date'),
    speed: Text('knots'),
    bearing: Text('degrees clockwise from north'),
    accuracy: Text('metres'),
  },
  { additionalProperties: true },
);
