/** `keyward webhook …`: a server's webhook endpoints and what was delivered to them. */
import { CLI_ACTOR } from '../services/context.js';
import {
  addWebhookEndpoint,
  DEFAULT_SECRET_GRACE_SECONDS,
  type DeliveryView,
  listDeliveries,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  resendMessage,
  rotateWebhookSecret,
  type WebhookEndpointView,
} from '../services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../services/webhooks/webhook-events.js';
import { type Command, count, list, optional, str } from './commands.js';

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

export const commands: Record<string, Command> = {
  'webhook add': {
    usage: `webhook add --server S --url U [--events ${WEBHOOK_EVENT_TYPES.join(',')}]`,
    options: { server: { type: 'string', required: true }, url: { type: 'string', required: true }, events: { type: 'string' } },
    run: (ctx, o) => addWebhookEndpoint(ctx, { serverId: str(o, 'server'), url: str(o, 'url'), events: list(optional(o, 'events')), actor: CLI_ACTOR }),
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
};
