// Shared bits of the proof-of-delivery tests: multipart bodies and test images made with sharp.
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';

export interface FormPart {
  name: string;
  value: Buffer | string;
  filename?: string;
  contentType?: string;
}

/** A multipart/form-data body as a browser sends it. */
export function multipart(parts: FormPart[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----proof${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type =
      part.filename !== undefined ? `\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}` : '';
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`),
      Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A 3000 × 2000 JPEG with EXIF GPS coordinates (Nairobi) and a camera name. */
export async function jpegWithGps(): Promise<Buffer> {
  return sharp({ create: { width: 3000, height: 2000, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .jpeg()
    .withExif({
      IFD0: { Make: 'ProofCam', Model: 'Secret Model 9' },
      IFD3: { GPSLatitudeRef: 'S', GPSLatitude: '1/1 17/1 0/1', GPSLongitudeRef: 'E', GPSLongitude: '36/1 49/1 0/1' },
    })
    .toBuffer();
}

/** A 300 × 100 JPEG whose EXIF says "rotate 90° clockwise to view" (orientation 6). */
export async function jpegRotated(): Promise<Buffer> {
  return sharp({ create: { width: 300, height: 100, channels: 3, background: '#336699' } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

export async function png(width = 400, height = 200): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([
      {
        input: Buffer.from(
          `<svg width="${width}" height="${height}"><path d="M10 ${height / 2} Q ${width / 2} 0 ${width - 10} ${height / 2}" stroke="black" stroke-width="4" fill="none"/></svg>`,
        ),
      },
    ])
    .png()
    .toBuffer();
}

/** A PNG of random noise: it does not compress, so its size is about width × height × 3 bytes. */
export async function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

export async function webp(): Promise<Buffer> {
  return sharp({ create: { width: 2400, height: 1200, channels: 3, background: '#88aa22' } })
    .webp()
    .toBuffer();
}
