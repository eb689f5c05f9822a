/**
 * The operator CLI's commands (CONTRACT 4). Each reads its options, calls the same services as the
 * HTTP API, and returns the object that `--json` prints; `text` says the same for a person.
 */
import { createAccount } from '../services/accounts.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../services/account-keys.js';
import { CLI_ACTOR, type ServiceContext } from '../services/context.js';
import { rotateMasterKey } from '../services/master-key-rotation.js';
import { addCustomOAuthProvider, addCustomStaticProvider, enableProvider, parseFieldSpec } from '../services/providers.js';
import { allowRedirectUri, createServer, rotateServerKey, setServerMode, type ServerMode } from '../services/servers.js';
import { ServiceError } from '../services/service-error.js';
import {
  addWebhookEndpoint,
  DEFAULT_SECRET_GRACE_SECONDS,
  listDeliveries,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  resendMessage,
  rotateWebhookSecret,
  type DeliveryView,
  type WebhookEndpointView,
} from '../services/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../services/webhook-events.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  required?: boolean;
}

export type Options = Record<string, string | string[] | boolean | undefined>;

export interface Command {
  usage: string;
  options: Record<string, OptionSpec>;
  run(ctx: ServiceContext, options: Options): Promise<Record<string, unknown>>;
  text(result: Record<string, unknown>): string;
}

const str = (options: Options, name: string): string => options[name] as string;
const optional = (options: Options, name: string): string | undefined => options[name] as string | undefined;
const list = (value: string | undefined): string[] | undefined =>
  value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);

const SHOWN_ONCE = 'shown once: store it now, only its hint is kept';
const SECRET_SHOWN_ONCE = 'shown once: store it in your receiver now, Keyward keeps it encrypted and never shows it again';

function endpointLine(e: WebhookEndpointView): string {
  const events = e.events.length === WEBHOOK_EVENT_TYPES.length ? 'all events' : e.events.join(',');
  return `${e.id}  ${e.url}  ${events}  created ${e.createdAt}`;
}

function deliveryLines(d: DeliveryView): string {
  const due = d.nextAttemptAt ? `  next attempt ${d.nextAttemptAt}` : '';
  const head = `${d.messageId}  ${d.type}  ${d.createdAt}  ${d.status}${due}`;
  const attempts = d.attempts.map((a) => `    ${a.attemptedAt}  ${a.statusCode ?? a.error}  ${a.durationMs} ms`);
  return [head, ...(attempts.length ? attempts : ['    no attempt yet'])].join('\n');
}

/** A whole-number option; the service that takes it says what range it accepts. */
function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new ServiceError('invalid', `--${name} must be a whole number`);
  return Number(value);
}

