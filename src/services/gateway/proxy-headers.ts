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

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
// `expect` too: a 100-continue is this hop's business (Node answers it), and the outbound client refuses the header.
const NOT_FORWARDED = new Set(['authorization', 'proxy-authorization', 'x-service-key', 'cookie', 'host', 'forwarded', 'expect']);

type Headers = IncomingHttpHeaders | Readonly<Record<string, string | string[] | undefined>>;

/** The names a `connection` header lists (they are hop-by-hop for that message). */
function listedInConnection(headers: Headers): Set<string> {
  const value = headers.connection;
  const listed = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    listed
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
}

function isHopByHop(name: string, listed: Set<string>): boolean {
  return HOP_BY_HOP.has(name) || listed.has(name);
}

/** The caller's headers as the provider receives them, with the credential's (lower-case names) set over them. */
export function upstreamRequestHeaders(incoming: Headers, injected: Readonly<Record<string, string>>): OutgoingHttpHeaders {
  const listed = listedInConnection(incoming);
  const out: OutgoingHttpHeaders = {};
  for (const [rawName, value] of Object.entries(incoming)) {
    const name = rawName.toLowerCase();
    if (value === undefined || isHopByHop(name, listed) || NOT_FORWARDED.has(name)) continue;
    if (name.startsWith('keyward-') || name.startsWith('x-forwarded-')) continue;
    out[name] = value;
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
