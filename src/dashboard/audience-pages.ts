/**
 * A server's Audience tab: the end users of a business-mode server (with their display name, email
 * and tags, which the tag filter picks by as GET /v1/end-users?tag= does) and their credentials (provider,
 * type, status, dates — never a secret), 20 a page, with a "Revoke" per credential and a "Remove" per
 * end user without credentials, each through a confirmation page whose form POSTs. A personal-mode
 * server has no audience and says so.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { revokeMember } from '../services/audience/member-revocation.js';
import { type CredentialSummary, findMemberCredential, findMemberCredentials, listMembers } from '../services/audience/members.js';
import { type ServiceContext, userActor } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import { listServerProviders } from '../services/providers/server-providers.js';
import { audiencePage, audienceUrl, type ProviderNames, personalModePage, removeMemberPage, revokePage } from './audience-views.js';
import { catalogName } from './display-format.js';
import { notFoundPage, refusalOf } from './domain-errors.js';
import { formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import { pageContext } from './plugin.js';
import { type AccountServer, serverOfAccount } from './server-access.js';

const PAGE_SIZE = 20;

/** What the provider said when asked to revoke the tokens, in fixed words per outcome (never query text). */
const REVOKED: Record<string, string> = {
  succeeded: 'Credential revoked. Keyward erased it and the provider confirmed that its tokens are revoked.',
  failed:
    "Credential revoked. Keyward erased it, but the provider did not confirm revoking its tokens: remove the app's access at the provider if you need to be sure.",
  not_supported: 'Credential revoked. Keyward erased it; this provider offers no way to revoke tokens, so nothing more was sent to it.',
};

/** The other fixed notices of the tab, by `?notice=` code. */
const NOTICES: Record<string, string> = {
  'member-removed': 'End user removed. Their pending connection links were cancelled.',
  'member-has-credentials': 'That end user has a credential now, so it was not removed. Revoke its credentials first.',
};

// Values are kept as given: external user ids are matched exactly, so nothing is trimmed but a slug.
const ListQuery = Query({
  provider: Text(100),
  prefix: Text(1024),
  tag: Text(1024),
  cursor: Text(1024),
  notice: Notice,
  revocation: Text(64),
});
// A credential not named in full is the same 404 as an unknown one.
const CredentialFields = { externalUserId: Text(1024), provider: Text(100) };
const RevokeQuery = Query(CredentialFields);
export const RevokeCredentialBody = SignedInForm(CredentialFields);
const MemberFields = { externalUserId: Text(1024) };
const RemoveQuery = Query(MemberFields);
export const RemoveMemberBody = SignedInForm(MemberFields);

type ServerParams = { serverId: string };

