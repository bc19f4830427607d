// Re-encoding the proof images (contract section 19): the format is decided by the bytes (sharp's
// metadata), never by the file's name or the part's Content-Type; the output is a fresh encoding,
// turned upright by its EXIF orientation first, so that no metadata (EXIF, GPS, XMP, ICC) survives;
// at most 1600 px on its longer side. sharp is loaded on the first upload, not at start.
import { badRequest } from '../../shared/errors.js';

export const MAX_SIDE = 1600;
/** Decompression bombs: a small file that decodes to a huge bitmap is refused before decoding (sharp's limitInputPixels). */
export const MAX_INPUT_PIXELS = 50_000_000;

export interface EncodedImage {
  data: Buffer;
  contentType: 'image/jpeg' | 'image/webp' | 'image/png';
  extension: 'jpg' | 'webp' | 'png';
}

type Sharp = (typeof import('sharp'))['default'];
let loaded: Promise<Sharp> | undefined;

function loadSharp(): Promise<Sharp> {
  loaded ??= import('sharp').then(({ default: sharp }) => {
    // No cache of decoded images between uploads: memory goes back once an upload is done.
    sharp.cache(false);
    return sharp;
  });
  loaded.catch(() => (loaded = undefined));
  return loaded;
}

const PHOTO_FORMATS = ['jpeg', 'png', 'webp'];

/** A photo: JPEG, PNG or WebP in; WebP out for WebP, JPEG otherwise. 400 when the bytes are not one of those. */
export async function encodePhoto(input: Buffer): Promise<EncodedImage> {
  const sharp = await loadSharp();
  const format = await formatOf(sharp, input, 'photo');
  if (!PHOTO_FORMATS.includes(format)) throw badRequest('photo must be a JPEG, PNG or WebP image', 'PROOF_INVALID_IMAGE');
  const image = open(sharp, input);
  if (format === 'webp') return { data: await decode(image.webp({ quality: 80 }), 'photo'), contentType: 'image/webp', extension: 'webp' };
  // JPEG has no transparency: a PNG photo's transparent parts become white.
  return { data: await decode(image.flatten({ background: '#ffffff' }).jpeg({ quality: 82, mozjpeg: true }), 'photo'), contentType: 'image/jpeg', extension: 'jpg' };
}

/** A signature: PNG in, PNG out. */
export async function encodeSignature(input: Buffer): Promise<EncodedImage> {
  const sharp = await loadSharp();
  if ((await formatOf(sharp, input, 'signature')) !== 'png') throw badRequest('signature must be a PNG image', 'PROOF_INVALID_IMAGE');
  return { data: await decode(open(sharp, input).png({ compressionLevel: 9 }), 'signature'), contentType: 'image/png', extension: 'png' };
}

/** Upright by its EXIF orientation, then within MAX_SIDE; sharp writes no metadata unless asked (withMetadata). */
function open(sharp: Sharp, input: Buffer) {
  return sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated: false })
    .rotate()
    .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb');
}

async function formatOf(sharp: Sharp, input: Buffer, field: string): Promise<string> {
  try {
    const meta = await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
    if (!meta.width || !meta.height) throw new Error('no dimensions');
    if (meta.width * meta.height > MAX_INPUT_PIXELS) throw badRequest(`${field} is too large in pixels (at most ${MAX_INPUT_PIXELS})`, 'PROOF_IMAGE_TOO_LARGE');
    return meta.format ?? 'unknown';
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 400) throw err;
    throw badRequest(field === 'photo' ? 'photo must be a JPEG, PNG or WebP image' : 'signature must be a PNG image', 'PROOF_INVALID_IMAGE');
  }
}

async function decode(pipeline: { toBuffer(): Promise<Buffer> }, field: string): Promise<Buffer> {
  try {
    return await pipeline.toBuffer();
  } catch {
    // A truncated or corrupt file whose header looked right.
    throw badRequest(`${field} could not be read as an image`, 'PROOF_INVALID_IMAGE');
  }
}
