/**
 * Joining an account through an invitation's link (CONTRACT 9): the person chooses a password, becomes
 * a user with the invitation's role, and is signed in. Apart from invitations.ts so that the CLI,
 * which invites but never joins, does not load the sign-in service.
 */
import { iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isUniqueViolation } from '../../store/store-errors.js';
import { recordAudit } from '../audit/audit.js';
import { type ServiceContext, userActor } from '../context.js';
import { DomainError } from '../domain-error.js';
import { type SecondStep, secondStepOf } from '../mfa/mfa-policy.js';
import { requireAcceptablePassword } from '../users/accounts.js';
import { hashPassword } from '../users/passwords.js';
import { createSession, type SessionDevice } from '../users/sessions.js';
import { MAX_TEAM_SIZE, type OpenedInvitation, openInvitation } from './invitations.js';

export type JoinResult =
  | { joined: true; userId: string; accountId: string; sessionToken: string }
  /** Joined, but the account requires one-time codes: the new user turns them on before any session (services/users/second-step.ts). */
  | { joined: true; userId: string; accountId: string; email: string; secondStep: SecondStep }
  /** Nothing changed: the link was not pending (any more). */
  | { joined: false; state: Exclude<OpenedInvitation['state'], 'pending'> };

/** Emails are unique on the whole instance: one email signs in to one account. */
function emailHasUser(): DomainError {
  return new DomainError('email_taken', {
    detail: 'this email already signs in to Keyward, so it cannot join another account: sign in with it, or ask for an invitation to another email',
  });
}

/**
 * Joins with the link's token. The invitation is claimed by one guarded UPDATE (pending, and not yet
 * used, revoked or expired) in the same transaction that makes the user, so a link joins once however
 * many joins race on however many nodes; anything that refuses the join afterwards (the email got a
 * user meanwhile, the team is full) rolls the claim back with the rest.
 */
export async function join(ctx: ServiceContext, input: { token: string; password: string; device: SessionDevice }): Promise<JoinResult> {
  requireAcceptablePassword(input.password);
  // Before any work: scrypt is the costly part, and a link that is not pending needs none.
  const opened = await openInvitation(ctx, input.token);
  if (opened.state !== 'pending') return { joined: false, state: opened.state };
  const passwordHash = await hashPassword(input.password);
  const now = iso(ctx.clock.now());
  const userId = newId('usr');
  let joined: { accountId: string } | undefined;
  try {
    joined = await ctx.store.transaction(async () => {
      const invitation = await ctx.store.team.claimInvitation(sha256Hex(input.token), now, userId);
      if (!invitation) return undefined;
      // The account's row lock: two joins of one account at once count its users one after the other.
      await ctx.store.accounts.lock(invitation.account_id, now);
      if ((await ctx.store.team.teamSize(invitation.account_id, now)).users >= MAX_TEAM_SIZE) {
        throw new DomainError('team_limit_reached', { detail: `the account has ${MAX_TEAM_SIZE} users already, the most it may have` });
      }
      if (await ctx.store.accounts.userByEmail(invitation.email)) throw emailHasUser();
      // "Require SSO" turns passwords off for all but owners: a password join would make one (CONTRACT 9).
      if (invitation.role !== 'owner' && (await ctx.store.sso.required(invitation.account_id))) {
        throw new DomainError('sso_required', { detail: 'this account requires single sign-on: join with "Join with SSO"' });
      }
      await ctx.store.accounts.addUser({
        id: userId,
        account_id: invitation.account_id,
        email: invitation.email,
        password_hash: passwordHash,
        created_at: now,
        role: invitation.role,
        // Joining signs the person in (the session below).
        last_sign_in_at: now,
      });
      await recordAudit(ctx, {
        accountId: invitation.account_id,
        actor: userActor(userId),
        action: 'user.joined',
        targetId: userId,
        detail: { email: invitation.email, role: invitation.role, invitationId: invitation.id },
        at: now,
      });
      return { accountId: invitation.account_id };
    });
  } catch (error) {
    // The same email joining elsewhere at this very moment: its insert won, this one changes nothing.
    if (isUniqueViolation(error)) throw emailHasUser();
    throw error;
  }
  if (!joined) {
    // Claimed by another join meanwhile, or revoked, or just expired: say which, as the link's page would.
    const now = await openInvitation(ctx, input.token);
    return { joined: false, state: now.state === 'pending' ? 'unknown' : now.state };
  }
  // "Require MFA" holds from the first sign-in on, and joining is one (CONTRACT 9).
  const second = await secondStepOf(ctx, userId);
  if (second) return { joined: true, userId, accountId: joined.accountId, email: opened.email, secondStep: second.step };
  return { joined: true, userId, accountId: joined.accountId, sessionToken: await createSession(ctx, userId, input.device) };
}
