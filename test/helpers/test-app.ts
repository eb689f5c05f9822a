/**
 * Builds the real service on a real database for a test: the same buildApp and services as
 * production, a clock the test can move, and a logger whose lines the test can read.
 */

import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ProxyLimits } from '../../src/api/proxy.js';
import { buildApp } from '../../src/app.js';
import { catalogProvider } from '../../src/catalog/catalog.js';
import type { Provider } from '../../src/catalog/provider-definition.js';
import type { MailSettings, SignupPolicy } from '../../src/config.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createOutbound, type Resolver } from '../../src/outbound/outbound-http.js';
import type { Clock } from '../../src/primitives/clock.js';
import { createLogger } from '../../src/primitives/logger.js';
import { Vault } from '../../src/primitives/vault.js';
import { CLI_ACTOR, type ServiceContext } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { smtpMailer } from '../../src/services/mail/mailer.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { verifyMasterKeys } from '../../src/services/sealing/master-key.js';
import { createServer, type ServerMode } from '../../src/services/servers/servers.js';
import { createAccount } from '../../src/services/users/accounts.js';
import { type DispatcherLimits, WebhookDispatcher } from '../../src/services/webhooks/webhook-delivery.js';
import { WEBHOOK_TIMEOUT_MS } from '../../src/services/webhooks/webhook-retry-policy.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { type Engine, openStore, parseDatabaseUrl } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from './databases.js';

/**
 * The real catalog without its static providers' `verify` requests: the tests' made-up keys are never
 * sent to a real provider when a hosted form is completed (CONTRACT 8.3). A test of checks stands in a
 * provider of its own on 127.0.0.1 (test/gateway/credential-checks.test.ts).
 */
export function catalogWithoutChecks(slug: string): Provider | undefined {
  const provider = catalogProvider(slug);
  if (provider?.kind !== 'static' || provider.api?.verify === undefined) return provider;
  const { verify: _real, ...api } = provider.api;
  return { ...provider, api };
}

