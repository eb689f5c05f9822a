/**
 * Where a proxied call goes (CONTRACT 8.1): the provider's `apiBaseUrl`, or another base URL the
 * caller picks with `keyward-base-url` among the provider's `apiHosts`, and the caller's path appended
 * to it. Pure: no I/O (the address policy of section 3 is applied when the call is made).
 *
 * The path is judged as the caller sent it, still percent-encoded, segment by segment: each segment
 * must decode to valid UTF-8 (an overlong encoding such as `%c0%ae`, a "." in disguise, is not valid
 * UTF-8) and then be neither "." nor ".." (with or without `;parameters`), nor hold a "/", "\", "@" or a control character; no segment
 * may be empty but the last (`//` is refused, a trailing "/" is kept; an empty path calls the base
 * URL's path with a "/" after it); and the first may not be a scheme (`https:`). What passes cannot leave the base URL's path, whatever a URL parser makes of it:
 * the URL built is checked once more against the base, as a second fence.
 */

/** What the provider allows: its base URL and the hosts `keyward-base-url` may pick. */
export interface ProxyBase {
  apiBaseUrl: string;
  /** Hosts (`host` or `host:port`; a leading `*.` matches any subdomain); apiBaseUrl's host always. */
  apiHosts?: readonly string[];
}

export type ProxyTarget = { url: URL } | { refused: string };

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const CONTROL = /[\u0000-\u001f\u007f]/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The URL to call for `rawPath` (the request's path after `/proxy/{provider}/`, as received) and
 * `rawQuery` (after the `?`, as received, or ''), on `base` or on the `keyward-base-url` the caller
 * sent; or why not. `allowHttp` (KEYWARD_ALLOW_PRIVATE_URLS) lets a picked base URL be `http:`.
 */
export function proxyTarget(base: ProxyBase, rawPath: string, rawQuery: string, pickedBaseUrl: string | undefined, allowHttp: boolean): ProxyTarget {
  const baseUrl = pickedBaseUrl === undefined ? parseBase(base) : pickedBase(base, pickedBaseUrl, allowHttp);
  if ('refused' in baseUrl) return baseUrl;
  const pathRefusal = refusePath(rawPath);
  if (pathRefusal) return { refused: pathRefusal };
  // A URL's query ends at a "#": what followed would be cut off as a fragment, never sent.
  if (rawQuery.includes('#')) return { refused: 'the query holds a #' };
  const prefix = baseUrl.url.pathname.replace(/\/+$/, '');
  const url = URL.parse(`${baseUrl.url.origin}${prefix}/${rawPath}${rawQuery === '' ? '' : `?${rawQuery}`}`);
  if (url === null) return { refused: 'the path does not make a URL' };
  // The second fence: what the parser made of it is still under the base URL's path, on its origin.
  if (url.origin !== baseUrl.url.origin || !url.pathname.startsWith(`${prefix}/`)) return { refused: 'the path leaves the provider’s base URL' };
  return { url };
}

/** Each provider's base URL parsed once per definition object (never changed: only read here). */
const parsedBases = new WeakMap<ProxyBase, { url: URL } | { refused: string }>();

function parseBase(base: ProxyBase): { url: URL } | { refused: string } {
  let parsed = parsedBases.get(base);
  if (parsed === undefined) {
    const url = URL.parse(base.apiBaseUrl);
    parsed = url === null ? { refused: 'the provider’s base URL is not a URL' } : { url };
    parsedBases.set(base, parsed);
  }
  return parsed;
}

/**
 * Why `raw` cannot be a base URL that proxied paths are appended to, as a phrase ("must be an https
 * URL"), or null: https (http where allowed), with no user, query or fragment. A provider's
 * `apiBaseUrl` (provider-api.ts) and a caller's `keyward-base-url` alike.
 */
export function baseUrlRefusal(raw: string, allowHttp: boolean): string | null {
  if (!URL.canParse(raw)) return 'is not a URL';
  const url = new URL(raw);
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) return 'must be an https URL';
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || raw.includes('@')) {
    return 'may not carry a user, a query or a fragment';
  }
  return null;
}

/** A `keyward-base-url`: a base URL (baseUrlRefusal) on one of the provider's hosts. */
function pickedBase(base: ProxyBase, picked: string, allowHttp: boolean): { url: URL } | { refused: string } {
  const refusal = baseUrlRefusal(picked, allowHttp);
  if (refusal) return { refused: `keyward-base-url ${refusal}` };
  const url = new URL(picked);
  if (!hostAllowed(base, url)) return { refused: `keyward-base-url's host ${url.host} is not one of the provider's API hosts` };
  return { url };
}

/** Whether the URL's host (with its port, where not the default) is apiBaseUrl's or one of apiHosts. */
export function hostAllowed(base: ProxyBase, url: URL): boolean {
  const own = URL.canParse(base.apiBaseUrl) ? new URL(base.apiBaseUrl).host : null;
  const host = url.host.toLowerCase();
  if (host === own) return true;
  return (base.apiHosts ?? []).some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? host.endsWith(p.slice(1)) && host.length > p.length - 1 : host === p;
  });
}

/** Why the raw path would leave its base, or null where it stays under it. */
export function refusePath(rawPath: string): string | null {
  // Nothing after `/proxy/{provider}/`: the base URL's path, with a "/" after it.
  if (rawPath === '') return null;
  if (rawPath.includes('\\')) return 'the path holds a backslash';
  if (rawPath.includes('?') || rawPath.includes('#')) return 'the path holds a ? or #';
  const segments = rawPath.split('/');
  for (const [i, raw] of segments.entries()) {
    if (raw === '') {
      if (i === segments.length - 1 && i > 0) continue;
      return 'the path holds an empty segment (//, or a leading /)';
    }
    const decoded = decodeSegment(raw);
    if (decoded === null) return 'the path holds a percent-encoding that is not valid UTF-8';
    // `..;x` too: servers that drop a segment's `;parameters` (Tomcat, Jetty) then resolve the `..`.
    const name = decoded.split(';', 1)[0];
    if (name === '.' || name === '..') return 'the path holds a . or .. segment';
    if (decoded.includes('/') || decoded.includes('\\')) return 'the path holds an encoded / or \\';
    if (decoded.includes('@')) return 'the path holds an @';
    if (CONTROL.test(decoded)) return 'the path holds a control character';
    if (i === 0 && SCHEME.test(decoded)) return 'the path starts with a scheme';
  }
  return null;
}

/** The segment percent-decoded as strict UTF-8; null where an escape is malformed or the bytes are not UTF-8. */
function decodeSegment(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  const parts: Buffer[] = [];
  for (const [token] of raw.matchAll(/%[0-9a-f]{2}|%|[^%]+/gi)) {
    if (token === '%') return null;
    parts.push(token.startsWith('%') ? Buffer.from([Number.parseInt(token.slice(1), 16)]) : Buffer.from(token, 'utf8'));
  }
  try {
    return strictUtf8.decode(Buffer.concat(parts));
  } catch {
    return null;
  }
}
