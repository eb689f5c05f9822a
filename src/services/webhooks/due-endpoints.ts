/**
 * The endpoints with something due, as the dispatcher's last read of them (dueEndpoints) found them,
 * kept for the rounds that follow: while a backlog drains, a round starts each time a few slots free,
 * and reading the list again for each (a window over every endpoint with something due) had cost as
 * much as the claim itself.
 *
 * The list is read again where it may have left out an endpoint that could now be claimed from: once
 * an endpoint or account that the read passed over as busy has room again; where the read was cut at
 * its limit (more may be due beyond it), once an endpoint or account on it is busy; once every
 * endpoint on it has run dry (their claims came back short); at every poll (pollMs: messages that fell
 * due since, and new endpoints and accounts, are seen within that, as when the dispatcher is idle); and
 * before a round answers that it started nothing (webhook-delivery.ts).
 *
 * An endpoint claimed from goes to the end of the list, so that the rounds serve the endpoints on it
 * in turn, as the read's order (longest waiting first, across accounts) would have, rather than give
 * every freed slot back to the first ones.
 */
import type { DueEndpoint } from '../../store/webhook-delivery-repository.js';

export interface BusyNow {
  endpoints: readonly string[];
  accounts: readonly string[];
}

export class DueEndpointList {
  #endpoints: DueEndpoint[] = [];
  /** What the read left out as busy. */
  #passedOver: { endpoints: ReadonlySet<string>; accounts: ReadonlySet<string> } = { endpoints: new Set(), accounts: new Set() };
  /** Whether the read gave every endpoint with something due (it was not cut at its limit). */
  #complete = true;

  /**
   * The list, if it still holds every endpoint that could be claimed from with `busy` as it is now; else
   * null. A copy: the round walks it while servedLast and ranDry reorder the kept one.
   */
  reusable(busy: BusyNow): readonly DueEndpoint[] | null {
    if (this.#endpoints.length === 0) return null;
    const stillBusy = (passedOver: ReadonlySet<string>, now: readonly string[]) => passedOver.size === 0 || [...passedOver].every((id) => now.includes(id));
    if (!stillBusy(this.#passedOver.endpoints, busy.endpoints) || !stillBusy(this.#passedOver.accounts, busy.accounts)) return null;
    // Cut at its limit, the list may leave out endpoints that can be served while those on it are busy.
    if (!this.#complete && this.#endpoints.some((e) => busy.endpoints.includes(e.id) || busy.accounts.includes(e.accountId))) return null;
    return [...this.#endpoints];
  }

  /** A new read, what it passed over as busy, and whether it was complete (fewer rows than its limit). */
  remember(endpoints: readonly DueEndpoint[], busy: BusyNow, complete: boolean): void {
    this.#endpoints = [...endpoints];
    this.#passedOver = { endpoints: new Set(busy.endpoints), accounts: new Set(busy.accounts) };
    this.#complete = complete;
  }

  /** An endpoint claimed from (with more left): it waits behind the others for its next turn. */
  servedLast(endpointId: string): void {
    const at = this.#endpoints.findIndex((endpoint) => endpoint.id === endpointId);
    if (at >= 0) this.#endpoints.push(...this.#endpoints.splice(at, 1));
  }

  /** An endpoint whose claim came back short: it has nothing more to claim now. */
  ranDry(endpointId: string): void {
    this.#endpoints = this.#endpoints.filter((endpoint) => endpoint.id !== endpointId);
  }

  forget(): void {
    this.#endpoints = [];
  }
}
