/**
 * A strict checker for an SVG logo. No XML parser ships with Keyward, and a logo needs little of XML,
 * so this reads the subset a plain SVG uses and refuses everything else rather than guess: one `svg`
 * root in the SVG namespace; elements and attributes from allow-lists of static graphics (no script,
 * no `foreignObject`, no `image`, no animation, no `on…` handler); comments and CDATA; the XML
 * declaration and no other processing instruction; no DOCTYPE, so no entity but XML's five and
 * character references. References must stay inside the document: `href` and `xlink:href` only to
 * `#id`, `url(…)` only to `#id`, and no `@import`, CSS escape or other CSS that loads a file, in
 * `style` and in every presentation attribute alike. Values are checked after their character
 * references are decoded, so `&#104;ttp:` is `http:` here as in a browser.
 */
import { invalid } from '../domain-error.js';

const SVG_NAMESPACE = 'http://www.w3.org/2000/svg';
const XLINK_NAMESPACE = 'http://www.w3.org/1999/xlink';

/** Static graphics: shapes, text, paint servers, clipping, masking, filters. */
const ELEMENTS = new Set(
  [
    'svg g defs symbol use title desc metadata switch',
    'path rect circle ellipse line polyline polygon text tspan textPath',
    'linearGradient radialGradient stop pattern clipPath mask marker style',
    'filter feBlend feColorMatrix feComponentTransfer feComposite feConvolveMatrix feDiffuseLighting',
    'feDisplacementMap feDistantLight feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR',
    'feGaussianBlur feMerge feMergeNode feMorphology feOffset fePointLight feSpecularLighting feSpotLight',
    'feTile feTurbulence',
  ]
    .join(' ')
    .split(' '),
);

/** Elements named in the refusal for what they are rather than as merely unknown. */
const FORBIDDEN_ELEMENTS: Record<string, string> = {
  script: 'a <script> element: a logo may not run code',
  foreignobject: 'a <foreignObject> element: a logo may not embed HTML',
  image: 'an <image> element: a logo may not load or embed another image',
  feimage: 'an <feImage> element: a logo may not load or embed another image',
  a: 'a link (<a>): a logo may not link anywhere',
  iframe: 'an <iframe> element: a logo may not embed another page',
  set: 'an animation (<set>): a logo may not change itself',
  animate: 'an animation (<animate>): a logo may not change itself',
};

/** Geometry, presentation, text, paint-server and filter attributes of the elements above. */
const ATTRIBUTES = new Set(
  [
    'id class style lang xml:lang xml:space xmlns xmlns:xlink href xlink:href role aria-label aria-hidden aria-labelledby',
    'version baseProfile width height viewBox preserveAspectRatio x y x1 y1 x2 y2 cx cy r rx ry fx fy fr d points',
    'pathLength transform transform-origin gradientUnits gradientTransform spreadMethod offset patternUnits',
    'patternContentUnits patternTransform clipPathUnits maskUnits maskContentUnits markerWidth markerHeight',
    'markerUnits refX refY orient dx dy rotate textLength lengthAdjust startOffset method spacing side',
    'type media filterUnits primitiveUnits in in2 result stdDeviation mode values operator k1 k2 k3 k4 order',
    'kernelMatrix divisor bias targetX targetY edgeMode preserveAlpha surfaceScale diffuseConstant',
    'specularConstant specularExponent kernelUnitLength scale xChannelSelector yChannelSelector radius',
    'tableValues slope intercept amplitude exponent azimuth elevation z pointsAtX pointsAtY pointsAtZ',
    'limitingConeAngle baseFrequency numOctaves seed stitchTiles systemLanguage',
    'fill fill-opacity fill-rule stroke stroke-width stroke-linecap stroke-linejoin stroke-miterlimit',
    'stroke-dasharray stroke-dashoffset stroke-opacity opacity color display visibility clip-path clip-rule',
    'mask filter stop-color stop-opacity flood-color flood-opacity lighting-color font-family font-size',
    'font-size-adjust font-weight font-style font-variant font-stretch text-anchor dominant-baseline',
    'alignment-baseline baseline-shift letter-spacing word-spacing text-decoration writing-mode direction',
    'unicode-bidi overflow shape-rendering text-rendering image-rendering color-interpolation',
    'color-interpolation-filters color-rendering paint-order vector-effect mix-blend-mode isolation',
    'marker marker-start marker-mid marker-end enable-background',
  ]
    .join(' ')
    .split(' '),
);

const NAME = /^[A-Za-z_][A-Za-z0-9._:-]*/;
const SPACE = /^[ \t\r\n]*/;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** A refusal of the logo: `validation_failed` on the field `logo`, with one sentence saying why. */
export const refuse = (detail: string) => invalid('logo', detail);
const refuseSvg = (what: string) => refuse(`the SVG has ${what}`);

