/**
 * Opens what the service and the CLI share: the database (migrated to the latest schema) and the
 * vault, once the master key is proven to be the one the data was sealed with (master-key.ts).
 */

import { catalogProvider } from './catalog/catalog.js';
import type { Config } from './config.js';
import { lazyOutbound } from './outbound/lazy-outbound.js';
import { type Clock, systemClock } from './primitives/clock.js';
import { Vault } from './primitives/vault.js';
import type { ServiceContext } from './services/context.js';
import { smtpMailer } from './services/mail/mailer.js';
import { verifyMasterKeys } from './services/sealing/master-key.js';
import { migrateToLatest } from './store/migrate.js';
import { openStore } from './store/store.js';

export async function openContext(config: Config, clock: Clock = systemClock): Promise<{ ctx: ServiceContext; migrations: string[] }> {
  const store = openStore(config.database);
  try {
    const migrations = await migrateToLatest(store);
    await verifyMasterKeys(store, { current: config.masterKey, old: config.oldMasterKeys }, clock.now().toISOString());
    return { ctx: contextOn(store, config, clock), migrations };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * A second context in a process whose openContext has already migrated the database and proven the
 * master key with the same Config (the webhook dispatcher's thread): its own connections, and no
 * write at start. (Repeating the checks took the write lock, and failed the thread's start when a long
 * transaction elsewhere held it past the busy timeout.)
 */
export function openCheckedContext(config: Config, clock: Clock = systemClock): ServiceContext {
  return contextOn(openStore(config.database), config, clock);
}

function contextOn(store: ServiceContext['store'], config: Config, clock: Clock): ServiceContext {
  return {
    store,
    vault: new Vault(config.masterKey, config.oldMasterKeys),
    clock,
    publicUrl: config.publicUrl,
    catalog: catalogProvider,
    providerTimeoutMs: config.providerTimeoutSeconds * 1000,
    outbound: lazyOutbound({ allowPrivateUrls: config.allowPrivateUrls, timeoutMs: config.providerTimeoutSeconds * 1000 }),
    refreshCooldownSeconds: config.refreshCooldownSeconds,
    signup: config.signup,
    ...(config.mail ? { mail: smtpMailer(config.mail) } : {}),
  };
}
