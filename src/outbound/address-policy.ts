/**
 * Which URLs and addresses Keyward may call (CONTRACT 3): pure checks, no I/O. A provider's token and
 * revocation endpoints (and, later, webhook endpoints) receive client secrets, codes and tokens, so a
 * URL that a dashboard user types must not be able to aim those requests at the network Keyward runs
 * in (a cloud metadata service, a database's admin port, another internal service).
 */
import { BlockList } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why a URL is refused; `private` refusals are lifted by KEYWARD_ALLOW_PRIVATE_URLS=true, the others never. */
export interface UrlRefusal {
  reason: string;
  private: boolean;
}

export const ALLOW_PRIVATE_HINT = 'set KEYWARD_ALLOW_PRIVATE_URLS=true only for development';

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  uniqueLocal: 'a unique-local address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
};

/**
 * ::/96, the IPv4-compatible IPv6 addresses (`::10.0.0.5`, `::a00:5`), deprecated by RFC 4291 §2.5.5.1:
 * ipaddr.js calls them unicast, yet a host with a tunnel (sit) may carry them to the IPv4 address they
 * hold, and no provider lives on one. node's BlockList reads the address itself, so both spellings match
 * (ipaddr.js mistakes the dotted one for an IPv4-mapped address).
 */
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

/**
 * What kind of non-public address this is ("a private address"), or null for a public unicast one.
 * Only plain unicast passes: ranges that tunnel or translate to IPv4 (6to4, Teredo, NAT64) could
 * reach a private IPv4 address through a gateway, and no real provider lives on them. An IPv4-mapped
 * IPv6 address (`::ffff:10.0.0.5`) is judged by the IPv4 address it carries.
 */
export function nonPublicAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'an address that is not an IP address';
  // process() turns an IPv4-mapped IPv6 address into the IPv4 address it carries.
  const range = ipaddr.process(address).range();
  if (range !== 'unicast') return RANGE_WORDS[range] ?? 'a non-public address';
  // After the ranges, so `::` and `::1` keep their own words.
  if (address.includes(':') && IPV4_COMPATIBLE.check(address, 'ipv6')) return 'an IPv4-compatible IPv6 address';
  return null;
}

/** The host as the WHATWG URL parser wrote it: `[::1]` unbracketed, one trailing dot of a name dropped. */
function bareHost(url: URL): string {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/**
 * The host as written, before any name is resolved: an IP literal in any spelling (the URL parser has
 * already turned `127.1`, `0x7f000001` and `2130706433` into `127.0.0.1`) or a name that is this
 * machine by definition (`localhost`, `*.localhost`, RFC 6761). Other names pass here; what they
 * resolve to is checked when they are called.
 */
export function hostRefusal(url: URL): string | null {
  const host = bareHost(url).toLowerCase();
  if (ipaddr.isValid(host) && (host.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(host))) {
    const kind = nonPublicAddress(host);
    return kind ? `points at ${kind} (${host})` : null;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return `points at this machine (${host})`;
  return null;
}

function parsedOrRefusal(raw: string | URL, allowPrivateUrls: boolean): URL | UrlRefusal {
  // A URL already parsed is taken as it is: parsing its text again gives the same URL.
  const url = raw instanceof URL ? raw : URL.parse(raw);
  if (url === null) return { reason: 'must be an absolute URL', private: false };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { reason: 'must be https', private: false };
  if (url.username || url.password || url.hash) return { reason: 'must not carry credentials or a #fragment', private: false };
  if (url.protocol === 'http:' && !allowPrivateUrls) return { reason: 'must be https', private: true };
  return url;
}

/** The checks of CONTRACT 3 on a URL Keyward is to call, at configuration time and again at call time. */
export function outboundUrlRefusal(raw: string | URL, allowPrivateUrls: boolean): UrlRefusal | null {
  const url = parsedOrRefusal(raw, allowPrivateUrls);
  if (!(url instanceof URL)) return url;
  const host = allowPrivateUrls ? null : hostRefusal(url);
  return host ? { reason: host, private: true } : null;
}

/**
 * A URL that end users' browsers open and Keyward never calls (a provider's authorization endpoint):
 * https, with no credentials or fragment, but any host. Keyward sends nothing there itself, and the
 * browser reaches only what its user can reach anyway.
 */
export function browserUrlRefusal(raw: string, allowPrivateUrls: boolean): UrlRefusal | null {
  const url = parsedOrRefusal(raw, allowPrivateUrls);
  return url instanceof URL ? null : url;
}

/** The refusal as one sentence naming the field: "the token URL points at a private address (10.0.0.5); set …". */
export function describeRefusal(what: string, refusal: UrlRefusal): string {
  return `the ${what} ${refusal.reason}${refusal.private ? `; ${ALLOW_PRIVATE_HINT}` : ''}`;
}