/** Text with XML's five entities and character references decoded; any other `&` is refused. */
function decodeReferences(text: string): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, name: string) => {
    if (whole.endsWith(';')) {
      if (Object.hasOwn(PREDEFINED, name)) return PREDEFINED[name]!;
      const code = /^#x([0-9a-fA-F]{1,6})$/.exec(name)?.[1] ?? /^#([0-9]{1,7})$/.exec(name)?.[1];
      if (code !== undefined) {
        const point = name.startsWith('#x') ? parseInt(code, 16) : parseInt(code, 10);
        if (point > 0 && point <= 0x10ffff && (point < 0xd800 || point > 0xdfff)) return String.fromCodePoint(point);
      }
    }
    throw refuseSvg(`an entity reference (${whole.slice(0, 20)}) other than XML's own: a logo may not define entities`);
  });
}

/** CSS (a style attribute or a <style> element) that could load something, or that hides what it says. */
function checkCss(css: string, where: string): void {
  if (css.includes('\\')) throw refuseSvg(`CSS escapes (\\) in ${where}, which Keyward does not read: write the CSS plainly`);
  if (/@import/i.test(css)) throw refuseSvg(`@import in ${where}: a logo may not load another file`);
  if (/(^|[^a-z-])(image-set|image|src|cross-fade|element|-webkit-image-set)\s*\(/i.test(css)) {
    throw refuseSvg(`a CSS function in ${where} that can load another file`);
  }
  checkUrls(css, where);
}

/** Every url(…) must point inside the document: url(#id). */
function checkUrls(text: string, where: string): void {
  for (const match of text.matchAll(/url\s*\(/gi)) {
    const rest = text.slice(match.index + match[0].length);
    if (!/^\s*(['"]?)#/.test(rest)) throw refuseSvg(`url(…) in ${where} pointing outside the SVG: only url(#id) is allowed`);
  }
}

interface Attribute {
  name: string;
  value: string;
}

function checkAttributes(element: string, attributes: Attribute[]): void {
  const seen = new Set<string>();
  for (const { name, value } of attributes) {
    const where = `the ${name} attribute of <${element}>`;
    if (seen.has(name)) throw refuse(`the SVG is not well-formed: <${element}> has ${name} twice`);
    seen.add(name);
    if (/^on/i.test(name)) throw refuseSvg(`an event handler attribute (${name}): a logo may not run code`);
    if (name === 'href' || name === 'xlink:href') {
      if (!/^#[^\s#]*$/.test(value.trim())) {
        throw refuseSvg(`a reference outside itself (${name} on <${element}>): only same-document references (#id) are allowed`);
      }
      continue;
    }
    if (name === 'xmlns' && value !== SVG_NAMESPACE) throw refuseSvg(`a namespace other than SVG's (xmlns="${value.slice(0, 60)}")`);
    if (name === 'xmlns:xlink' && value !== XLINK_NAMESPACE) throw refuseSvg(`xmlns:xlink bound to something other than XLink`);
    if (!ATTRIBUTES.has(name) && !/^data-[a-z0-9-]+$/.test(name)) {
      throw refuseSvg(`an attribute Keyward does not accept in a logo (${name} on <${element}>); save it as a plain SVG`);
    }
    // Presentation attributes (fill, mask, filter…) are CSS values as much as style is: CSS escapes and
    // image-set() load files from them too.
    checkCss(value, where);
  }
}

function checkElement(name: string): void {
  const forbidden = FORBIDDEN_ELEMENTS[name.toLowerCase()];
  if (forbidden) throw refuseSvg(forbidden);
  if (/^animate|^animation/i.test(name)) throw refuseSvg(`an animation (<${name}>): a logo may not change itself`);
  if (!ELEMENTS.has(name)) throw refuseSvg(`an element Keyward does not accept in a logo (<${name}>); save it as a plain SVG`);
}

/** Refuses bytes that are not a plain, self-contained SVG; returns nothing when they are one. */
export function checkSvg(bytes: Uint8Array): void {
  let source: string;
  try {
    source = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw refuse('the logo is not a PNG or SVG image');
  }
  const trimmed = source.replace(SPACE, '');
  if (!/^<(\?xml[ \t\r\n?]|svg[ \t\r\n>/]|!--|!DOCTYPE)/i.test(trimmed)) throw refuse('the logo is not a PNG or SVG image');
  new SvgReader(source).read();
}

/** One pass over the text: a cursor, the open elements, and the CSS of a <style> being read. */
class SvgReader {
  private at = 0;
  private readonly open: string[] = [];
  private rootSeen = false;
  private css: string | null = null;

  constructor(private readonly text: string) {}

  private malformed(why: string): never {
    throw refuse(`the SVG is not well-formed XML (${why})`);
  }

  private rest(): string {
    return this.text.slice(this.at);
  }

  private skipSpace(): void {
    this.at += SPACE.exec(this.rest())![0].length;
  }

  private until(end: string, what: string): string {
    const close = this.text.indexOf(end, this.at);
    if (close < 0) this.malformed(`${what} is not closed`);
    const inside = this.text.slice(this.at, close);
    this.at = close + end.length;
    return inside;
  }

  read(): void {
    this.skipSpace();
    if (this.rest().startsWith('<?xml')) this.declaration();
    while (this.at < this.text.length) {
      const next = this.text.indexOf('<', this.at);
      const text = this.text.slice(this.at, next < 0 ? undefined : next);
      this.textContent(text);
      if (next < 0) break;
      this.at = next;
      this.markup();
    }
    if (!this.rootSeen) this.malformed('it has no <svg> element');
    if (this.open.length > 0) this.malformed(`<${this.open.at(-1)}> is not closed`);
  }

  /** `<?xml version="1.0" encoding="UTF-8" standalone="…"?>`, and nothing else in it. */
  private declaration(): void {
    this.at += '<?xml'.length;
    const inside = this.until('?>', 'the XML declaration');
    const pseudo = /^(\s+(version|encoding|standalone)\s*=\s*("[^"]*"|'[^']*'))*\s*$/;
    if (!pseudo.test(inside)) this.malformed('its XML declaration is not one Keyward reads');
    const encoding = /encoding\s*=\s*["']([^"']*)["']/.exec(inside)?.[1];
    if (encoding !== undefined && !/^utf-8$/i.test(encoding)) throw refuse('the SVG must be saved as UTF-8');
  }

  private textContent(raw: string): void {
    if (raw === '') return;
    const decoded = decodeReferences(raw);
    if (this.css !== null) this.css += decoded;
    else if (this.open.length === 0 && decoded.trim() !== '') this.malformed('it has text outside its <svg> element');
  }

  private markup(): void {
    const rest = this.rest();
    if (rest.startsWith('<!--')) {
      this.at += 4;
      this.until('-->', 'a comment');
    } else if (rest.startsWith('<![CDATA[')) {
      this.at += 9;
      const inside = this.until(']]>', 'a CDATA section');
      if (this.css !== null) this.css += inside;
      else if (this.open.length === 0) this.malformed('it has text outside its <svg> element');
    } else if (/^<!DOCTYPE/i.test(rest) || rest.startsWith('<!ENTITY')) {
      throw refuseSvg('a DOCTYPE or entity declaration: a logo may not declare entities or load a DTD');
    } else if (rest.startsWith('<!')) {
      this.malformed('it has a declaration Keyward does not read');
    } else if (rest.startsWith('<?')) {
      throw refuseSvg('a processing instruction: only the XML declaration may open an SVG logo');
    } else if (rest.startsWith('</')) {
      this.closeTag();
    } else {
      this.openTag();
    }
  }

  private closeTag(): void {
    this.at += 2;
    const name = NAME.exec(this.rest())?.[0];
    if (!name) this.malformed('a closing tag has no name');
    this.at += name.length;
    this.skipSpace();
    if (this.text[this.at] !== '>') this.malformed(`</${name}> is not closed`);
    this.at += 1;
    if (this.open.at(-1) !== name) this.malformed(`</${name}> closes ${this.open.length ? `<${this.open.at(-1)}>` : 'nothing'}`);
    this.open.pop();
    if (name === 'style' && this.css !== null) {
      checkCss(this.css, 'a <style> element');
      this.css = null;
    }
  }

  private openTag(): void {
    this.at += 1;
    const name = NAME.exec(this.rest())?.[0];
    if (!name) this.malformed('a "<" that starts no tag');
    this.at += name.length;
    if (this.css !== null) this.malformed('<style> holds an element');
    if (this.open.length === 0) {
      if (this.rootSeen) this.malformed('it has more than one root element');
      if (name !== 'svg') throw refuse(`the logo is XML but not an SVG (its root element is <${name}>)`);
      this.rootSeen = true;
    }
    checkElement(name);
    const attributes = this.attributes(name);
    checkAttributes(name, attributes);
    if (this.open.length === 0 && !attributes.some((a) => a.name === 'xmlns')) {
      throw refuse('the SVG does not declare its namespace (xmlns="http://www.w3.org/2000/svg")');
    }
    const selfClosing = this.text[this.at] === '/';
    this.at += selfClosing ? 2 : 1;
    if (!selfClosing) {
      this.open.push(name);
      if (name === 'style') this.css = '';
    }
  }

  /** The attributes up to `>` or `/>`, the cursor left on that. */
  private attributes(element: string): Attribute[] {
    const attributes: Attribute[] = [];
    for (;;) {
      const before = this.at;
      this.skipSpace();
      const rest = this.rest();
      if (rest.startsWith('>') || rest.startsWith('/>')) return attributes;
      if (this.at === before) this.malformed(`<${element}> has no space between its attributes`);
      const name = NAME.exec(rest)?.[0];
      if (!name) this.malformed(`<${element}> is not closed`);
      this.at += name.length;
      this.skipSpace();
      if (this.text[this.at] !== '=') this.malformed(`the ${name} attribute of <${element}> has no value`);
      this.at += 1;
      this.skipSpace();
      const quote = this.text[this.at];
      if (quote !== '"' && quote !== "'") this.malformed(`the ${name} attribute of <${element}> is not quoted`);
      this.at += 1;
      const raw = this.until(quote, `the ${name} attribute of <${element}>`);
      if (raw.includes('<')) this.malformed(`the ${name} attribute of <${element}> holds a "<"`);
      attributes.push({ name, value: decodeReferences(raw) });
    }
  }
}
