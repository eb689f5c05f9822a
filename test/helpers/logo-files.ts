/**
 * Logo files for the branding tests (CONTRACT 10): a real PNG made here (signature, IHDR, one IDAT of
 * deflated rows, IEND, each chunk with its CRC), a plain SVG, and the bad files each of which must be
 * refused with its own message, and a multipart body as a browser sends the Branding form.
 */
import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A width×height RGB PNG of one colour; `declared` overrides the IHDR's size (a lying header). */
export function pngLogo(width = 48, height = 24, rgb: [number, number, number] = [15, 118, 110], declared?: { width: number; height: number }): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(declared?.width ?? width, 0);
  header.writeUInt32BE(declared?.height ?? height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A PNG of exactly `size` bytes: a valid image whose IDAT carries random (incompressible) rows. */
export function pngOfSize(size: number): Buffer {
  const base = pngLogo(1, 1);
  const filler = size - base.length - 12;
  const text = chunk(
    'tEXt',
    Buffer.concat([
      Buffer.from('Comment\0'),
      Buffer.from(
        randomBytes(filler)
          .toString('hex')
          .slice(0, filler - 8),
      ),
    ]),
  );
  // tEXt after IHDR: signature (8) + IHDR chunk (25), then the filler, then the rest.
  return Buffer.concat([base.subarray(0, 33), text, base.subarray(33)]);
}

/** A plain SVG logo: a gradient and a shape referenced by #id, a style element, a title with an entity, a character reference. */
export const SVG_LOGO = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 40 40" width="40" height="40">
  <title>Acme &amp; Co</title>
  <!-- a comment is fine -->
  <defs>
    <linearGradient id="g" x1="0" x2="1"><stop offset="0" stop-color="#0f766e"/><stop offset="1" stop-color="#14b8a6"/></linearGradient>
    <style>.mark { font: 700 22px sans-serif; fill: #fff; }</style>
  </defs>
  <rect x="0" y="0" width="40" height="40" rx="10" fill="url(#g)"/>
  <use xlink:href="#dot" x="10"/>
  <circle id="dot" cx="24" cy="30" r="3" fill="#fff" style="opacity: .9"/>
  <text class="mark" x="9" y="28">&#65;</text>
</svg>
`;
const svg = (inner: string, rootAttributes = '') => `<svg xmlns="http://www.w3.org/2000/svg"${rootAttributes} viewBox="0 0 10 10">${inner}</svg>`;

/** Every bad logo of the list: its bytes and the words its refusal must say. */
export const BAD_LOGOS: { name: string; bytes: Buffer; message: RegExp }[] = [
  { name: 'a text file named .png', bytes: Buffer.from('just some notes, not an image\n'), message: /^the logo is not a PNG or SVG image$/ },
  {
    name: 'a JPEG',
    bytes: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]),
    message: /^the logo is a JPEG image; upload a PNG or an SVG$/,
  },
  { name: 'a PNG of 64 KiB + 1', bytes: pngOfSize(65_537), message: /^the logo is 65,537 bytes; it may be at most 64 KiB \(65,536 bytes\)$/ },
  { name: 'an SVG with <script>', bytes: Buffer.from(svg('<script>document.title="owned"</script>')), message: /a <script> element/ },
  {
    name: 'an SVG with onload=',
    bytes: Buffer.from(svg('<rect width="1" height="1"/>', ' onload="document.title=1"')),
    message: /an event handler attribute \(onload\)/,
  },
  {
    name: 'an SVG with foreignObject',
    bytes: Buffer.from(svg('<foreignObject width="10" height="10"><p>hi</p></foreignObject>')),
    message: /a <foreignObject> element/,
  },
  {
    name: 'an SVG with an external href',
    bytes: Buffer.from(svg('<use href="https://evil.example/sprite.svg#a"/>')),
    message: /a reference outside itself \(href on <use>\)/,
  },
  {
    name: 'an SVG with xlink:href to http',
    bytes: Buffer.from(svg('<use xlink:href="http://evil.example/a.svg#x"/>', ' xmlns:xlink="http://www.w3.org/1999/xlink"')),
    message: /a reference outside itself \(xlink:href on <use>\)/,
  },
  {
    name: 'an SVG with a DOCTYPE and an entity',
    bytes: Buffer.from(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>${svg('<text>&x;</text>')}`),
    message: /a DOCTYPE or entity declaration/,
  },
  {
    name: 'an SVG with url(http…) in a style',
    bytes: Buffer.from(svg('<rect width="1" height="1" style="fill: url(http://evil.example/p.svg#p)"/>')),
    message: /url\(…\) in the style attribute of <rect> pointing outside the SVG/,
  },
  {
    name: 'an SVG with <image href=…>',
    bytes: Buffer.from(svg('<image href="https://evil.example/tracker.png" width="1" height="1"/>')),
    message: /an <image> element/,
  },
  { name: 'an SVG with @import', bytes: Buffer.from(svg('<style>@import url(https://evil.example/x.css);</style>')), message: /@import in a <style> element/ },
  { name: 'an SVG with an entity reference it does not declare', bytes: Buffer.from(svg('<text>&nbsp;</text>')), message: /an entity reference \(&nbsp;\)/ },
  {
    name: 'an SVG hiding http in character references',
    bytes: Buffer.from(svg('<use href="&#104;ttp://evil.example/a#b"/>')),
    message: /a reference outside itself/,
  },
  {
    name: 'an SVG with an HTML namespace',
    bytes: Buffer.from(svg('<h:div xmlns:h="http://www.w3.org/1999/xhtml"/>')),
    message: /an element Keyward does not accept in a logo \(<h:div>\)/,
  },
  {
    name: 'an SVG with a processing instruction',
    bytes: Buffer.from(`<?xml version="1.0"?><?xml-stylesheet href="https://evil.example/x.css"?>${svg('')}`),
    message: /a processing instruction/,
  },
  {
    name: 'an SVG with <set> changing an href',
    bytes: Buffer.from(svg('<a><set attributeName="href" to="javascript:alert(1)"/></a>')),
    message: /a link \(<a>\)/,
  },
  {
    name: 'an SVG with <set> alone',
    bytes: Buffer.from(svg('<rect width="1" height="1"><set attributeName="fill" to="red"/></rect>')),
    message: /an animation \(<set>\)/,
  },
  {
    name: 'an SVG with image-set() in a presentation attribute',
    bytes: Buffer.from(svg(`<rect width="1" height="1" mask="image-set('https://evil.example/x.png' 1x)"/>`)),
    message: /a CSS function in the mask attribute of <rect> that can load another file/,
  },
  {
    name: 'an SVG with a CSS-escaped url( in fill',
    bytes: Buffer.from(svg('<rect width="1" height="1" fill="\\75 rl(https://evil.example/p.svg#p)"/>')),
    message: /CSS escapes \(\\\) in the fill attribute of <rect>/,
  },
  {
    name: 'an SVG with a CSS-escaped url( in mask',
    bytes: Buffer.from(svg('<rect width="1" height="1" mask="\\75 rl(https://evil.example/m.svg#m)"/>')),
    message: /CSS escapes/,
  },
  {
    name: 'an SVG with url() to a data: URI in fill',
    bytes: Buffer.from(svg('<rect width="1" height="1" fill="url(data:image/svg+xml;base64,PHN2Zy8+)"/>')),
    message: /url\(…\) in the fill attribute of <rect> pointing outside the SVG/,
  },
  { name: 'a PNG cut short', bytes: pngLogo().subarray(0, 60), message: /^the PNG is damaged or cut short/ },
  {
    name: 'a PNG declaring 100000×100000 pixels',
    bytes: pngLogo(1, 1, [0, 0, 0], { width: 100_000, height: 100_000 }),
    message: /^the PNG is 100000×100000 pixels/,
  },
  {
    name: 'a PNG with an HTML page after its end',
    bytes: Buffer.concat([pngLogo(), Buffer.from('<html><script>alert(1)</script></html>')]),
    message: /data after its end/,
  },
  { name: 'XML that is not an SVG', bytes: Buffer.from('<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>'), message: /XML but not an SVG/ },
];

/** A multipart/form-data body as a browser sends the Branding form: its text fields, then the file input. */
export function multipartBody(fields: Record<string, string>, file?: { name?: string; filename: string; type: string; bytes: Buffer }) {
  const boundary = `----KeywardTest${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'logo'}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
