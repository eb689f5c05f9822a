/**
 * The headers of a proxied call (CONTRACT 8.1), both ways. Pure.
 *
 * To the provider: every header the caller sent, except its credentials for Keyward (`authorization`,
 * `x-service-key`, `cookie`; `proxy-authorization` too, a credential meant for a proxy), what names
 * the hop it arrived on (`host`, `forwarded`, `x-forwarded-*`, `expect`), Keyward's own (`keyward-*`) and the
 * hop-by-hop ones (RFC 9110 §7.6.1, with any the caller's `connection` lists); then the credential's
 * headers, over any of the same names. To the caller: every header the provider answered except the
 * hop-by-hop ones and `set-cookie`, then `keyward-upstream` and `x-request-id` (Keyward's, over the
 * provider's).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { holdsKey, redactKeys } from '../keys/key-format.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
// `expect` too: a 100-continue is this hop's business (Node answers it), and the outbound client refuses the header.
const NOT_FORWARDED = new Set(['authorization', 'proxy-authorization', 'x-service-key', 'cookie', 'host', 'forwarded', 'expect']);

type Headers = IncomingHttpHeaders | Readonly<Record<string, string | string[] | undefined>>;

const NONE_LISTED: ReadonlySet<string> = new Set();
const CLOSE_LISTED: ReadonlySet<string> = new Set(['close']);

/** The names a `connection` header lists (they are hop-by-hop for that message). */
function listedInConnection(headers: Headers): ReadonlySet<string> {
  const value = headers.connection;
  // Most messages carry none, or `keep-alive` (hop-by-hop already) or `close` alone: nothing to parse or allocate.
  if (value === undefined || value === 'keep-alive') return NONE_LISTED;
  if (value === 'close') return CLOSE_LISTED;
  const listed = Array.isArray(value) ? value.join(',') : value;
  return new Set(
    listed
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}

function isHopByHop(name: string, listed: ReadonlySet<string>): boolean {
  return HOP_BY_HOP.has(name) || listed.has(name);
}

/** Whether the caller's header goes on to the provider. */
function forwarded(name: string, listed: ReadonlySet<string>): boolean {
  return !isHopByHop(name, listed) && !NOT_FORWARDED.has(name) && !name.startsWith('keyward-') && !name.startsWith('x-forwarded-');
}

/** The caller's headers as the provider receives them, with the credential's (lower-case names) set over them. */
export function upstreamRequestHeaders(incoming: Headers, injected: Readonly<Record<string, string>>): OutgoingHttpHeaders {
  const listed = listedInConnection(incoming);
  const out: OutgoingHttpHeaders = {};
  for (const [rawName, value] of Object.entries(incoming)) {
    const name = rawName.toLowerCase();
    if (value !== undefined && forwarded(name, listed)) out[name] = value;
  }
  for (const [name, value] of Object.entries(injected)) out[name.toLowerCase()] = value;
  return out;
}

/** The provider's answer headers as the caller receives them. `upstreamHost` is the host (and port) as in the URL called. */
export function callerResponseHeaders(upstream: Headers, upstreamHost: string, requestId: string): OutgoingHttpHeaders {
  const listed = listedInConnection(upstream);
  const out: OutgoingHttpHeaders = {};
  for (const [rawName, value] of Object.entries(upstream)) {
    const name = rawName.toLowerCase();
    if (value === undefined || isHopByHop(name, listed) || name === 'set-cookie') continue;
    out[name] = value;
  }
  out['keyward-upstream'] = upstreamHost;
  out['x-request-id'] = requestId;
  return out;
}

/**
 * Where the call would carry a Keyward key (a whole account or server key) to the provider, as an
 * error's path (`/headers/x-name`, `/path`, `/query`), or null: a header that goes on, the base URL
 * picked with `keyward-base-url`, the path or the query, each escape decoded (CONTRACT 8.1: no account
 * key or server key ever reaches a provider). The caller's own keys in `authorization` and
 * `x-service-key` are Keyward's, and never go on. A body is not looked into: it streams.
 */
export function keywardKeyCarried(incoming: Headers, rawPath: string, rawQuery: string): string | null {
  let listed: ReadonlySet<string> | undefined;
  for (const rawName in incoming) {
    const value = incoming[rawName];
    if (value === undefined || !(typeof value === 'string' ? holdsKey(value) : value.some(holdsKey))) continue;
    const name = rawName.toLowerCase();
    listed ??= listedInConnection(incoming);
    if (forwarded(name, listed) || name === 'keyward-base-url') return `/headers/${redactKeys(name)}`;
  }
  if (holdsKey(rawPath)) return '/path';
  if (holdsKey(rawQuery)) return '/query';
  return null;
}
