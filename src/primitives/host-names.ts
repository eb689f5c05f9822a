/**
 * Host names and addresses as a Host header or a setting gives them, read into one spelling so they
 * can be compared: lower case, no port, no brackets, no final dot, an address in its shortest form.
 * Pure: the configuration checks its values with these, the metrics listener its requests' Host.
 */
import ipaddr from 'ipaddr.js';

/** The host of a Host header value, lower-cased, without its port, brackets or a final dot; null when it is not one. */
export function hostOfHeader(value: string): string | null {
  const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]\s]+))(?::\d{1,5})?$/i.exec(value);
  if (!match) return null;
  return (match[1] ?? match[2]!).toLowerCase().replace(/\.$/, '');
}

/** An address in one spelling: IPv4-mapped IPv6 as its IPv4 address, IPv6 in its shortest form. */
export function normalAddress(text: string): string | null {
  return ipaddr.isValid(text) ? ipaddr.process(text).toString() : null;
}

/** A host name or address from a setting (KEYWARD_METRICS_ALLOWED_HOSTS), as compared; null when it is neither. */
export function hostEntry(entry: string): string | null {
  const host = entry.trim().toLowerCase().replace(/\.$/, '');
  const address = normalAddress(host);
  if (address !== null) return address;
  const labels = host.split('.');
  const wellFormed = host.length <= 253 && labels.every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label));
  return wellFormed ? host : null;
}