/** A clock that stands still until the test moves it. */
export class TestClock implements Clock {
  #now: number;
  constructor(start = Date.now()) {
    this.#now = start;
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(seconds: number): void {
    this.#now += seconds * 1000;
  }
}

export interface TestApp {
  app: FastifyInstance;
  ctx: ServiceContext;
  database: TestDatabase;
  clock: TestClock;
  masterKey: Buffer;
  /** Every log line the service wrote, as JSON text. */
  logs: string[];
  /**
   * This node's webhook dispatcher, as serve runs one, but not started: a test calls drain() (or
   * start()) when it wants deliveries made.
   */
  webhooks: WebhookDispatcher;
  /** The node's metrics, when started with `metrics: true` (told to ctx.observer and the app, as serve does). */
  metrics?: Metrics;
  close(): Promise<void>;
}

export interface TestAppOptions {
  rateLimitPerMinute?: number;
  authFailureLimitPerMinute?: number;
  publicUrl?: string;
  /** Move time with the clock (default) or use the real one. */
  realClock?: boolean;
  trustProxy?: boolean | string[];
  /** Stand-ins for built-in providers (a local server in place of a public one), by slug. */
  catalog?: (slug: string) => Provider | undefined;
  providerTimeoutMs?: number;
  /** KEYWARD_ALLOW_PRIVATE_URLS: true by default here, since the tests' providers listen on 127.0.0.1. */
  allowPrivateUrls?: boolean;
  /** How provider host names resolve (dns.lookup unless given), so a test can point a name at 127.0.0.1. */
  resolve?: Resolver;
  /** KEYWARD_REFRESH_COOLDOWN_SECONDS (default 30, as in production). */
  refreshCooldownSeconds?: number;
  /** KEYWARD_SIGNUP; the suites sign up many users, so `open` unless told. */
  signup?: SignupPolicy;
  /** The webhook dispatcher's bounds (production's unless told). */
  webhookLimits?: Partial<DispatcherLimits>;
  /** Count metrics, as serve does when KEYWARD_METRICS_PORT is set. */
  metrics?: boolean;
  /** A second node's own KEYWARD_MASTER_KEY (the first node's unless told), as during a rotation. */
  masterKey?: Buffer;
  /** KEYWARD_OLD_MASTER_KEYS (none unless told). */
  oldMasterKeys?: Buffer[];
  /** The gateway's limits (the contract's defaults unless told). */
  proxy?: ProxyLimits;
  /** KEYWARD_SMTP_URL and KEYWARD_MAIL_FROM as loadConfig reads them (none unless told: nothing is emailed). */
  mail?: MailSettings;
}

export async function startTestApp(engine: Engine, options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase(engine);
  const masterKey = randomBytes(32);
  const clock = new TestClock();
  const node = await openNode(database.url, masterKey, clock, options);
  return {
    ...node,
    database,
    clock,
    masterKey,
    close: async () => {
      await node.close();
      await database.drop();
    },
  };
}

/** One Keyward process: its own store (connections), vault, logger and app on a database URL. */
async function openNode(url: string, firstMasterKey: Buffer, clock: TestClock, options: TestAppOptions) {
  const masterKey = options.masterKey ?? firstMasterKey;
  const oldMasterKeys = options.oldMasterKeys ?? [];
  const store = openStore(parseDatabaseUrl(url)!);
  await migrateToLatest(store);
  // The start-up check production runs (runtime.ts): the first node records the key, the next prove it.
  await verifyMasterKeys(store, { current: masterKey, old: oldMasterKeys }, clock.now().toISOString());
  const ctx: ServiceContext = {
    store,
    vault: new Vault(masterKey, oldMasterKeys),
    clock: options.realClock ? { now: () => new Date() } : clock,
    publicUrl: options.publicUrl ?? 'http://keyward.test',
    catalog: options.catalog ?? catalogWithoutChecks,
    providerTimeoutMs: options.providerTimeoutMs ?? 5000,
    outbound: createOutbound({
      allowPrivateUrls: options.allowPrivateUrls ?? true,
      timeoutMs: options.providerTimeoutMs ?? 5000,
      ...(options.resolve ? { resolve: options.resolve } : {}),
    }),
    refreshCooldownSeconds: options.refreshCooldownSeconds ?? 30,
    signup: options.signup ?? 'open',
    ...(options.mail ? { mail: smtpMailer(options.mail) } : {}),
  };
  const metrics = options.metrics ? new Metrics({ store }) : undefined;
  ctx.observer = metrics;
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('debug', sink);
  const app = await buildApp({
    ctx,
    logger,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 6000,
    // The suites send many failing requests from one address on purpose.
    authFailureLimitPerMinute: options.authFailureLimitPerMinute ?? 1_000_000,
    trustProxy: options.trustProxy,
    metrics,
    proxy: options.proxy,
  });
  await app.ready();
  const webhookOutbound = createOutbound({ allowPrivateUrls: options.allowPrivateUrls ?? true, timeoutMs: WEBHOOK_TIMEOUT_MS });
  // As serve does: a failure on Keyward's side of a delivery is a log line a test can read.
  const webhooks = new WebhookDispatcher(ctx, webhookOutbound, options.webhookLimits, {
    onError: (error) => logger.warn({ err: { message: error.message } }, 'webhook delivery failed on our side; the message stays due'),
  });
  return {
    app,
    ctx,
    logs,
    webhooks,
    metrics,
    close: async () => {
      await app.close();
      await webhooks.stop();
      await webhookOutbound.close();
      await store.close();
      await ctx.outbound.close();
    },
  };
}

export interface SecondNode {
  app: FastifyInstance;
  ctx: ServiceContext;
  /** This node's own clock, set to the first node's time when it started: move both to keep them in step. */
  clock: TestClock;
  logs: string[];
  webhooks: WebhookDispatcher;
  metrics?: Metrics;
  /** Closes this node only; the database belongs to the first. */
  close(): Promise<void>;
}

/**
 * Another Keyward node on the first one's database, as a second machine behind a load balancer would
 * be: the same URL and master key, but its own connections, vault, clock, logger and app, so nothing
 * they share lives in this process. Give it the options the first node was started with.
 */
export async function startSecondNode(t: TestApp, options: TestAppOptions & { databaseUrl?: string } = {}): Promise<SecondNode> {
  const clock = new TestClock(t.clock.now().getTime());
  // Another way to the same database (through a relay) where a test asks for one.
  const node = await openNode(options.databaseUrl ?? t.database.url, t.masterKey, clock, {
    publicUrl: t.ctx.publicUrl,
    providerTimeoutMs: t.ctx.providerTimeoutMs,
    allowPrivateUrls: t.ctx.outbound.allowPrivateUrls,
    refreshCooldownSeconds: t.ctx.refreshCooldownSeconds,
    signup: t.ctx.signup,
    ...options,
  });
  return { ...node, clock };
}

export interface Tenant {
  accountId: string;
  userId: string;
  serverId: string;
  serverKey: string;
  accountKeyId: string;
  accountKey: string;
}

/** An account with a dashboard user, a server (business mode unless told), and an account key, made through the services. */
export async function createTenant(ctx: ServiceContext, options: { mode?: ServerMode; providers?: string[] } = {}): Promise<Tenant> {
  const suffix = randomBytes(4).toString('hex');
  const { accountId, userId } = await createAccount(ctx, { name: `Tenant ${suffix}`, email: `owner-${suffix}@example.test` });
  const { serverId, serverKey } = await createServer(ctx, { accountId, name: 'Production', mode: options.mode ?? 'business', actor: CLI_ACTOR });
  const { keyId, key } = await createAccountKey(ctx, { accountId, label: 'backend', actor: CLI_ACTOR });
  for (const slug of options.providers ?? ['openai']) await enableProvider(ctx, { serverId, slug, actor: CLI_ACTOR });
  return { accountId, userId, serverId, serverKey, accountKeyId: keyId, accountKey: key };
}

/** The usual start of a suite: the app on `engine`, with one tenant and its two headers. */
export async function startWithTenant(
  engine: Engine,
  options: TestAppOptions = {},
  tenantOptions: Parameters<typeof createTenant>[1] = {},
): Promise<{ t: TestApp; tenant: Tenant; headers: Record<string, string> }> {
  const t = await startTestApp(engine, options);
  const tenant = await createTenant(t.ctx, tenantOptions);
  return { t, tenant, headers: keys(tenant) };
}

/** Another account key of the tenant, and both headers with it beside the tenant's server key. */
export async function newAccountKey(ctx: ServiceContext, tenant: Tenant, options: { label: string; expiresAt?: string }) {
  const { keyId, key } = await createAccountKey(ctx, {
    accountId: tenant.accountId,
    label: options.label,
    expiresAt: options.expiresAt ?? null,
    actor: CLI_ACTOR,
  });
  return { keyId, key, headers: keys({ accountKey: key, serverKey: tenant.serverKey }) };
}

/** Both management headers for a tenant. */
export function keys(tenant: Pick<Tenant, 'accountKey' | 'serverKey'>): Record<string, string> {
  return { authorization: `Bearer ${tenant.accountKey}`, 'x-service-key': tenant.serverKey };
}
