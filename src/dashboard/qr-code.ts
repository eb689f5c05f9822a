/**
 * The QR code of an otpauth URI (CONTRACT 9), drawn on the server as an inline <svg> element by the
 * `qrcode` package: no request leaves the page, no script runs, and the dashboard's CSP (no `data:`
 * images, no inline styles) is met, since the element carries only presentation attributes.
 *
 * The markup is the library's own, made from the URI's bits (the email in the URI never appears in it
 * as text). It is still checked to be exactly what the library makes, an <svg> of <path> elements with
 * plain attributes, before it is trusted as HTML.
 */
import QRCode from 'qrcode';
import { SafeHtml } from '../web/html.js';

/** Large enough for a phone's camera at arm's length; the margin is the quiet zone scanners need. */
const SIZE = 200;
const MARGIN = 2;

const ATTRIBUTES = '(?: [A-Za-z-]+="[A-Za-z0-9 .#/:-]*")*';
const QR_SVG = new RegExp(`^<svg${ATTRIBUTES}>(?:<path${ATTRIBUTES}/>)+</svg>\\s*$`);

export async function qrCodeSvg(uri: string): Promise<SafeHtml> {
  const svg = await QRCode.toString(uri, { type: 'svg', width: SIZE, margin: MARGIN, errorCorrectionLevel: 'M' });
  if (!QR_SVG.test(svg)) throw new Error('qrcode made markup other than an <svg> of <path> elements');
  return new SafeHtml(svg.trim());
}
