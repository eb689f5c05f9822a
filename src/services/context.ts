import type { Provider } from '../catalog/provider-definition.js';
import type { SignupPolicy } from '../config.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import type { Clock } from '../primitives/clock.js';
import type { Vault } from '../primitives/vault.js';
import type { Store } from '../store/store.js';
import type { Mailer } from './mail/mailer.js';
import type { ServiceObserver } from './observer.js';

/** What every service needs, passed in (no module-level singletons), so a test builds its own. */
export interface ServiceContext {
  store: Store;
  vault: Vault;
  clock: Clock;
  publicUrl: string;
  /** The built-in providers (catalogProvider); a test may stand a local server in for a public provider. */
  catalog: (slug: string) => Provider | undefined;
  /** How long a call to a provider's token or revocation endpoint may take before it counts as an outage. */
  providerTimeoutMs: number;
  /**
   * Every HTTP request Keyward makes (provider endpoints, webhooks) goes through this: the policy of CONTRACT 3.
   * Its `allowPrivateUrls` (KEYWARD_ALLOW_PRIVATE_URLS) is the one copy of that setting, read by the
   * configuration-time checks too, so they and the call-time checks cannot disagree.
   */
  outbound: OutboundHttp;
  /** KEYWARD_REFRESH_COOLDOWN_SECONDS: at most one refresh per credential in this time (CONTRACT 2.6). */
  refreshCooldownSeconds: number;
  /** KEYWARD_SIGNUP: who may create an account from the dashboard (CONTRACT 5). */
  signup: SignupPolicy;
  /** Told of refresh outcomes, guard refusals and webhook deliveries (the metrics); absent, nothing is counted. */
  observer?: ServiceObserver;
  /** Sends email when KEYWARD_SMTP_URL is set (CONTRACT 5); absent, invitations are links shown once and nothing is emailed. */
  mail?: Mailer;
}

/** Who did something, as written in the audit trail and in `createdBy` / `revokedBy`. */
export type Actor = string;
export const CLI_ACTOR: Actor = 'cli';
/** How a dashboard user is named as the actor of what they did (dashboard/actor-names.ts reads it back). */
export const userActor = (userId: string): Actor => `user:${userId}`;
