/**
 * Which Host a metrics request may name. A page in a local browser can point a name it controls at
 * 127.0.0.1 (DNS rebinding) and then read the listener as its own origin; the browser sends that
 * name as Host. So the listener answers only a Host that names its own address (the address it is
 * bound to; any address of this machine when bound to all of them; `localhost` when loopback is
 * among them) or a name the operator listed in KEYWARD_METRICS_ALLOWED_HOSTS. The port is not
 * compared: a rebinding page names its own host, and behind a port mapping the scraper's port is not
 * the listener's.
 */
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { normalAddress } from '../primitives/host-names.js';

/** This machine's addresses, read when asked: an interface may come or go while the listener runs. */
function localAddresses(): Set<string> {
  const addresses = Object.values(networkInterfaces())
    .flat()
    .map((entry) => (entry ? normalAddress(entry.address) : null));
  return new Set(addresses.filter((address): address is string => address !== null));
}

/** What the listener may be called: its configured host name (when it is one) and the operator's names. */
export interface ListenerNames {
  /** The address the listener is bound to, as the system reports it (0.0.0.0 or :: for every address). */
  bound: string;
  /** Names allowed besides the addresses (KEYWARD_METRICS_ALLOWED_HOSTS, and KEYWARD_METRICS_HOST when it is a name), as hostEntry gives them. */
  names: readonly string[];
}

/** Whether a request whose Host is `host` (from hostOfHeader) is meant for this listener. */
export function namesListener(host: string, listener: ListenerNames): boolean {
  const address = normalAddress(host);
  if (listener.names.includes(address ?? host)) return true;
  const bound = normalAddress(listener.bound);
  if (bound === null) return false;
  const everyAddress = bound === '0.0.0.0' || bound === '::';
  // The name browsers themselves keep on loopback: no page can point it elsewhere.
  if (host === 'localhost') return everyAddress || ipaddr.parse(bound).range() === 'loopback';
  if (address === null) return false;
  return everyAddress ? localAddresses().has(address) : address === bound;
}
