/**
 * Invitations to an account's team (CONTRACT 9): a link, valid 7 days and single-use, that lets the
 * person at an email choose a password and join with the role they were invited with. The link's
 * token is shown once (and emailed, when SMTP is configured); only its SHA-256 is stored, so a leaked
 * table opens no invitation. Joining is joining.ts.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken, newToken } from '../../primitives/random-tokens.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { invitationEmail } from '../mail/invitation-email.js';
import { requireValidEmail } from '../users/accounts.js';
import { requireWellFormed } from '../well-formed.js';
import { atLeast, isTeamRole, TEAM_ROLES, type TeamRole } from './roles.js';
import { actsWithin, mayAct, type TeamActor } from './team-actor.js';

export const INVITATION_LIFETIME_SECONDS = 7 * 24 * 3600;
/** CONTRACT 9: an account has up to 100 users; its pending invitations count towards them. */
export const MAX_TEAM_SIZE = 100;

/** A role named by a person (a form, a flag): one of the four, or a refusal naming the field. */
export function requireRole(role: string): TeamRole {
  if (!isTeamRole(role)) throw invalid('role', `the role must be one of ${TEAM_ROLES.join(', ')}`);
  return role;
}

/** What an invitation's email came to: sent, not sent (the link is still good), or no SMTP configured. */
export type InvitationEmailOutcome = 'sent' | 'failed' | 'off';

export interface NewInvitation {
  invitationId: string;
  /** The link, shown once: it is never stored or shown again. */
  url: string;
  expiresAt: string;
  emailed: InvitationEmailOutcome;
  /** Why the email could not be sent, as the mail library's error code (never its message, which may quote the server). */
  emailError?: string;
}

function accountNotFound(accountId: string): DomainError {
  return new DomainError('account_not_found', { field: 'account', detail: `no account ${accountId}` });
}

export async function invite(ctx: ServiceContext, input: { accountId: string; email: string; role: string; actor: TeamActor }): Promise<NewInvitation> {
  const { accountId, actor } = input;
  if (!actsWithin(actor, accountId)) throw accountNotFound(accountId);
  if (!mayAct(actor, 'team.invite')) throw new DomainError('role_not_allowed', { detail: 'your role cannot invite users' });
  const email = input.email.trim().toLowerCase();
  requireWellFormed({ email: ['email address', email] });
  requireValidEmail(email);
  const role = requireRole(input.role);
  if (actor.kind === 'user' && !atLeast(actor.role, role)) {
    throw new DomainError('role_not_allowed', { field: 'role', detail: `you can invite at most your own role (${actor.role})` });
  }
  const token = newToken();
  const now = ctx.clock.now();
  const expiresAt = iso(addSeconds(now, INVITATION_LIFETIME_SECONDS));
  const invitationId = newId('inv', now.getTime());
  const accountName = await ctx.store.transaction(async () => {
    // The account's row lock: two invitations at once count the team one after the other.
    if (!(await ctx.store.accounts.lock(accountId, iso(now)))) throw accountNotFound(accountId);
    if (await ctx.store.team.accountHasEmail(accountId, email)) {
      throw new DomainError('email_taken', { field: 'email', detail: `this account already has a user with the email ${email}` });
    }
    const size = await ctx.store.team.teamSize(accountId, iso(now));
    if (size.users + size.pending >= MAX_TEAM_SIZE) {
      throw new DomainError('team_limit_reached', {
        detail: `an account has at most ${MAX_TEAM_SIZE} users, pending invitations included: remove a user or revoke an invitation first`,
      });
    }
    await ctx.store.team.createInvitation({
      id: invitationId,
      account_id: accountId,
      email,
      role,
      token_digest: sha256Hex(token),
      invited_by: actor.actor,
      created_at: iso(now),
      expires_at: expiresAt,
      used_at: null,
      used_by: null,
      revoked_at: null,
    });
    // Never the link: the trail says who was invited, and as what.
    await recordAudit(ctx, { accountId, actor: actor.actor, action: 'user.invited', targetId: invitationId, detail: { email, role }, at: iso(now) });
    return (await ctx.store.accounts.nameOf(accountId)) ?? '';
  });
  const url = `${ctx.publicUrl}/dashboard/join/${token}`;
  return { invitationId, url, expiresAt, ...(await emailInvitation(ctx, { to: email, accountName, role, url, expiresAt })) };
}

/**
 * Emails the invitation when SMTP is configured. After the invitation is committed: a send that fails
 * loses nothing, the link is shown all the same and the inviter passes it on.
 */
async function emailInvitation(
  ctx: ServiceContext,
  invitation: Parameters<typeof invitationEmail>[0],
): Promise<{ emailed: InvitationEmailOutcome; emailError?: string }> {
  if (!ctx.mail) return { emailed: 'off' };
  try {
    await ctx.mail.send(invitationEmail(invitation));
    return { emailed: 'sent' };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { emailed: 'failed', emailError: typeof code === 'string' ? code : 'unknown' };
  }
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: TeamRole;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

/** The account's pending invitations (neither used, revoked nor expired), newest first; never a link. */
export async function pendingInvitations(ctx: ServiceContext, accountId: string): Promise<PendingInvitation[]> {
  const rows = await ctx.store.team.pendingInvitations(accountId, iso(ctx.clock.now()));
  return rows.map((row) => ({ id: row.id, email: row.email, role: row.role, invitedBy: row.invited_by, createdAt: row.created_at, expiresAt: row.expires_at }));
}

/** One pending invitation of the account (the confirmation page's), or undefined. */
export async function pendingInvitation(ctx: ServiceContext, accountId: string, invitationId: string) {
  return ctx.store.team.pendingInvitation(accountId, invitationId, iso(ctx.clock.now()));
}

/**
 * Revokes a pending invitation of the actor's account: its link stops working at once. False when it
 * was no longer pending (used, revoked or expired meanwhile) or is not the account's.
 */
export async function revokeInvitation(ctx: ServiceContext, input: { accountId: string; invitationId: string; actor: TeamActor }): Promise<boolean> {
  const { accountId, actor } = input;
  if (!actsWithin(actor, accountId)) return false;
  if (!mayAct(actor, 'team.invite')) throw new DomainError('role_not_allowed', { detail: 'your role cannot revoke invitations' });
  const at = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const revoked = await ctx.store.team.revokeInvitation(accountId, input.invitationId, at);
    if (!revoked) return false;
    await recordAudit(ctx, {
      accountId,
      actor: actor.actor,
      action: 'invitation.revoked',
      targetId: revoked.id,
      detail: { email: revoked.email, role: revoked.role },
      at,
    });
    return true;
  });
}

/**
 * What a link's token opens. Only a pending invitation says whose it is: a used, expired or revoked
 * one says only that, and a token that is malformed or matches nothing is `unknown`, alike.
 */
export type OpenedInvitation =
  | { state: 'pending'; accountName: string; email: string; role: TeamRole; expiresAt: string }
  | { state: 'used' | 'expired' | 'revoked' | 'unknown' };

export async function openInvitation(ctx: ServiceContext, token: string): Promise<OpenedInvitation> {
  if (!isToken(token)) return { state: 'unknown' };
  const found = await ctx.store.team.invitationByDigest(sha256Hex(token));
  if (!found) return { state: 'unknown' };
  if (found.used_at) return { state: 'used' };
  if (found.revoked_at) return { state: 'revoked' };
  if (found.expires_at <= iso(ctx.clock.now())) return { state: 'expired' };
  return { state: 'pending', accountName: found.account_name, email: found.email, role: found.role, expiresAt: found.expires_at };
}
