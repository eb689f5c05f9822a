/**
 * A server's Webhooks tab (CONTRACT 6 and 7): the endpoints and "Add endpoint" (the signing secret
 * answered once, in the POST's own page, like a new key), one endpoint's deliveries with "Resend" on a
 * failed one, and "Rotate secret" and "Remove" behind confirmation pages. The forms that make a secret
 * act once. Every id in a URL is looked up within the signed-in user's servers, so another account's
 * endpoint or message answers the same 404 as an unknown one.
 */

import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ServiceContext, userActor } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import {
  addWebhookEndpoint,
  DEFAULT_SECRET_GRACE_SECONDS,
  DELIVERIES_SHOWN,
  getWebhookEndpoint,
  listDeliveries,
  listWebhookEndpoints,
  removeWebhookEndpoint,
  resendMessage,
  rotateWebhookSecret,
  type WebhookEndpointView,
} from '../services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../services/webhooks/webhook-events.js';
import { refusalOf } from './domain-errors.js';
import { createOnce } from './form-once.js';
import { Checked, Choice, CreateForm, Filled, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { pageContext } from './plugin.js';
import { type AccountServer, serverOfAccount } from './server-access.js';
import {
  type AddForm,
  EMPTY_ADD_FORM,
  endpointBody,
  endpointUrl,
  removeBody,
  rotateBody,
  SECRET_GRACE_OPTIONS,
  webhookPage,
  webhooksBody,
  webhooksUrl,
} from './webhook-views.js';

/** Notices by code: the query string only picks one of these fixed texts. */
const NOTICES: Record<string, string> = {
  'webhook-removed': 'The endpoint was removed. Nothing more is sent to it.',
  'message-resent': 'The message is pending again: it is sent with the same webhook-id and retried for another 24 hours.',
  'message-not-failed': 'That message is not failed (it was resent already, or delivered), so it was left as it is.',
};

// Event names are the service's to check (an unknown one is refused beside Events), so they are text here.
export const AddEndpointBody = CreateForm({ url: Filled(), events: Checked(Type.String({ maxLength: 100 })) });
export const RotateSecretBody = CreateForm({ grace: Choice(SECRET_GRACE_OPTIONS.map((o) => o.value)) });
/** "Remove" and "Resend": a button and the CSRF token, nothing else. */
const ButtonBody = SignedInForm({});
const NoticeQuery = Query({ notice: Notice });

type ServerParams = { serverId: string };
type EndpointParams = { serverId: string; webhookId: string };
type ServerRoute = { Params: ServerParams; Querystring: Static<typeof NoticeQuery> };
type EndpointRoute = { Params: EndpointParams; Querystring: Static<typeof NoticeQuery> };
type MessageRoute = { Params: EndpointParams & { messageId: string }; Body: Static<typeof ButtonBody> };

/** Checked boxes as a list, however many there were. */
function listOf(value: string | string[] | undefined): string[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

export function registerWebhookPages(scope: FastifyInstance, ctx: ServiceContext) {
  async function accountServer(request: FastifyRequest<{ Params: { serverId: string } }>) {
    return serverOfAccount(ctx, pageContext(request).user.accountId, request.params.serverId);
  }

  /** The server and the endpoint of the URL, both the signed-in user's (else a 404). */
  async function accountEndpoint(request: FastifyRequest<{ Params: { serverId: string; webhookId: string } }>) {
    const server = await accountServer(request);
    const endpoint = await getWebhookEndpoint(ctx, request.params.webhookId, server.id);
    return { server, endpoint };
  }

  async function tabPage(reply: FastifyReply, context: PageContext, server: AccountServer, form: AddForm, notice: string | null, status = 200) {
    const { webhooks } = await listWebhookEndpoints(ctx, server.id);
    return sendPage(reply, webhookPage(context, server, `${server.name}: Webhooks`, webhooksBody(server, context, webhooks, form), { notice }), status);
  }

  async function endpointPage(
    reply: FastifyReply,
    context: PageContext,
    server: AccountServer,
    endpoint: WebhookEndpointView,
    state: { notice?: string | null; secret?: { label: string; value: string } } = {},
  ) {
    const { deliveries } = await listDeliveries(ctx, { webhookId: endpoint.id, serverId: server.id });
    const body = endpointBody(server, endpoint, context, { list: deliveries, shown: DELIVERIES_SHOWN }, state.secret);
    return sendPage(reply, webhookPage(context, server, `${server.name}: Webhook endpoint`, body, { notice: state.notice, endpoint: true }));
  }

  scope.get<ServerRoute>('/servers/:serverId/webhooks', queryRoute(NoticeQuery), async (request, reply) => {
    refuseMalformed(request);
    const server = await accountServer(request);
    return tabPage(reply, pageContext(request), server, EMPTY_ADD_FORM, fixedText(NOTICES, request.query.notice));
  });

  scope.post<{ Params: ServerParams; Body: Static<typeof AddEndpointBody> }>(
    '/servers/:serverId/webhooks',
    formRoute(AddEndpointBody),
    async (request, reply) => {
      const context = pageContext(request);
      const server = await accountServer(request);
      const errors = formErrors(request, { url: 'Enter the URL of your endpoint.', events: 'Choose at least one event.' });
      const form: AddForm = { url: (request.body.url ?? '').trim(), events: listOf(request.body.events), errors: errors ?? {} };
      if (errors) return tabPage(reply, context, server, form, null, 422);
      const target = {
        section: 'servers' as const,
        back: { href: webhooksUrl(server), label: 'Webhooks' },
        lost: 'If you did not see the signing secret, open the new endpoint and rotate its secret with no grace period to get one you can copy.',
      };
      return createOnce(ctx, request.body.once, reply, context, target, async () => {
        try {
          // Every type checked is a subscription to everything, types added later included. Counted as a
          // set of known types: a posted duplicate or unknown name must not pass for "all".
          const checked = new Set(form.events);
          const everything = WEBHOOK_EVENT_TYPES.every((type) => checked.has(type)) && checked.size === WEBHOOK_EVENT_TYPES.length;
          const { webhookId, secret } = await addWebhookEndpoint(ctx, {
            serverId: server.id,
            url: form.url,
            events: everything ? undefined : form.events,
            actor: userActor(context.user.userId),
          });
          const endpoint = await getWebhookEndpoint(ctx, webhookId, server.id);
          // Answered here, not after a redirect: the secret exists only in this response.
          return endpointPage(reply, context, server, endpoint, { notice: 'Endpoint added.', secret: { label: 'Signing secret', value: secret } });
        } catch (error) {
          const refused = refusalOf(error, { url: 'url', events: 'events' });
          return tabPage(reply, context, server, { ...form, errors: refused.errors, problem: refused.problem }, null, refused.status);
        }
      });
    },
  );

  scope.get<EndpointRoute>('/servers/:serverId/webhooks/:webhookId', queryRoute(NoticeQuery), async (request, reply) => {
    refuseMalformed(request);
    const { server, endpoint } = await accountEndpoint(request);
    return endpointPage(reply, pageContext(request), server, endpoint, { notice: fixedText(NOTICES, request.query.notice) });
  });

  scope.get<EndpointRoute>('/servers/:serverId/webhooks/:webhookId/rotate-secret', async (request, reply) => {
    const context = pageContext(request);
    const { server, endpoint } = await accountEndpoint(request);
    const body = rotateBody(server, endpoint, context, String(DEFAULT_SECRET_GRACE_SECONDS));
    return sendPage(reply, webhookPage(context, server, 'Rotate signing secret', body, { endpoint: true }));
  });

  scope.post<{ Params: EndpointParams; Body: Static<typeof RotateSecretBody> }>(
    '/servers/:serverId/webhooks/:webhookId/rotate-secret',
    formRoute(RotateSecretBody),
    async (request, reply) => {
      const context = pageContext(request);
      const { server, endpoint } = await accountEndpoint(request);
      const errors = formErrors(request, { grace: 'Choose a grace period from the list.' });
      const { grace } = request.body;
      if (errors) {
        const body = rotateBody(server, endpoint, context, String(DEFAULT_SECRET_GRACE_SECONDS), errors);
        return sendPage(reply, webhookPage(context, server, 'Rotate signing secret', body, { endpoint: true }), 422);
      }
      const target = {
        section: 'servers' as const,
        back: { href: endpointUrl(server, endpoint.id), label: 'the endpoint' },
        lost: 'If you did not see the new secret, rotate it again: the secret it made is then replaced too.',
      };
      return createOnce(ctx, request.body.once, reply, context, target, async () => {
        const { secret } = await rotateWebhookSecret(ctx, {
          webhookId: endpoint.id,
          serverId: server.id,
          graceSeconds: Number(grace),
          actor: userActor(context.user.userId),
        });
        return endpointPage(reply, context, server, endpoint, {
          notice: 'The signing secret was rotated.',
          secret: { label: 'New signing secret', value: secret },
        });
      });
    },
  );

  scope.get<EndpointRoute>('/servers/:serverId/webhooks/:webhookId/remove', async (request, reply) => {
    const context = pageContext(request);
    const { server, endpoint } = await accountEndpoint(request);
    return sendPage(reply, webhookPage(context, server, 'Remove webhook endpoint', removeBody(server, endpoint, context.csrf), { endpoint: true }));
  });

  scope.post<{ Params: EndpointParams; Body: Static<typeof ButtonBody> }>(
    '/servers/:serverId/webhooks/:webhookId/remove',
    formRoute(ButtonBody),
    async (request, reply) => {
      refuseMalformed(request);
      const { server, endpoint } = await accountEndpoint(request);
      await removeWebhookEndpoint(ctx, { webhookId: endpoint.id, serverId: server.id, actor: userActor(pageContext(request).user.userId) });
      return reply.redirect(`${webhooksUrl(server)}?notice=webhook-removed`, 303);
    },
  );

  scope.post<MessageRoute>('/servers/:serverId/webhooks/:webhookId/messages/:messageId/resend', formRoute(ButtonBody), async (request, reply) => {
    refuseMalformed(request);
    const { server, endpoint } = await accountEndpoint(request);
    const back = endpointUrl(server, endpoint.id);
    try {
      await resendMessage(ctx, { messageId: request.params.messageId, serverId: server.id, actor: userActor(pageContext(request).user.userId) });
    } catch (error) {
      if (error instanceof DomainError && error.code === 'webhook_message_not_failed') return reply.redirect(`${back}?notice=message-not-failed`, 303);
      throw error;
    }
    return reply.redirect(`${back}?notice=message-resent`, 303);
  });
}
