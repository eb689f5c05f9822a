/**
 * "Team" (CONTRACT 9): the account's users and pending invitations; "Invite" (the link answered once,
 * in the POST's own response, by a form that acts once), a role select with "Change role" per user,
 * and "Remove" and "Revoke invitation" behind confirmation pages. The route table judges each route's
 * least role before it runs (route-actions.ts); the finer rules (only owners make, change or remove
 * owners; at most one's own role when inviting; the last owner stays) are the services', and a
 * refusal is shown on the page in their words. A user or invitation id from a form is looked up
 * through the signed-in user's account: another account's answers as an unknown one.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type ServiceContext, userActor } from '../services/context.js';
import type { DomainErrorCode } from '../services/domain-error.js';
import { mfaRequired } from '../services/mfa/mfa-policy.js';
import { invite, pendingInvitation, revokeInvitation } from '../services/team/invitations.js';
import { TEAM_ROLES } from '../services/team/roles.js';
import type { TeamActor } from '../services/team/team-actor.js';
import { changeRole, listTeam, removeUser, teamUser } from '../services/team/team-users.js';
import { notFoundPage, type Refusal, refusalOf } from './domain-errors.js';
import { createOnce } from './form-once.js';
import { Choice, CreateForm, Filled, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { type PageRoutes, pageContext } from './plugin.js';
import { type InviteForm, removeUserPage, revokeInvitationPage, TEAM_URL, type TeamView, teamPage } from './team-views.js';

/** The notices a redirect may ask for, by code: the page shows only these fixed texts. */
const NOTICES: Record<string, string> = {
  'role-changed': 'Role changed. It counts from that user’s next request.',
  'user-removed': 'User removed. They were signed out everywhere.',
  'invitation-revoked': 'Invitation revoked. Its link no longer works.',
  'invitation-not-pending': 'That invitation is no longer pending: it was used, revoked or has expired.',
};

export const InviteBody = CreateForm({ email: Filled(), role: Choice(TEAM_ROLES) });
export const ChangeRoleBody = SignedInForm({ user: Text(64), role: Choice(TEAM_ROLES) });
export const RemoveUserBody = SignedInForm({ user: Text(64) });
export const RevokeInvitationBody = SignedInForm({ invitation: Text(64) });
const TeamQuery = Query({ notice: Notice });
const RemoveQuery = Query({ user: Text(64) });
const RevokeQuery = Query({ invitation: Text(64) });

/** A refusal's status on this page: the owners' rule is a matter of role (403), the last owner a conflict with what is (409). */
const STATUS: Partial<Record<DomainErrorCode, number>> = { role_not_allowed: 403, last_owner: 409 };
const statusOf = (refused: Refusal) => STATUS[refused.code] ?? refused.status;

function actorOf(context: PageContext): TeamActor {
  const { user } = context;
  return { kind: 'user', actor: userActor(user.userId), userId: user.userId, accountId: user.accountId, role: user.role };
}

async function loadTeamPage(ctx: ServiceContext, context: PageContext, view: Omit<TeamView, 'users' | 'invitations'> = {}): Promise<string> {
  const team = await listTeam(ctx, context.user.accountId);
  return teamPage(context, { ...team, mfaRequired: await mfaRequired(ctx, context.user.accountId), ...view });
}

function redirectToTeam(reply: FastifyReply, notice: keyof typeof NOTICES) {
  return reply.redirect(`${TEAM_URL}?notice=${notice}`, 303);
}

