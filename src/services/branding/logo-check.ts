/**
 * Whether uploaded bytes may be a server's logo (CONTRACT 10): a PNG or an SVG of at most 64 KiB,
 * judged by the bytes alone (a file's name or declared type says nothing). A PNG must be a whole PNG:
 * its signature, an IHDR of sane dimensions, and well-formed chunks up to IEND with nothing after it
 * (so no page or script rides on its end). An SVG goes through svg-check.ts. Each refusal is one
 * sentence naming what is wrong, as a `validation_failed` on the field `logo`.
 */
import { crc32 } from 'node:zlib';
import { checkSvg, refuse } from './svg-check.js';

export const MAX_LOGO_BYTES = 64 * 1024;
/** The widest and tallest logo taken: a small file may still declare a huge image, which costs a browser to decode. */
export const MAX_LOGO_SIDE = 4096;

export type LogoType = 'image/png' | 'image/svg+xml';

export interface CheckedLogo {
  type: LogoType;
  bytes: Uint8Array;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Formats people commonly try, named so the refusal says what the file is. */
const OTHER_IMAGES: { name: string; magic: number[] }[] = [
  { name: 'a JPEG', magic: [0xff, 0xd8, 0xff] },
  { name: 'a GIF', magic: [0x47, 0x49, 0x46, 0x38] },
  { name: 'a WebP or other RIFF file', magic: [0x52, 0x49, 0x46, 0x46] },
  { name: 'an ICO', magic: [0x00, 0x00, 0x01, 0x00] },
  { name: 'a PDF', magic: [0x25, 0x50, 0x44, 0x46] },
];

const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((b, i) => bytes[i] === b);

/** The refusal of a logo over 64 KiB; `size` null where only that is known (an upload cut short: web/multipart-form.ts). */
export function logoTooLarge(size: number | null) {
  const is = size === null ? 'over 64 KiB' : `${size.toLocaleString('en')} bytes`;
  return refuse(`the logo is ${is}; it may be at most 64 KiB (65,536 bytes)`);
}

/** The checked logo, or a DomainError saying why these bytes cannot be one. */
export function checkLogo(bytes: Uint8Array): CheckedLogo {
  if (bytes.length === 0) throw refuse('the logo file is empty');
  if (bytes.length > MAX_LOGO_BYTES) throw logoTooLarge(bytes.length);
  if (startsWith(bytes, PNG_SIGNATURE)) {
    checkPng(bytes);
    return { type: 'image/png', bytes };
  }
  const other = OTHER_IMAGES.find((image) => startsWith(bytes, image.magic));
  if (other) throw refuse(`the logo is ${other.name} image; upload a PNG or an SVG`);
  checkSvg(bytes);
  return { type: 'image/svg+xml', bytes };
}

/** A whole, well-formed PNG of sane dimensions: every chunk's length and CRC right, IHDR first, IEND last. */
function checkPng(bytes: Uint8Array): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const damaged = () => refuse('the PNG is damaged or cut short: its chunks do not add up');
  let at = PNG_SIGNATURE.length;
  let first = true;
  for (;;) {
    if (at + 12 > bytes.length) throw damaged();
    const length = view.getUint32(at);
    if (length > bytes.length - at - 12) throw damaged();
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (!/^[A-Za-z]{4}$/.test(type)) throw damaged();
    const data = bytes.subarray(at + 8, at + 8 + length);
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== view.getUint32(at + 8 + length)) throw damaged();
    if (first) {
      if (type !== 'IHDR' || length !== 13) throw refuse('the PNG does not start with its header (IHDR)');
      checkPngHeader(new DataView(data.buffer, data.byteOffset, data.byteLength));
      first = false;
    }
    at += 12 + length;
    if (type === 'IEND') break;
  }
  if (at !== bytes.length) throw refuse('the PNG has data after its end (IEND); save it again as a plain PNG');
}

/** Which bit depths each PNG colour type allows (PNG 3rd edition, 11.2.1). */
const BIT_DEPTHS: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

function checkPngHeader(ihdr: DataView): void {
  const width = ihdr.getUint32(0);
  const height = ihdr.getUint32(4);
  if (width === 0 || height === 0) throw refuse('the PNG has no pixels (a width or height of 0)');
  if (width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE) {
    throw refuse(`the PNG is ${width}×${height} pixels; a logo may be at most ${MAX_LOGO_SIDE}×${MAX_LOGO_SIDE}`);
  }
  const depth = ihdr.getUint8(8);
  const colourType = ihdr.getUint8(9);
  const compression = ihdr.getUint8(10);
  const filter = ihdr.getUint8(11);
  const interlace = ihdr.getUint8(12);
  if (!BIT_DEPTHS[colourType]?.includes(depth) || compression !== 0 || filter !== 0 || interlace > 1) {
    throw refuse('the PNG header (IHDR) is not valid');
  }
}
