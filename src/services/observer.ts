/**
 * What the services and the management guard report as it happens, for whoever counts it (the
 * Prometheus metrics of metrics/, when KEYWARD_METRICS_PORT is set). The services know nothing of
 * Prometheus; a context without an observer (the CLI, most tests) counts nothing.
 */

/**
 * How one refresh attempt by the lease holder ended (token-refresh.ts), or why a due token was served
 * without one:
 * - `refreshed`: the provider issued a new access token;
 * - `rejected`: the provider refused the grant (invalid_grant): the credential is now needs_reauth;
 * - `failed`: an outage (timeout, 5xx, a refusal not about the grant): the stored token stays;
 * - `no_refresh_token`: nothing to refresh with (checked by the background run only: a reader serves
 *   such a credential as it is without trying);
 * - `not_enabled`: the provider is no longer enabled on the server;
 * - `error`: Keyward's side failed (an unreadable secret, the database);
 * - `skipped_cooldown`: a reader found the token due, but an attempt made before the read began is
 *   still within KEYWARD_REFRESH_COOLDOWN_SECONDS, so the stored token was served without asking.
 */
export type RefreshOutcome = 'refreshed' | 'rejected' | 'failed' | 'no_refresh_token' | 'not_enabled' | 'error' | 'skipped_cooldown';

/** A webhook attempt's effect on its message: delivered, to be retried, or given up (CONTRACT 7). */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

export interface ServiceObserver {
  /** One refresh outcome of a credential of `provider`: a catalog slug, or `custom` for any server's own provider. */
  tokenRefresh(provider: string, outcome: RefreshOutcome): void;
  /** A management request refused by the guard, with the problem code it was answered with (CONTRACT 2.1). */
  authFailure(code: string): void;
  webhookDelivery(outcome: DeliveryOutcome): void;
  /** One proxied call answered (CONTRACT 8.1), by provider (as tokenRefresh names it), the answer's status class (`2xx`…) and its duration. */
  proxyCall(provider: string, statusClass: string, seconds: number): void;
}

/**
 * How a provider is named to the observer: a catalog provider by its slug, a server's own provider as
 * `custom`, whatever its slug: a tenant chose that slug, so naming it would make the set of label
 * values unbounded and show customers' provider names to whoever reads the metrics.
 */
export function observedProvider(catalog: (slug: string) => unknown, slug: string): string {
  return catalog(slug) ? slug : 'custom';
}
