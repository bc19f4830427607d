// Address search (contract section 20): GET /geocode proxies a Nominatim- or Photon-compatible
// geocoder (GEOCODER_URL), limited to one country, with a timeout and a short per-process cache.
import { LRUCache } from 'lru-cache';
import { AppError, notFound } from '../../shared/errors.js';

export interface Place {
  name: string;
  lat: number;
  lng: number;
}

export interface GeocodingDeps {
  config: { url: string | undefined; kind: 'nominatim' | 'photon'; timeoutMs: number; cacheTtlMs: number };
  /** The ISO 3166-1 alpha-2 code of a country id (undefined: no such country). */
  countryCode(countryId: string): Promise<string | undefined>;
  fetch?: typeof fetch;
}

const CACHE_MAX = 5000;
const USER_AGENT = 'delivery-platform-geocode-proxy/1 (+https://nominatim.org/release-docs/latest/api/Search/)';

const failed = (message: string) => new AppError(502, 'GEOCODER_FAILED', message);

/** The most of a geocoder's answer that is read: a list of at most 50 places is far smaller. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * The URL of an endpoint of the geocoder: GEOCODER_URL's path with `/<endpoint>` added, its query (a
 * provider's key, say) kept, and the search's parameters after it. `https://h/nominatim/?key=K` and
 * `search` → `https://h/nominatim/search?key=K`.
 */
export function endpointUrl(base: string, endpoint: string, params: Record<string, string>): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${endpoint}`;
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url;
}

type NominatimItem = { display_name?: unknown; name?: unknown; lat?: unknown; lon?: unknown };
type PhotonFeature = { geometry?: { coordinates?: unknown }; properties?: Record<string, unknown> };

const finite = (v: unknown) =>
  (typeof v === 'string' || typeof v === 'number') && v !== '' && Number.isFinite(Number(v));
const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 300) : '');

export class GeocodingService {
  private readonly cache: LRUCache<string, Place[]>;
  private readonly fetch: typeof fetch;

  constructor(private readonly deps: GeocodingDeps) {
    this.cache = new LRUCache({ max: CACHE_MAX, ttl: deps.config.cacheTtlMs });
    this.fetch = deps.fetch ?? fetch;
  }

  async search(query: { q: string; countryId: string; limit?: number }): Promise<Place[]> {
    const base = this.deps.config.url;
    if (!base) throw notFound('Address search is not configured (GEOCODER_URL)', 'GEOCODER_NOT_CONFIGURED');
    const code = (await this.deps.countryCode(query.countryId))?.trim().toLowerCase();
    if (!code) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    const limit = query.limit ?? 5;
    const q = query.q.trim().replace(/\s+/g, ' ');
    const key = `${code}|${limit}|${q.toLowerCase()}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const places =
      this.deps.config.kind === 'photon'
        ? await this.photon(base, q, code, limit)
        : await this.nominatim(base, q, code, limit);
    this.cache.set(key, places);
    return places;
  }

  private async nominatim(base: string, q: string, code: string, limit: number): Promise<Place[]> {
    const url = endpointUrl(base, 'search', { q, format: 'jsonv2', countrycodes: code, limit: String(limit) });
    const body = await this.get(url);
    if (!Array.isArray(body)) throw failed('The geocoder answered something other than a list of places');
    return (body as NominatimItem[])
      .filter((item) => item && finite(item.lat) && finite(item.lon))
      .map((item) => ({
        name: text(item.display_name) || text(item.name),
        lat: Number(item.lat),
        lng: Number(item.lon),
      }))
      .slice(0, limit);
  }

  private async photon(base: string, q: string, code: string, limit: number): Promise<Place[]> {
    // Photon has no country filter: ask for more and keep the country's.
    const url = endpointUrl(base, 'api', { q, limit: String(Math.min(50, limit * 4)) });
    const body = (await this.get(url)) as { features?: unknown } | null;
    if (!body || !Array.isArray(body.features))
      throw failed('The geocoder answered something other than a GeoJSON feature collection');
    return (body.features as PhotonFeature[])
      .filter(
        (f) => f && text(f.properties?.countrycode).toLowerCase() === code && Array.isArray(f.geometry?.coordinates),
      )
      .map((f) => {
        const [lng, lat] = f.geometry!.coordinates as unknown[];
        const p = f.properties!;
        const name = [
          p.name,
          p.street && p.housenumber ? `${text(p.street)} ${text(p.housenumber)}` : p.street,
          p.city,
          p.country,
        ]
          .map(text)
          .filter(Boolean)
          .join(', ');
        return { name, lat: Number(lat), lng: Number(lng), ok: finite(lat) && finite(lng) };
      })
      .filter((p) => p.ok)
      .map(({ name, lat, lng }) => ({ name, lat, lng }))
      .slice(0, limit);
  }

  /**
   * GET as JSON: 504 when the geocoder takes longer than GEOCODER_TIMEOUT, 502 when it fails or its
   * answer is over MAX_ANSWER_BYTES (read no further). The URL (it may hold a key) is never in an error.
   */
  private async get(url: URL): Promise<unknown> {
    let res: Response;
    try {
      res = await this.fetch(url, {
        headers: { accept: 'application/json', 'user-agent': USER_AGENT },
        signal: AbortSignal.timeout(this.deps.config.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const name = (err as Error)?.name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new AppError(504, 'GEOCODER_TIMEOUT', 'The geocoder did not answer in time');
      throw failed('The geocoder could not be reached');
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw failed(`The geocoder answered ${res.status}`);
    }
    let raw: string;
    try {
      raw = await readCapped(res, MAX_ANSWER_BYTES);
    } catch (err) {
      if (err instanceof AppError) throw err;
      if ((err as Error)?.name === 'TimeoutError' || (err as Error)?.name === 'AbortError')
        throw new AppError(504, 'GEOCODER_TIMEOUT', 'The geocoder did not answer in time');
      throw failed('The geocoder could not be read');
    }
    try {
      return JSON.parse(raw);
    } catch {
      throw failed('The geocoder answered something other than JSON');
    }
  }
}

/** The body as text, at most `max` bytes: more (announced or sent) is a 502, and the rest is not read. */
async function readCapped(res: Response, max: number): Promise<string> {
  const tooLarge = () => failed(`The geocoder answered more than ${max / (1024 * 1024)} MB`);
  const announced = Number(res.headers.get('content-length'));
  if (Number.isFinite(announced) && announced > max) {
    await res.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
