/**
 * A server's accent colour on the end users' pages. Their CSP allows styles from 'self' only (no
 * inline style, no nonce: web/page-headers.ts), so the colour travels in a stylesheet Keyward
 * serves: `/branding/style-{rrggbb}.css` is the pages' own stylesheet followed by the custom
 * properties for that colour. It is derived from the URL alone (no database read), so any node can
 * answer it and a browser may keep it.
 */
import { readFileSync } from 'node:fs';

const BASE_STYLESHEET = readFileSync(new URL('../assets/keyward.css', import.meta.url), 'utf8');
const HEX = /^[0-9a-f]{6}$/;
const WHITE = '#ffffff';
/** keyward.css's --ink: the dark text a light accent gets on its buttons. */
const INK = '#1c2430';

/** The stylesheet of a page with that accent (`#rrggbb`, lower case). */
export function accentStylesheetPath(accentColor: string): string {
  return `/branding/style-${accentColor.slice(1)}.css`;
}

function channels(hex: string): [number, number, number] {
  return [0, 2, 4].map((i) => parseInt(hex.slice(1 + i, 3 + i), 16)) as [number, number, number];
}

/** WCAG 2 relative luminance. */
function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}

function darker(hex: string, factor: number): string {
  return `#${channels(hex)
    .map((c) =>
      Math.round(c * factor)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/**
 * The custom properties for an accent: the colour itself (buttons, focus rings), the text on it
 * (white or ink, whichever reads better), and the colour of links on the white card, darkened until it
 * reaches WCAG AA's 4.5:1 where the accent itself is too light to read as text.
 */
export function accentProperties(accentColor: string): { accent: string; accentInk: string; accentText: string } {
  const accentInk = contrast(accentColor, WHITE) >= contrast(accentColor, INK) ? WHITE : INK;
  let accentText = accentColor;
  for (let factor = 0.9; contrast(accentText, WHITE) < 4.5 && factor > 0; factor -= 0.1) accentText = darker(accentColor, factor);
  return { accent: accentColor, accentInk, accentText };
}

/** The stylesheet for `/branding/style-{hex}.css`, or null when `hex` is not six lower-case hex digits. */
export function accentStylesheet(hex: string): string | null {
  if (!HEX.test(hex)) return null;
  const { accent, accentInk, accentText } = accentProperties(`#${hex}`);
  return `${BASE_STYLESHEET}\n:root { --accent: ${accent}; --accent-ink: ${accentInk}; --accent-text: ${accentText}; }\n`;
}