export const COMMANDS: Record<string, Command> = {
  'account create': {
    usage: 'account create --name N --email E [--password P]',
    options: { name: { type: 'string', required: true }, email: { type: 'string', required: true }, password: { type: 'string' } },
    run: (ctx, o) => createAccount(ctx, { name: str(o, 'name'), email: str(o, 'email'), password: optional(o, 'password') }),
    text: (r) => `Account ${r.accountId} created, with member ${r.userId}.`,
  },
  'server create': {
    usage: 'server create --account A --name N [--mode business|personal]',
    options: { account: { type: 'string', required: true }, name: { type: 'string', required: true }, mode: { type: 'string' } },
    run: (ctx, o) =>
      createServer(ctx, {
        accountId: str(o, 'account'),
        name: str(o, 'name'),
        mode: (optional(o, 'mode') ?? 'business') as ServerMode,
        actor: CLI_ACTOR,
      }),
    text: (r) => `Server ${r.serverId} created.\nServer API key (${SHOWN_ONCE}):\n${r.serverKey}`,
  },
  'server mode': {
    usage: 'server mode --server S --mode business|personal',
    options: { server: { type: 'string', required: true }, mode: { type: 'string', required: true } },
    run: (ctx, o) => setServerMode(ctx, str(o, 'server'), str(o, 'mode') as ServerMode, CLI_ACTOR),
    text: (r) => `Server ${r.serverId} is now in ${r.mode} mode.`,
  },
  'server rotate-key': {
    usage: 'server rotate-key --server S [--grace-seconds N]',
    options: { server: { type: 'string', required: true }, 'grace-seconds': { type: 'string' } },
    run: (ctx, o) => rotateServerKey(ctx, str(o, 'server'), count(optional(o, 'grace-seconds'), 'grace-seconds') ?? 0, CLI_ACTOR),
    text: (r) => `New server API key for ${r.serverId} (${SHOWN_ONCE}):\n${r.serverKey}`,
  },
  'server allow-redirect': {
    usage: 'server allow-redirect --server S --uri U',
    options: { server: { type: 'string', required: true }, uri: { type: 'string', required: true } },
    run: (ctx, o) => allowRedirectUri(ctx, str(o, 'server'), str(o, 'uri')),
    text: (r) => `Allowed redirect URIs of ${r.serverId}:\n${(r.redirectUris as string[]).join('\n')}`,
  },
  'key create': {
    usage: 'key create --account A --label L [--environment production|staging|development|other] [--expires-at T]',
    options: {
      account: { type: 'string', required: true },
      label: { type: 'string', required: true },
      environment: { type: 'string' },
      'expires-at': { type: 'string' },
    },
    run: (ctx, o) =>
      createAccountKey(ctx, {
        accountId: str(o, 'account'),
        label: str(o, 'label'),
        environment: optional(o, 'environment'),
        expiresAt: optional(o, 'expires-at'),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Account API key ${r.keyId} (${SHOWN_ONCE}):\n${r.key}`,
  },
  'key revoke': {
    usage: 'key revoke --key K',
    options: { key: { type: 'string', required: true } },
    run: (ctx, o) => revokeAccountKey(ctx, str(o, 'key'), CLI_ACTOR),
    text: (r) => `Account API key ${r.keyId} revoked at ${r.revokedAt}.`,
  },
  'key list': {
    usage: 'key list --account A',
    options: { account: { type: 'string', required: true } },
    run: async (ctx, o) => ({ keys: await listAccountKeys(ctx, str(o, 'account')) }),
    text: (r) => {
      const keys = r.keys as Awaited<ReturnType<typeof listAccountKeys>>;
      if (keys.length === 0) return 'No account API keys.';
      return keys
        .map((k) => {
          const status = k.revokedAt ? `revoked ${k.revokedAt}` : k.expiresAt && k.expiresAt <= new Date().toISOString() ? 'expired' : 'active';
          const exposure = k.browserExposure ? `  WARNING: used from a browser at ${k.browserExposure.origin}` : '';
          return `${k.id}  ${k.hint}  ${k.environment}  "${k.label}"  ${status}  last used ${k.lastUsedAt ?? 'never'}${exposure}`;
        })
        .join('\n');
    },
  },
  'provider enable': {
    usage: 'provider enable --server S --provider P [--client-id ID --client-secret SECRET --scopes a,b]',
    options: {
      server: { type: 'string', required: true },
      provider: { type: 'string', required: true },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scopes: { type: 'string' },
    },
    run: (ctx, o) =>
      enableProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'provider'),
        clientId: optional(o, 'client-id'),
        clientSecret: optional(o, 'client-secret'),
        scopes: list(optional(o, 'scopes')),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Provider ${r.provider} enabled on ${r.serverId}.`,
  },
  'provider add-oauth': {
    usage:
      'provider add-oauth --server S --slug P --authorization-url U --token-url U [--revocation-url U] --client-id ID --client-secret SECRET [--scopes a,b] [--token-auth client_secret_basic|client_secret_post] [--name N]',
    options: {
      server: { type: 'string', required: true },
      slug: { type: 'string', required: true },
      name: { type: 'string' },
      'authorization-url': { type: 'string', required: true },
      'token-url': { type: 'string', required: true },
      'revocation-url': { type: 'string' },
      'client-id': { type: 'string', required: true },
      'client-secret': { type: 'string', required: true },
      scopes: { type: 'string' },
      'token-auth': { type: 'string' },
    },
    run: (ctx, o) =>
      addCustomOAuthProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'slug'),
        name: optional(o, 'name'),
        authorizationUrl: str(o, 'authorization-url'),
        tokenUrl: str(o, 'token-url'),
        revocationUrl: optional(o, 'revocation-url'),
        clientId: str(o, 'client-id'),
        clientSecret: str(o, 'client-secret'),
        scopes: list(optional(o, 'scopes')),
        tokenAuth: optional(o, 'token-auth'),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Custom OAuth provider ${r.provider} added to ${r.serverId} and enabled.`,
  },
  'provider add-static': {
    usage: 'provider add-static --server S --slug P --field name:Label[:secret][:optional] … [--name N]',
    options: {
      server: { type: 'string', required: true },
      slug: { type: 'string', required: true },
      name: { type: 'string' },
      field: { type: 'string', multiple: true, required: true },
    },
    run: (ctx, o) =>
      addCustomStaticProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'slug'),
        name: optional(o, 'name'),
        fields: (o.field as string[]).map(parseFieldSpec),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Custom static provider ${r.provider} added to ${r.serverId} and enabled.`,
  },
  'webhook add': {
    usage: `webhook add --server S --url U [--events ${WEBHOOK_EVENT_TYPES.join(',')}]`,
    options: { server: { type: 'string', required: true }, url: { type: 'string', required: true }, events: { type: 'string' } },
    run: (ctx, o) =>
      addWebhookEndpoint(ctx, { serverId: str(o, 'server'), url: str(o, 'url'), events: list(optional(o, 'events')), actor: CLI_ACTOR }),
    text: (r) => `Webhook endpoint ${r.webhookId} added.\nSigning secret (${SECRET_SHOWN_ONCE}):\n${r.secret}`,
  },
  'webhook list': {
    usage: 'webhook list --server S',
    options: { server: { type: 'string', required: true } },
    run: (ctx, o) => listWebhookEndpoints(ctx, str(o, 'server')),
    text: (r) => {
      const webhooks = r.webhooks as WebhookEndpointView[];
      return webhooks.length ? webhooks.map(endpointLine).join('\n') : 'No webhook endpoints.';
    },
  },
  'webhook remove': {
    usage: 'webhook remove --webhook W',
    options: { webhook: { type: 'string', required: true } },
    run: (ctx, o) => removeWebhookEndpoint(ctx, { webhookId: str(o, 'webhook'), actor: CLI_ACTOR }),
    text: (r) => `Webhook endpoint ${r.webhookId} removed at ${r.removedAt}: nothing more is sent to it.`,
  },
  'webhook rotate-secret': {
    usage: `webhook rotate-secret --webhook W [--grace-seconds N, default ${DEFAULT_SECRET_GRACE_SECONDS}]`,
    options: { webhook: { type: 'string', required: true }, 'grace-seconds': { type: 'string' } },
    run: (ctx, o) =>
      rotateWebhookSecret(ctx, {
        webhookId: str(o, 'webhook'),
        graceSeconds: count(optional(o, 'grace-seconds'), 'grace-seconds') ?? DEFAULT_SECRET_GRACE_SECONDS,
        actor: CLI_ACTOR,
      }),
    text: (r) =>
      `New signing secret for ${r.webhookId} (${SECRET_SHOWN_ONCE}):\n${r.secret}\n` +
      'Until the grace period ends, every message is signed with the old secret too.',
  },
  'webhook deliveries': {
    usage: 'webhook deliveries --webhook W [--status pending|delivered|failed]',
    options: { webhook: { type: 'string', required: true }, status: { type: 'string' } },
    run: (ctx, o) => listDeliveries(ctx, { webhookId: str(o, 'webhook'), status: optional(o, 'status') }),
    text: (r) => {
      const deliveries = r.deliveries as DeliveryView[];
      return deliveries.length ? deliveries.map(deliveryLines).join('\n') : 'No deliveries.';
    },
  },
  'webhook resend': {
    usage: 'webhook resend --message M',
    options: { message: { type: 'string', required: true } },
    run: (ctx, o) => resendMessage(ctx, { messageId: str(o, 'message'), actor: CLI_ACTOR }),
    text: (r) => `Message ${r.messageId} is ${r.status} again: it is sent with the same webhook-id and retried for another 24 hours.`,
  },
  'master-key rotate': {
    usage: 'master-key rotate [--batch-size N] [--max-batches N]',
    options: { 'batch-size': { type: 'string' }, 'max-batches': { type: 'string' } },
    run: async (ctx, o) => ({
      ...(await rotateMasterKey(ctx, {
        batchSize: count(optional(o, 'batch-size'), 'batch-size'),
        maxBatches: count(optional(o, 'max-batches'), 'max-batches'),
      })),
    }),
    text: (r) =>
      `Resealed ${r.resealed} values under the current master key; ${r.remaining} remain.\n` +
      (r.remaining === 0
        ? 'The old master keys are retired: remove KEYWARD_OLD_MASTER_KEYS from every node.'
        : 'Run it again (values changed meanwhile, or were sealed under a key not given in KEYWARD_OLD_MASTER_KEYS).'),
  },
};
