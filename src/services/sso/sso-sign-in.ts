/**
 * Who an identity the account's provider vouched for becomes (CONTRACT 9): a user of that account
 * signs in; a new person of an allowed domain joins with the account's default role ("just in time");
 * a person with an invitation to the account joins with its role. The account is the one whose
 * provider signed the person in, never another: an email that already signs in to another account is
 * refused, so an account's provider can sign in only that account's people.
 *
 * Every sign-in ends in the one sign-in path of services/users/sessions.ts (startSignedInSession:
 * the user's last sign-in, the `user.signed_in` event, a new session). A join and its sign-in are one
 * transaction. SSO sign-ins ask for no one-time code: the provider authenticated the person.
 */
import { iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import type { TeamRole } from '../../store/schema.js';
import { isUniqueViolation } from '../../store/store-errors.js';
import { recordAudit } from '../audit/audit.js';
import { type ServiceContext, userActor } from '../context.js';
import { MAX_TEAM_SIZE } from '../team/invitations.js';
import { type SessionDevice, startSignedInSession } from '../users/sessions.js';
import { SsoCallbackError, type VerifiedIdentity } from './sso-provider.js';
import { domainsOf } from './sso-settings.js';

/** Refusals a person may meet, each the whole sentence of the 400 page. */
const REFUSED = {
  otherAccount: (email: string) =>
    `${email} already signs in to another Keyward account, so it cannot sign in to this one. Sign in to that account, or ask for another email to be used.`,
  domain: (email: string) => `${email} is not of an email domain this account allows for single sign-on. Ask an administrator of the account.`,
  otherIdentity: (email: string) =>
    `${email} is linked to another identity at your identity provider, so Keyward cannot tell it is you. Ask an administrator of the account.`,
  full: `This account has ${MAX_TEAM_SIZE} users already, the most it may have, so nobody new can join. Ask an administrator of the account.`,
  removed: 'Your user was removed while you were signing in.',
  ownerInvitation: 'This invitation makes you an owner, and owners sign in with a password: open the link again and choose one.',
  owner: 'Owners sign in with their password (and their one-time codes), not through single sign-on. Use “Sign in” with your email and password.',
  invitationGone: 'This invitation is no longer pending: it was used, revoked or has expired. Ask for a new one.',
  joinedAlready: (email: string) => `${email} is a user of this account already: sign in with “Sign in with SSO” instead.`,
  invitationEmail: (invited: string, email: string) =>
    `This invitation is for ${invited}, but your identity provider signed you in as ${email}. Sign in there as ${invited}, or ask for an invitation to ${email}.`,
} as const;

export interface SsoSignedIn {
  token: string;
  userId: string;
  /** Whether the person joined the account now (JIT or through an invitation). */
  joined: boolean;
}

/** The account whose provider signed the person in, as the callback knows it. */
export interface SsoAccount {
  accountId: string;
  allowedDomains: string;
  defaultRole: TeamRole;
}

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/** A new user of the account with `role`, signed in through the provider, with their `user.joined` event. */
async function addSsoUser(
  ctx: ServiceContext,
  accountId: string,
  identity: VerifiedIdentity,
  role: TeamRole,
  joinedHow: { invitationId?: string },
): Promise<string> {
  const now = iso(ctx.clock.now());
  // The account's row lock: two joins of one account at once count its users one after the other.
  await ctx.store.accounts.lock(accountId, now);
  if ((await ctx.store.team.teamSize(accountId, now)).users >= MAX_TEAM_SIZE) throw new SsoCallbackError(REFUSED.full);
  const userId = newId('usr');
  await ctx.store.accounts.addUser({
    id: userId,
    account_id: accountId,
    email: identity.email,
    password_hash: null,
    created_at: now,
    role,
    last_sign_in_at: null,
    sso_subject: identity.subject,
  });
  await recordAudit(ctx, {
    accountId,
    actor: userActor(userId),
    action: 'user.joined',
    targetId: userId,
    detail: { email: identity.email, role, via: 'sso', ...joinedHow },
    at: now,
  });
  return userId;
}

/**
 * Runs `signIn` in one transaction. An email that got a user meanwhile (the unique index refused the
 * new one: the same person signing in twice at once, or a join elsewhere) runs it once more, which
 * then finds that user and answers as for one found; a second refusal is the other account's.
 */
async function inTransaction(ctx: ServiceContext, email: string, signIn: () => Promise<SsoSignedIn>): Promise<SsoSignedIn> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ctx.store.transaction(signIn);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (attempt === 2) throw new SsoCallbackError(REFUSED.otherAccount(email));
    }
  }
}

