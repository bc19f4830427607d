// Re-encoding the proof images (contract section 19): the format is decided by the bytes (sharp's
// metadata), never by the file's name or the part's Content-Type; the output is a fresh encoding,
// turned upright by its EXIF orientation first, so that no metadata (EXIF, GPS, XMP, ICC) survives;
// at most 1600 px on its longer side. sharp is loaded on the first upload, not at start.
import { AppError, badRequest } from '../../shared/errors.js';

export const MAX_SIDE = 1600;

/** Bytes of one channel of one pixel, by libvips's band format (sharp's metadata `depth`). */
const BYTES_PER_CHANNEL: Record<string, number> = {
  uchar: 1,
  char: 1,
  ushort: 2,
  short: 2,
  uint: 4,
  int: 4,
  float: 4,
  complex: 8,
  double: 8,
  dpcomplex: 16,
};

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
export async function encodePhoto(input: Buffer, maxDecodedBytes: number): Promise<EncodedImage> {
  const sharp = await loadSharp();
  const { format, pixels } = await inspect(sharp, input, 'photo', maxDecodedBytes);
  const image = open(sharp, input, pixels);
  if (format === 'webp')
    return { data: await decode(image.webp({ quality: 80 }), 'photo'), contentType: 'image/webp', extension: 'webp' };
  // JPEG has no transparency: a PNG photo's transparent parts become white.
  return {
    data: await decode(image.flatten({ background: '#ffffff' }).jpeg({ quality: 82, mozjpeg: true }), 'photo'),
    contentType: 'image/jpeg',
    extension: 'jpg',
  };
}

/** A signature: PNG in, PNG out. */
export async function encodeSignature(input: Buffer, maxDecodedBytes: number): Promise<EncodedImage> {
  const sharp = await loadSharp();
  const { pixels } = await inspect(sharp, input, 'signature', maxDecodedBytes);
  return {
    data: await decode(open(sharp, input, pixels).png({ compressionLevel: 9 }), 'signature'),
    contentType: 'image/png',
    extension: 'png',
  };
}

/** Upright by its EXIF orientation, then within MAX_SIDE; sharp writes no metadata unless asked (withMetadata). */
function open(sharp: Sharp, input: Buffer, pixels: number) {
  // The header was checked (inspect); the decoder is held to the same pixel count all the same.
  return sharp(input, { limitInputPixels: pixels, failOn: 'error', animated: false })
    .rotate()
    .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb');
}

/**
 * The header only (no pixel is decoded): the format, and the bitmap the decode would need, width ×
 * height × channels × bytes per channel. Over `maxDecodedBytes` (PROOF_MAX_DECODED_SIZE): 413
 * PROOF_IMAGE_TOO_LARGE before any decoding, whatever the file's own size (a decompression bomb).
 */
async function inspect(
  sharp: Sharp,
  input: Buffer,
  field: 'photo' | 'signature',
  maxDecodedBytes: number,
): Promise<{ format: string; pixels: number }> {
  const formats = field === 'photo' ? PHOTO_FORMATS : ['png'];
  const invalid = () =>
    badRequest(
      field === 'photo' ? 'photo must be a JPEG, PNG or WebP image' : 'signature must be a PNG image',
      'PROOF_INVALID_IMAGE',
    );
  let meta: Awaited<ReturnType<ReturnType<Sharp>['metadata']>>;
  try {
    // No pixel limit here: sharp would refuse a large header with its own error, which says nothing of size.
    meta = await sharp(input, { limitInputPixels: false, animated: false }).metadata();
  } catch {
    throw invalid();
  }
  if (!formats.includes(meta.format ?? '')) throw invalid();
  const { width, height, channels } = meta;
  if (!width || !height || !channels) throw badRequest(`${field} could not be read as an image`, 'PROOF_INVALID_IMAGE');
  const decodedBytes = width * height * channels * (BYTES_PER_CHANNEL[meta.depth ?? 'uchar'] ?? 8);
  if (decodedBytes > maxDecodedBytes) {
    throw new AppError(
      413,
      'PROOF_IMAGE_TOO_LARGE',
      `${field} is ${width} × ${height} pixels: decoding it would take ${mb(decodedBytes)}, more than ${mb(maxDecodedBytes)} (PROOF_MAX_DECODED_SIZE); send it at most ${MAX_SIDE} px`,
    );
  }
  return { format: meta.format!, pixels: width * height };
}

export const mb = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

async function decode(pipeline: { toBuffer(): Promise<Buffer> }, field: string): Promise<Buffer> {
  try {
    return await pipeline.toBuffer();
  } catch {
    // A truncated or corrupt file whose header looked right.
    throw badRequest(`${field} could not be read as an image`, 'PROOF_INVALID_IMAGE');
  }
}