export const registerTeamPages: PageRoutes = (scope, ctx) => {
  scope.get<{ Querystring: Static<typeof TeamQuery> }>('/team', queryRoute(TeamQuery), async (request, reply) => {
    refuseMalformed(request);
    return sendPage(reply, await loadTeamPage(ctx, pageContext(request), { notice: fixedText(NOTICES, request.query.notice) }));
  });

  scope.post<{ Body: Static<typeof InviteBody> }>('/team/invitations', formRoute(InviteBody), async (request, reply) => {
    const context = pageContext(request);
    const errors = formErrors(request, { email: 'Enter the email of the person to invite.', role: 'Choose a role.' });
    const form: InviteForm = { values: { email: (request.body.email ?? '').trim(), role: request.body.role ?? '' }, errors: errors ?? {} };
    if (errors) return sendPage(reply, await loadTeamPage(ctx, context, { form }), 422);
    const target = {
      section: 'team' as const,
      back: { href: TEAM_URL, label: 'Team' },
      lost: 'If you did not see the link it made, revoke the newest pending invitation and invite again.',
    };
    return createOnce(ctx, request.body.once, reply, context, target, async () => {
      try {
        const made = await invite(ctx, { accountId: context.user.accountId, email: form.values.email, role: form.values.role, actor: actorOf(context) });
        // The reason's code only: the link is in the message, and a mail library's message may quote the server.
        if (made.emailed === 'failed') request.log.warn({ invitationId: made.invitationId, reason: made.emailError }, 'invitation email could not be sent');
        const invited = { email: form.values.email.toLowerCase(), role: request.body.role, url: made.url, expiresAt: made.expiresAt, emailed: made.emailed };
        // Answered here, not after a redirect: the link exists only in this response.
        return sendPage(reply, await loadTeamPage(ctx, context, { invited }));
      } catch (error) {
        const refused = refusalOf(error, { email: 'email', role: 'role' });
        const failed = { ...form, errors: refused.errors, problem: refused.problem };
        return sendPage(reply, await loadTeamPage(ctx, context, { form: failed }), statusOf(refused));
      }
    });
  });

  scope.get<{ Querystring: Static<typeof RevokeQuery> }>('/team/invitations/revoke', queryRoute(RevokeQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const invitation = await pendingInvitation(ctx, context.user.accountId, request.query.invitation ?? '');
    if (!invitation) return redirectToTeam(reply, 'invitation-not-pending');
    return sendPage(reply, revokeInvitationPage(context, invitation));
  });

  scope.post<{ Body: Static<typeof RevokeInvitationBody> }>('/team/invitations/revoke', formRoute(RevokeInvitationBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const revoked = await revokeInvitation(ctx, { accountId: context.user.accountId, invitationId: request.body.invitation ?? '', actor: actorOf(context) });
    return redirectToTeam(reply, revoked ? 'invitation-revoked' : 'invitation-not-pending');
  });

  scope.post<{ Body: Static<typeof ChangeRoleBody> }>('/team/role', formRoute(ChangeRoleBody), async (request, reply) => {
    // The select offers only roles: anything else was not sent by this page.
    refuseMalformed(request);
    const context = pageContext(request);
    try {
      await changeRole(ctx, { userId: request.body.user ?? '', role: request.body.role, actor: actorOf(context) });
      return redirectToTeam(reply, 'role-changed');
    } catch (error) {
      const refused = refusalOf(error, {});
      return sendPage(reply, await loadTeamPage(ctx, context, { problem: refused.problem }), statusOf(refused));
    }
  });

  scope.get<{ Querystring: Static<typeof RemoveQuery> }>('/team/remove', queryRoute(RemoveQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const user = await teamUser(ctx, context.user.accountId, request.query.user ?? '');
    if (!user) throw notFoundPage();
    return sendPage(reply, removeUserPage(context, user));
  });

  scope.post<{ Body: Static<typeof RemoveUserBody> }>('/team/remove', formRoute(RemoveUserBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    try {
      await removeUser(ctx, { userId: request.body.user ?? '', actor: actorOf(context) });
      return redirectToTeam(reply, 'user-removed');
    } catch (error) {
      const refused = refusalOf(error, {});
      return sendPage(reply, await loadTeamPage(ctx, context, { problem: refused.problem }), statusOf(refused));
    }
  });
};
