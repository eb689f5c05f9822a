/**
 * Messages claimed for an endpoint beyond its free slots, held by the dispatcher to start as those
 * slots free. While a backlog to one endpoint drains, each freed slot otherwise waited for a claim of
 * its own (a write, and on PostgreSQL a round trip) before its next call could start: with four slots,
 * the claim's wait was most of the time between one call and the next.
 *
 * A held message is leased to this node like one in flight, so no other node sends it meanwhile. It
 * may wait at most `maxWaitMs` from its claim; one that waited longer is handed back by take() to be
 * given back (due at once, for any node) rather than started. Generic in the message and the target,
 * so that this file needs nothing of the dispatcher's.
 */
export interface HeldMessage<M, T> {
  message: M;
  /** The endpoint's URL and keys as read beside the claim, shared by the messages claimed together. */
  target: Promise<T>;
  /** When the claim that leased it was made (ms, the dispatcher's clock). */
  claimedAt: number;
}

interface EndpointHeld<M, T> {
  accountId: string;
  messages: HeldMessage<M, T>[];
}

export class ClaimedAhead<M, T> {
  readonly #maxWaitMs: number;
  readonly #byEndpoint = new Map<string, EndpointHeld<M, T>>();
  readonly #byAccount = new Map<string, number>();
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
    return this.#byEndpoint.get(endpointId)?.messages.length ?? 0;
  }

  /** Messages held for the endpoints of the account. */
  countOfAccount(accountId: string): number {
    return this.#byAccount.get(accountId) ?? 0;
  }

  /** The endpoints with something held, in the order they were first held for, each with its account. */
  endpoints(): { endpointId: string; accountId: string }[] {
    return [...this.#byEndpoint].map(([endpointId, held]) => ({ endpointId, accountId: held.accountId }));
  }

  /** Holds messages claimed together for the endpoint (of the account) at `claimedAt`. */
  hold(endpointId: string, accountId: string, messages: readonly M[], target: Promise<T>, claimedAt: number): void {
    if (messages.length === 0) return;
    const held = this.#byEndpoint.get(endpointId) ?? { accountId, messages: [] };
    for (const message of messages) held.messages.push({ message, target, claimedAt });
    this.#byEndpoint.set(endpointId, held);
    this.#counted(accountId, messages.length);
  }

  /**
   * Up to `n` of the endpoint's messages, longest held first, to start now; and every one of its
   * messages held longer than maxWaitMs, to give back instead.
   */
  take(endpointId: string, n: number, now: number): { ready: HeldMessage<M, T>[]; expired: M[] } {
    const held = this.#byEndpoint.get(endpointId);
    if (!held) return { ready: [], expired: [] };
    const ready: HeldMessage<M, T>[] = [];
    const expired: M[] = [];
    const kept: HeldMessage<M, T>[] = [];
    for (const h of held.messages) {
      if (now - h.claimedAt > this.#maxWaitMs) expired.push(h.message);
      else if (ready.length < n) ready.push(h);
      else kept.push(h);
    }
    this.#keep(endpointId, held, kept);
    return { ready, expired };
  }

  /** Every message held for the endpoint, no longer held (to give back, or gone with the endpoint). */
  drop(endpointId: string): M[] {
    const held = this.#byEndpoint.get(endpointId);
    if (!held) return [];
    this.#keep(endpointId, held, []);
    return held.messages.map((h) => h.message);
  }

  /** Every message held, no longer held. */
  dropAll(): M[] {
    return this.endpoints().flatMap(({ endpointId }) => this.drop(endpointId));
  }

  #keep(endpointId: string, held: EndpointHeld<M, T>, kept: HeldMessage<M, T>[]): void {
    this.#counted(held.accountId, kept.length - held.messages.length);
    if (kept.length > 0) this.#byEndpoint.set(endpointId, { accountId: held.accountId, messages: kept });
    else this.#byEndpoint.delete(endpointId);
  }

  #counted(accountId: string, by: number): void {
    this.#size += by;
    const next = (this.#byAccount.get(accountId) ?? 0) + by;
    if (next > 0) this.#byAccount.set(accountId, next);
    else this.#byAccount.delete(accountId);
  }
}
