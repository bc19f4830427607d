// Deliveries created through the API at a steady rate (an open loop): what B8 (dispatch) and B15
// (offer pushes) put the server under.
import { randomPoint } from './harness.js';

const VEHICLES = ['BIKE', 'CAR', 'VAN', 'TRUCK'] as const;
const stop = (p: { lat: number; lng: number }) => ({
  location: p,
  address: 'Bench St 1',
  contactName: 'Bench',
  contactPhone: '+254712345678',
});

/** POSTs /packages `rate` times a second for `duration` seconds; `onCreated` gets each 201's id. Resolves to the number of failures once every answer is in. */
export async function createPackagesAtRate(options: {
  base: string;
  token: string;
  countryId: string;
  rate: number;
  duration: number;
  onCreated: (id: string) => void;
}): Promise<number> {
  const { base, rate, duration, onCreated } = options;
  const headers = { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' };
  let errors = 0;
  const inflight: Promise<void>[] = [];
  const end = performance.now() + duration * 1000;
  for (let next = performance.now(); next < end; next += 1000 / rate) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      fetch(`${base}/packages`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          pickup: stop(randomPoint()),
          dropoff: stop(randomPoint()),
          vehicleType: VEHICLES[Math.floor(Math.random() * 4)],
          countryId: options.countryId,
          parcel: { description: 'Bench' },
        }),
      }).then(async (res) => {
        const body = await res.json();
        if (res.status !== 201) errors += 1;
        else onCreated(body.id);
      }),
    );
  }
  await Promise.all(inflight);
  return errors;
}