export function registerAudiencePages(scope: FastifyInstance, ctx: ServiceContext) {
  /** The server of the URL, in the signed-in user's account and in business mode (else the same 404 as an unknown one). */
  async function businessServer(request: FastifyRequest<{ Params: ServerParams }>): Promise<AccountServer> {
    const server = await serverOfAccount(ctx, pageContext(request).user.accountId, request.params.serverId);
    // A personal-mode server has no audience: the same 404 as an unknown server.
    if (server.mode !== 'business') throw notFoundPage();
    return server;
  }

  async function providerNames(serverId: string): Promise<ProviderNames> {
    const enabled = await listServerProviders(ctx, serverId);
    const names = new Map(enabled.map((p) => [p.slug, p.name]));
    return {
      options: enabled.map((p) => ({ value: p.slug, label: p.name })),
      nameOf: (slug) => names.get(slug) ?? catalogName(ctx.catalog, slug),
    };
  }

  scope.get<{ Params: ServerParams; Querystring: Static<typeof ListQuery> }>('/servers/:serverId/audience', queryRoute(ListQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    if (server.mode !== 'business') return sendPage(reply, personalModePage(context, server));
    const { query } = request;
    const filter = { provider: (query.provider ?? '').trim(), prefix: query.prefix ?? '', tag: query.tag ?? '' };
    const cursor = query.cursor ?? '';
    const notice = query.notice === 'credential-revoked' ? (fixedText(REVOKED, query.revocation) ?? 'Credential revoked.') : fixedText(NOTICES, query.notice);
    const names = await providerNames(server.id);
    try {
      const members = await listMembers(ctx, server.id, {
        limit: PAGE_SIZE,
        cursor: cursor || undefined,
        provider: filter.provider || undefined,
        prefix: filter.prefix || undefined,
        tag: filter.tag || undefined,
      });
      return sendPage(reply, audiencePage(context, server, { members, filter, cursor, names, notice }));
    } catch (error) {
      // A malformed tag filter is told beside its field, the filter kept for mending; any other refusal (a stale cursor) as before.
      if (!(error instanceof DomainError) || error.field !== 'tag') throw error;
      const { errors, status } = refusalOf(error, { tag: 'tag' });
      const members = { data: [], hasMore: false, nextCursor: null };
      return sendPage(reply, audiencePage(context, server, { members, filter, cursor: '', names, notice, errors }), status);
    }
  });

  /** The credential the revoke URL or form names, or a 404 page when the member or credential is not there. */
  async function namedCredential(server: AccountServer, externalUserId: string, provider: string): Promise<CredentialSummary> {
    // An empty provider would make revokeMember erase every credential of the member: never pass one.
    const found = externalUserId && provider ? await findMemberCredential(ctx, server.id, externalUserId, provider) : null;
    if (!found) throw notFoundPage();
    return found;
  }

  scope.get<{ Params: ServerParams; Querystring: Static<typeof RevokeQuery> }>(
    '/servers/:serverId/audience/revoke',
    queryRoute(RevokeQuery),
    async (request, reply) => {
      refuseMalformed(request);
      const context = pageContext(request);
      const server = await businessServer(request);
      const externalUserId = request.query.externalUserId ?? '';
      const credential = await namedCredential(server, externalUserId, request.query.provider ?? '');
      const { nameOf } = await providerNames(server.id);
      return sendPage(reply, revokePage(context, server, externalUserId, credential, nameOf(credential.provider)));
    },
  );

  scope.post<{ Params: ServerParams; Body: Static<typeof RevokeCredentialBody> }>(
    '/servers/:serverId/audience/revoke',
    formRoute(RevokeCredentialBody),
    async (request, reply) => {
      refuseMalformed(request);
      const { user } = pageContext(request);
      const server = await businessServer(request);
      const externalUserId = request.body.externalUserId ?? '';
      const credential = await namedCredential(server, externalUserId, (request.body.provider ?? '').trim());
      const result = await revokeMember(ctx, {
        accountId: user.accountId,
        serverId: server.id,
        externalUserId,
        provider: credential.provider,
        actor: userActor(user.userId),
      });
      const outcome = result.revoked[0]?.providerRevocation ?? '';
      return reply.redirect(audienceUrl(server, { notice: 'credential-revoked', revocation: outcome }), 303);
    },
  );

  /**
   * The member the remove URL or form names, when it has no credentials: a 404 page when it is not
   * there; a member with credentials is revoked credential by credential, never removed from here.
   */
  async function removableMember(server: AccountServer, externalUserId: string): Promise<'removable' | 'has-credentials'> {
    const credentials = externalUserId ? await findMemberCredentials(ctx, server.id, externalUserId) : null;
    if (!credentials) throw notFoundPage();
    return credentials.length === 0 ? 'removable' : 'has-credentials';
  }
  const hasCredentials = (server: AccountServer) => audienceUrl(server, { notice: 'member-has-credentials' });

  scope.get<{ Params: ServerParams; Querystring: Static<typeof RemoveQuery> }>(
    '/servers/:serverId/audience/remove',
    queryRoute(RemoveQuery),
    async (request, reply) => {
      refuseMalformed(request);
      const context = pageContext(request);
      const server = await businessServer(request);
      const externalUserId = request.query.externalUserId ?? '';
      if ((await removableMember(server, externalUserId)) === 'has-credentials') return reply.redirect(hasCredentials(server), 303);
      return sendPage(reply, removeMemberPage(context, server, externalUserId));
    },
  );

  /** The same removal as DELETE /v1/end-users/{id} without a provider: pending flows and forms are cancelled, the removal audited. */
  scope.post<{ Params: ServerParams; Body: Static<typeof RemoveMemberBody> }>(
    '/servers/:serverId/audience/remove',
    formRoute(RemoveMemberBody),
    async (request, reply) => {
      refuseMalformed(request);
      const { user } = pageContext(request);
      const server = await businessServer(request);
      const externalUserId = request.body.externalUserId ?? '';
      if (!externalUserId) throw notFoundPage();
      try {
        await revokeMember(ctx, {
          accountId: user.accountId,
          serverId: server.id,
          externalUserId,
          onlyWithoutCredentials: true,
          actor: userActor(user.userId),
        });
      } catch (error) {
        // A member gone meanwhile is the 404 page (refusalOf throws it); one that got a credential is told so.
        refusalOf(error, {});
        return reply.redirect(hasCredentials(server), 303);
      }
      return reply.redirect(audienceUrl(server, { notice: 'member-removed' }), 303);
    },
  );
}