async function sessionFor(ctx: ServiceContext, userId: string, device: SessionDevice, joined: boolean): Promise<SsoSignedIn> {
  const token = await startSignedInSession(ctx, userId, device, 'sso');
  if (token === null) throw new SsoCallbackError(REFUSED.removed);
  return { token, userId, joined };
}

/**
 * Signs in (or, for a new person, joins and signs in) the person the account's provider vouched for.
 * The email's domain must be one the account allows. A known user whose recorded subject is another
 * (the provider gave their email to someone else) is refused. Throws an SsoCallbackError.
 */
export async function signInThroughSso(ctx: ServiceContext, account: SsoAccount, identity: VerifiedIdentity, device: SessionDevice): Promise<SsoSignedIn> {
  const { email } = identity;
  if (!domainsOf(account.allowedDomains).includes(domainOf(email))) throw new SsoCallbackError(REFUSED.domain(email));
  return inTransaction(ctx, email, async () => {
    const user = await ctx.store.sso.userByEmail(email);
    if (user && user.account_id !== account.accountId) throw new SsoCallbackError(REFUSED.otherAccount(email));
    if (user) {
      // An admin may point the account at an issuer of their own choosing (CONTRACT 9 gives SSO to
      // admins), and that issuer vouches for any email: an owner signed in through it would be an admin
      // made owner. Owners keep their password as the break-glass, and only it.
      if (user.role === 'owner') throw new SsoCallbackError(REFUSED.owner);
      if (user.sso_subject !== null && user.sso_subject !== identity.subject) throw new SsoCallbackError(REFUSED.otherIdentity(email));
      if (user.sso_subject === null) await ctx.store.sso.setSubject(user.id, identity.subject);
      return sessionFor(ctx, user.id, device, false);
    }
    const userId = await addSsoUser(ctx, account.accountId, identity, account.defaultRole, {});
    return sessionFor(ctx, userId, device, true);
  });
}

/**
 * Joins through an invitation's link with the account's provider (CONTRACT 9: "or SSO, where the
 * account has it"): the provider must vouch for the invitation's own email; the person joins with the
 * invitation's role, whatever the allowed domains, and the invitation is claimed by the same guarded
 * statement a join with a password uses, in the transaction that makes the user.
 */
export async function joinThroughSso(
  ctx: ServiceContext,
  input: { accountId: string; invitationToken: string; identity: VerifiedIdentity; device: SessionDevice },
): Promise<SsoSignedIn> {
  const { identity } = input;
  const digest = sha256Hex(input.invitationToken);
  const invitation = await ctx.store.team.invitationByDigest(digest);
  const now = iso(ctx.clock.now());
  if (!invitation || invitation.account_id !== input.accountId || invitation.used_at || invitation.revoked_at || invitation.expires_at <= now) {
    throw new SsoCallbackError(REFUSED.invitationGone);
  }
  if (invitation.email !== identity.email) throw new SsoCallbackError(REFUSED.invitationEmail(invitation.email, identity.email));
  // An owner signs in with a password only (signInThroughSso says why): an owner's invitation is joined with one.
  if (invitation.role === 'owner') throw new SsoCallbackError(REFUSED.ownerInvitation);
  return inTransaction(ctx, identity.email, async () => {
    const user = await ctx.store.sso.userByEmail(identity.email);
    if (user) throw new SsoCallbackError(user.account_id === input.accountId ? REFUSED.joinedAlready(identity.email) : REFUSED.otherAccount(identity.email));
    // Made before the claim names it; the claim failing rolls the user back with the rest.
    const userId = await addSsoUser(ctx, input.accountId, identity, invitation.role, { invitationId: invitation.id });
    if (!(await ctx.store.team.claimInvitation(digest, iso(ctx.clock.now()), userId))) throw new SsoCallbackError(REFUSED.invitationGone);
    return sessionFor(ctx, userId, input.device, true);
  });
}
