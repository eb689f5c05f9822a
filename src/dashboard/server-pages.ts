/**
 * Servers (CONTRACT 6, issue 4.3): the account's servers and the create form, and one server's Overview
 * tab — its mode, whether credentials can be read through the API (8.2), its server key ("Rotate key",
 * with a grace period) and its allowed redirect URIs.
 * A new or rotated key is answered in the POST's own 200 page (never after a redirect), so a later
 * visit cannot show it again; both forms act once, so a reload of that page makes no second server
 * or key.
 */

import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { readBranding } from '../services/branding/branding.js';
import { type ServiceContext, userActor } from '../services/context.js';
import {
  allowRedirectUri,
  createServer,
  getServer,
  listLiveServerKeys,
  listRedirectUris,
  listServersOfAccount,
  removeRedirectUri,
  rotateServerKey,
  type ServerMode,
  setSecretsReadable,
  setServerMode,
} from '../services/servers/servers.js';
import { refusalOf } from './domain-errors.js';
import { createOnce } from './form-once.js';
import { Choice, CreateForm, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { pageContext } from './plugin.js';
import { type AccountServer, serverOfAccount } from './server-access.js';
import { GRACE_OPTIONS, type OverviewState, overviewPage, type ServerFormState, serversPage } from './server-views.js';

export const CreateServerBody = CreateForm({ name: Text(), mode: Text() });
export const ModeBody = SignedInForm({ mode: Text() });
// A checked box sends "true"; an unchecked one sends nothing, which is "off".
export const SecretsReadableBody = SignedInForm({ readable: Type.Optional(Choice(['true'])) });
export const RotateKeyBody = CreateForm({ grace: Choice(GRACE_OPTIONS.map((o) => o.value)) });
export const RedirectUriBody = SignedInForm({ uri: Text() });
const OverviewQuery = Query({ notice: Notice });

type Params = { Params: { serverId: string } };

/** What a `?notice=` code says: fixed texts only, so the query string never reaches the page. */
const NOTICES: Record<string, string> = {
  'mode-changed': 'The mode was changed.',
  'mode-unchanged': 'The server was already in that mode.',
  'secrets-readable': 'Credentials can be read through the API again.',
  'secrets-withheld': 'Credentials can no longer be read through the API: the read withholds their secrets.',
  'secrets-unchanged': 'Nothing was changed.',
  'redirect-added': 'The redirect URI was added.',
  'redirect-removed': 'The redirect URI was removed.',
  'redirect-missing': 'That redirect URI was not on the list.',
};

export function registerServerPages(scope: FastifyInstance, ctx: ServiceContext) {
  async function listPage(context: PageContext, form?: ServerFormState) {
    return serversPage(context, await listServersOfAccount(ctx, context.user.accountId), form);
  }

  async function overview(context: PageContext, server: AccountServer, state?: OverviewState) {
    const [keys, uris, row, branding] = await Promise.all([
      listLiveServerKeys(ctx, server.id),
      listRedirectUris(ctx, server.id),
      getServer(ctx, server.id),
      readBranding(ctx, server.id),
    ]);
    return overviewPage(context, server, { keys, uris, secretsReadable: row.secrets_readable !== 0, branding }, state);
  }

  scope.get('/servers', async (request, reply) => sendPage(reply, await listPage(pageContext(request))));

  scope.post<{ Body: Static<typeof CreateServerBody> }>('/servers', formRoute(CreateServerBody), async (request, reply) => {
    const context = pageContext(request);
    // Only a text past the server's bound can fail here: the name's and the mode's rules are the service's.
    const errors = formErrors(request);
    const values = { name: request.body.name ?? '', mode: request.body.mode ?? '' };
    if (errors) return sendPage(reply, await listPage(context, { values, errors }), 422);
    const target = {
      section: 'servers' as const,
      back: { href: '/dashboard/servers', label: 'Servers' },
      lost: 'If you did not see the server it made, it is in the list: rotate its key there to get one you can copy.',
    };
    return createOnce(ctx, request.body.once, reply, context, target, async () => {
      try {
        const { serverId, serverKey } = await createServer(ctx, {
          accountId: context.user.accountId,
          name: values.name,
          mode: values.mode as ServerMode,
          actor: userActor(context.user.userId),
        });
        const server = await serverOfAccount(ctx, context.user.accountId, serverId);
        return sendPage(reply, await overview(context, server, { notice: 'Server created.', secret: { label: 'Server API key', value: serverKey } }));
      } catch (error) {
        const refused = refusalOf(error, { name: 'name', mode: 'mode' });
        return sendPage(reply, await listPage(context, { values, errors: refused.errors, problem: refused.problem }), refused.status);
      }
    });
  });

  scope.get<Params & { Querystring: Static<typeof OverviewQuery> }>('/servers/:serverId', queryRoute(OverviewQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    const notice = fixedText(NOTICES, request.query.notice);
    return sendPage(reply, await overview(context, server, { notice }));
  });

  scope.post<Params & { Body: Static<typeof ModeBody> }>('/servers/:serverId/mode', formRoute(ModeBody), async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    const errors = formErrors(request);
    if (errors) return sendPage(reply, await overview(context, server, { errors }), 422);
    const mode = request.body.mode ?? '';
    // No change, no audit event: the trail should list only real changes.
    if (mode === server.mode) return reply.redirect(`/dashboard/servers/${server.id}?notice=mode-unchanged`, 303);
    try {
      await setServerMode(ctx, server.id, mode as ServerMode, userActor(context.user.userId));
    } catch (error) {
      const refused = refusalOf(error, { mode: 'mode' });
      return sendPage(reply, await overview(context, server, { errors: refused.errors, problem: refused.problem }), refused.status);
    }
    return reply.redirect(`/dashboard/servers/${server.id}?notice=mode-changed`, 303);
  });

  scope.post<Params & { Body: Static<typeof SecretsReadableBody> }>(
    '/servers/:serverId/secrets-readable',
    formRoute(SecretsReadableBody),
    async (request, reply) => {
      // A box has no text to correct: anything but "true" or nothing is a request our page did not make.
      refuseMalformed(request);
      const context = pageContext(request);
      const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
      const readable = request.body.readable === 'true';
      // Compared and changed in one transaction by the service: no change, no audit event.
      const { changed } = await setSecretsReadable(ctx, server.id, readable, userActor(context.user.userId));
      const notice = !changed ? 'secrets-unchanged' : readable ? 'secrets-readable' : 'secrets-withheld';
      return reply.redirect(`/dashboard/servers/${server.id}?notice=${notice}`, 303);
    },
  );

  scope.post<Params & { Body: Static<typeof RotateKeyBody> }>('/servers/:serverId/rotate-key', formRoute(RotateKeyBody), async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    const errors = formErrors(request, { grace: 'Choose a grace period from the list.' });
    if (errors) return sendPage(reply, await overview(context, server, { errors }), 422);
    const { grace } = request.body;
    const target = {
      section: 'servers' as const,
      back: { href: `/dashboard/servers/${server.id}`, label: server.name },
      lost: 'If you did not see the new key, rotate the key again: the key it made is then replaced too.',
    };
    return createOnce(ctx, request.body.once, reply, context, target, async () => {
      const { serverKey } = await rotateServerKey(ctx, server.id, Number(grace), userActor(context.user.userId));
      return sendPage(
        reply,
        await overview(context, server, {
          notice: 'The server key was rotated.',
          secret: { label: 'New server API key', value: serverKey },
          values: { grace },
        }),
      );
    });
  });

  scope.post<Params & { Body: Static<typeof RedirectUriBody> }>('/servers/:serverId/redirect-uris', formRoute(RedirectUriBody), async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    const errors = formErrors(request);
    const uri = (request.body.uri ?? '').trim();
    if (errors) return sendPage(reply, await overview(context, server, { values: { uri }, errors }), 422);
    try {
      await allowRedirectUri(ctx, server.id, uri, userActor(context.user.userId));
    } catch (error) {
      const refused = refusalOf(error, { redirectUri: 'uri' });
      return sendPage(reply, await overview(context, server, { values: { uri }, errors: refused.errors, problem: refused.problem }), refused.status);
    }
    return reply.redirect(`/dashboard/servers/${server.id}?notice=redirect-added`, 303);
  });

  scope.post<Params & { Body: Static<typeof RedirectUriBody> }>(
    '/servers/:serverId/redirect-uris/remove',
    formRoute(RedirectUriBody),
    async (request, reply) => {
      refuseMalformed(request);
      const context = pageContext(request);
      const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
      const removed = await removeRedirectUri(ctx, server.id, request.body.uri ?? '', userActor(context.user.userId));
      return reply.redirect(`/dashboard/servers/${server.id}?notice=${removed ? 'redirect-removed' : 'redirect-missing'}`, 303);
    },
  );
}
