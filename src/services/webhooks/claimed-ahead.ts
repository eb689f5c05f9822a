/**
 * Messages claimed for an endpoint beyond its free slots, held by the dispatcher to start as those
 * slots free. While a backlog to one endpoint drains, each freed slot otherwise waited for a claim of
 * its own (a write, and on PostgreSQL a round trip) before its next call could start: with four slots,
 * the claim's wait was most of the time between one call and the next.
 *
 * A held message is leased to this node like one in flight, so no other node sends it meanwhile. It
 * may wait at most `maxWaitMs`; one that waited longer is given back (due at once, for any node) rather
 * than started, and the dispatcher gives back every message an endpoint holds once the endpoint stops
 * answering quickly. Generic in the message and the target, so that this file needs nothing of the
 * dispatcher's.
 */
export interface Held<M, T> {
  message: M;
  accountId: string;
  /** The endpoint's URL and keys as read beside the claim, shared by the messages claimed together. */
  target: Promise<T>;
}

interface Holding<M, T> extends Held<M, T> {
  heldSince: number;
}

export class ClaimedAhead<M, T> {
  readonly #maxWaitMs: number;
  readonly #byEndpoint = new Map<string, Holding<M, T>[]>();
  #size = 0;

  constructor(maxWaitMs: number) {
    this.#maxWaitMs = maxWaitMs;
  }

  /** Messages held, all endpoints together. */
  get size(): number {
    return this.#size;
  }

  /** Messages held for the endpoint. */
  count(endpointId: string): number {
    return this.#byEndpoint.get(endpointId)?.length ?? 0;
  }

  /** The endpoints with something held, in the order they were first held for, each with its account. */
  endpoints(): { endpointId: string; accountId: string }[] {
    return [...this.#byEndpoint].map(([endpointId, list]) => ({ endpointId, accountId: list[0]!.accountId }));
  }

  hold(endpointId: string, held: readonly Held<M, T>[], now: number): void {
    if (held.length === 0) return;
    const list = this.#byEndpoint.get(endpointId) ?? [];
    for (const h of held) list.push({ ...h, heldSince: now });
    this.#byEndpoint.set(endpointId, list);
    this.#size += held.length;
  }

  /**
   * Up to `n` of the endpoint's messages, longest held first, to start now; and every one of its
   * messages held longer than maxWaitMs, to give back instead.
   */
  take(endpointId: string, n: number, now: number): { ready: Held<M, T>[]; expired: M[] } {
    const list = this.#byEndpoint.get(endpointId);
    if (!list) return { ready: [], expired: [] };
    const fresh = list.filter((h) => now - h.heldSince <= this.#maxWaitMs);
    const expired = list.filter((h) => now - h.heldSince > this.#maxWaitMs).map((h) => h.message);
    const ready = fresh.splice(0, Math.max(0, n));
    this.#keep(endpointId, fresh, list.length);
    return { ready, expired };
  }

  /** Every message held for the endpoint, no longer held (to give back, or gone with the endpoint). */
  drop(endpointId: string): M[] {
    const list = this.#byEndpoint.get(endpointId) ?? [];
    this.#keep(endpointId, [], list.length);
    return list.map((h) => h.message);
  }

  /** Every message held, no longer held. */
  dropAll(): M[] {
    return this.endpoints().flatMap(({ endpointId }) => this.drop(endpointId));
  }

  #keep(endpointId: string, kept: Holding<M, T>[], had: number): void {
    this.#size -= had - kept.length;
    if (kept.length > 0) this.#byEndpoint.set(endpointId, kept);
    else this.#byEndpoint.delete(endpointId);
  }
}
