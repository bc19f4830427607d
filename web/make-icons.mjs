// Draws the apps' icons (web/public/<app>/icon-192.png and icon-512.png): a map pin on the app's
// colour (the driver's dark blue, the customer's green), as plain RGBA pixels encoded to PNG with
// node:zlib. Run it again after a change: node web/make-icons.mjs
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
};

function icon(size, bg) {
  const pin = [0xff, 0xff, 0xff];
  const dot = [0x0b, 0x4f, 0x9c];
  const raw = Buffer.alloc((size * 4 + 1) * size);
  // The pin: a circle whose lower half narrows to a point (inside the maskable safe zone, 80 %).
  const cx = size / 2;
  const cy = size * 0.42;
  const r = size * 0.2;
  const tip = size * 0.78;
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const dx = x + 0.5 - cx;
      const dy = y + 0.5 - cy;
      const d = Math.hypot(dx, dy);
      let colour = bg;
      const inCircle = d <= r;
      // Below the centre: a triangle from the circle's width down to the tip.
      const t = (y + 0.5 - cy) / (tip - cy);
      const inTail = t >= 0 && t <= 1 && Math.abs(dx) <= r * (1 - t) * 0.95;
      if (inCircle || inTail) colour = pin;
      if (d <= r * 0.42) colour = dot;
      raw.set([...colour, 255], y * (size * 4 + 1) + 1 + x * 4);
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const APPS = { driver: [0x12, 0x26, 0x3f], app: [0x1d, 0x6b, 0x2f] };
for (const [dir, bg] of Object.entries(APPS)) {
  for (const size of [192, 512]) writeFileSync(new URL(`public/${dir}/icon-${size}.png`, import.meta.url), icon(size, bg));
}
