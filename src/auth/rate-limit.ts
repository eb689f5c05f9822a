/**
 * Per-address limits (CONTRACT 2.1: failed authentications; the dashboard's password checks), counted
 * in this process's memory in one-minute windows, in bounded memory at a constant cost per request.
 * (The per-key limit, shared by every node, is key-quota.ts.)
 */
import ipaddr from 'ipaddr.js';
import { InsertionOrderedMap } from '../primitives/insertion-ordered-map.js';

export interface WindowState {
  /** Requests still allowed in this window (never below 0). */
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
  limited: boolean;
}

export const WINDOW_MS = 60_000;

export function secondsUntil(endMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((endMs - nowMs) / 1000));
}

/**
 * What one client is counted as: an IPv4 address, or an IPv6 address's /64 (a single host is
 * commonly given a whole /64, so counting each address would hand it 2^64 budgets). An IPv4-mapped
 * IPv6 address (::ffff:a.b.c.d, as a dual-stack socket reports IPv4 clients) is its IPv4 address.
 */
export function addressGroup(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}

/** Groups tracked at most: about 150 bytes each, so some 15 MB at the bound. */
export const TRACKED_ADDRESSES = 100_000;

/**
 * Fixed one-minute windows per address group, each starting at the group's first hit. The map is
 * kept in window-start order (a group whose window restarts is set again, so it moves to the end), so
 * the oldest window is always the oldest entry: ended windows are dropped from the front as hits
 * come, and at the bound the oldest entry makes room. Every hit costs a constant number of map
 * operations, however many addresses are tracked.
 *
 * What an attacker with more address groups than the bound gets: by opening windows from other
 * groups it can push any group's count out before its minute ends, so, cycling through more than
 * `bound` groups, it is not limited per address at all. Without the bound it would get `limit` a
 * minute from each group, already millions a minute at that many groups (a /44 of IPv6 holds a
 * million /64s), so the per-address limit was no defence there either; what stands against it is
 * the per-email lock-out on sign-in and keys too long to guess. Below the bound the limit holds exactly.
 */
export class AddressLimit {
  readonly #windows = new InsertionOrderedMap<{ start: number; count: number }>();

  constructor(
    readonly limit: number,
    readonly bound = TRACKED_ADDRESSES,
  ) {}

  /** Groups tracked now (at most `bound`). */
  get size(): number {
    return this.#windows.size;
  }

  /** Counts one hit for `address`'s group and says whether it went over the limit. */
  hit(address: string, nowMs: number): WindowState {
    this.#dropEnded(nowMs);
    const group = addressGroup(address);
    let window = this.#windows.get(group);
    if (!window || nowMs - window.start >= WINDOW_MS) {
      if (!window && this.#windows.size >= this.bound) this.#windows.delete(this.#windows.oldest()![0]);
      window = { start: nowMs, count: 0 };
      this.#windows.set(group, window);
    }
    window.count += 1;
    return {
      remaining: Math.max(0, this.limit - window.count),
      resetSeconds: secondsUntil(window.start + WINDOW_MS, nowMs),
      limited: window.count > this.limit,
    };
  }

  /** Drops up to two ended windows from the front: more than one per hit, so quiet times shrink the map. */
  #dropEnded(nowMs: number) {
    for (let i = 0; i < 2; i += 1) {
      const oldest = this.#windows.oldest();
      if (!oldest || nowMs - oldest[1].start < WINDOW_MS) return;
      this.#windows.delete(oldest[0]);
    }
  }
}
