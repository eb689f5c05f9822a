/**
 * The Prometheus series of one Keyward node (README, "Metrics"). Each node makes its own registry,
 * never prom-client's global one, so two nodes in one process (the tests' second node) do not mix
 * their counts. Served only on the separate metrics listener (metrics-server.ts).
 *
 * Label values are bounded: a route is its pattern (`/v1/end-users/:externalUserId`), never the
 * path, which carries end users' ids and form tokens; a provider is a catalog slug or `custom` (a
 * tenant's own slugs never show); a code is one of the closed list of problem codes.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { DeliveryOutcome, RefreshOutcome, ServiceObserver } from '../services/observer.js';
import type { Store } from '../store/store.js';
import { registerDatabaseMetrics } from './database-metrics.js';

/**
 * From half a millisecond (a read served from memory and one statement) to ten seconds (a provider
 * call that times out): prom-client's default buckets start at 5 ms, above most of our requests.
 */
const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsOptions {
  /** The node's store, whose connection figures are read on each scrape. */
  store?: Pick<Store, 'engine' | 'connectionFigures'>;
  /** prom-client's process and Node.js series (CPU, memory, event loop lag, GC…); on unless told. */
  processDefaults?: boolean;
}

export class Metrics implements ServiceObserver {
  readonly registry = new Registry();
  readonly #requests: Counter<'route' | 'method' | 'status'>;
  readonly #duration: Histogram<'route' | 'method'>;
  readonly #refreshes: Counter<'provider' | 'outcome'>;
  readonly #authFailures: Counter<'code'>;
  readonly #deliveries: Counter<'outcome'>;
  readonly #proxyCalls: Counter<'provider' | 'status_class'>;
  readonly #proxyDuration: Histogram<'provider'>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    this.#requests = new Counter({
      name: 'keyward_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status code.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'keyward_http_request_duration_seconds',
      help: 'Time from a request received to its response sent, by route pattern and method.',
      labelNames: ['route', 'method'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#refreshes = new Counter({
      name: 'keyward_token_refreshes_total',
      help: 'OAuth token refresh outcomes, on read and in the background, by catalog provider slug (custom for every custom provider).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.#authFailures = new Counter({
      name: 'keyward_auth_failures_total',
      help: 'Management API requests refused by the authentication guard, by problem code.',
      labelNames: ['code'],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'keyward_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by what they did to their message: delivered, retrying or failed.',
      labelNames: ['outcome'],
      registers,
    });
    this.#proxyCalls = new Counter({
      name: 'keyward_proxy_requests_total',
      help: "Calls through the gateway's proxy, by catalog provider slug (custom for every custom provider) and the answer's status class.",
      labelNames: ['provider', 'status_class'],
      registers,
    });
    this.#proxyDuration = new Histogram({
      name: 'keyward_proxy_request_duration_seconds',
      help: "Time from a proxied call received to its answer's last byte sent, by catalog provider slug (custom for every custom provider).",
      labelNames: ['provider'],
      buckets: [...DURATION_BUCKETS, 30, 60],
      registers,
    });
    if (options.store) registerDatabaseMetrics(this.registry, options.store);
    if (options.processDefaults ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** One answered request; `route` is the matched pattern or UNMATCHED_ROUTE. */
  request(route: string, method: string, statusCode: number, seconds: number): void {
    this.#requests.inc({ route, method, status: String(statusCode) });
    this.#duration.observe({ route, method }, seconds);
  }

  tokenRefresh(provider: string, outcome: RefreshOutcome): void {
    this.#refreshes.inc({ provider, outcome });
  }

  authFailure(code: string): void {
    this.#authFailures.inc({ code });
  }

  webhookDelivery(outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  proxyCall(provider: string, statusClass: string, seconds: number): void {
    this.#proxyCalls.inc({ provider, status_class: statusClass });
    this.#proxyDuration.observe({ provider }, seconds);
  }

  /** The exposition text of every series, as a scrape gets it. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
