/**
 * The dispatcher's slots (webhook-delivery.ts): the attempts this node has in flight, all together, by
 * endpoint and by account, and the room each endpoint and account has left for more. A slot is taken
 * when an attempt starts and freed as soon as its call ends, so the counts hold only the calls under
 * way. They are kept apart from the dispatcher's loop (claim, send, settle), which takes and frees the
 * slots and asks what room is left, but does no counting of its own.
 *
 * An endpoint that hangs holds each of its slots until the call's timeout, so one whose last call timed
 * out gets a single slot until it answers again.
 */
import type { BusyNow } from './due-endpoints.js';

export class DeliverySlots {
  /** The dispatcher's limits of the same names (DispatcherLimits). */
  readonly #perAccount: number;
  readonly #perEndpoint: number;
  #total = 0;
  /** Attempts in flight by endpoint, and by the account the endpoint's server belongs to. */
  readonly #inFlight = new Map<string, number>();
  readonly #inFlightByAccount = new Map<string, number>();
  /**
   * Endpoints whose last attempt from this node timed out: they get one slot, not perEndpoint, until
   * they answer again, so that many hanging endpoints cannot fill the node's slots between them.
   */
  readonly #unresponsive = new Set<string>();

  constructor({ perAccount, perEndpoint }: { perAccount: number; perEndpoint: number }) {
    this.#perAccount = perAccount;
    this.#perEndpoint = perEndpoint;
  }

  /** Attempts in flight on this node, all endpoints together. */
  get inFlight(): number {
    return this.#total;
  }

  /** Whether the endpoint has an attempt in flight on this node. */
  hasInFlight(endpointId: string): boolean {
    return this.#inFlight.has(endpointId);
  }

  /** An attempt to the endpoint (of the account) starts: it takes one of their slots. */
  take(endpointId: string, accountId: string): void {
    this.#total += 1;
    count(this.#inFlight, endpointId, 1);
    count(this.#inFlightByAccount, accountId, 1);
  }

  /** The call of an attempt to the endpoint (of the account) has ended: its slot is free. */
  free(endpointId: string, accountId: string): void {
    this.#total -= 1;
    count(this.#inFlight, endpointId, -1);
    count(this.#inFlightByAccount, accountId, -1);
  }

  /** How many more attempts the endpoint and its account may have open on this node now. */
  room(endpointId: string, accountId: string): number {
    return Math.min(this.#endpointRoom(endpointId), this.#accountRoom(accountId));
  }

  /** The endpoints and accounts with attempts in flight and no room left for another. */
  busy(): BusyNow {
    return {
      endpoints: [...this.#inFlight.keys()].filter((id) => this.#endpointRoom(id) <= 0),
      accounts: [...this.#inFlightByAccount.keys()].filter((id) => this.#accountRoom(id) <= 0),
    };
  }

  /** The endpoint's last attempt timed out: it has one slot until it answers again. */
  markUnresponsive(endpointId: string): void {
    this.#unresponsive.add(endpointId);
  }

  /** The endpoint answered (or was removed): it has its perEndpoint slots again. */
  clearUnresponsive(endpointId: string): void {
    this.#unresponsive.delete(endpointId);
  }

  #endpointRoom(endpointId: string): number {
    return this.#slots(endpointId) - (this.#inFlight.get(endpointId) ?? 0);
  }

  #accountRoom(accountId: string): number {
    return this.#perAccount - (this.#inFlightByAccount.get(accountId) ?? 0);
  }

  /** How many attempts this node may have open at once to the endpoint. */
  #slots(endpointId: string): number {
    return this.#unresponsive.has(endpointId) ? 1 : this.#perEndpoint;
  }
}

/** Adds `by` to the count under `key`, dropping the entry at zero (the maps hold only what is in flight). */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
