/**
 * Dashboard users: sign-up, sign-in with a lock-out after repeated failures, and sessions kept in
 * the database (only a digest of the cookie's token is stored, so a leaked table opens no session).
 *
 * Neither sign-up nor sign-in tells whether an email has an account: both run scrypt exactly once
 * whatever the email, the lock-out counts every email alike (sign-in-attempts.ts), and sign-up
 * answers the same whether it made an account or found the email taken. A failed sign-in is written
 * to the audit trail of the account whose user has the email, by one statement that writes nothing
 * for an unknown email: the same work either way.
 *
 * A user sees and ends their own live sessions on the "Security" page (CONTRACT 9); each session
 * keeps the device it signed in from.
 */
import { randomBytes } from 'node:crypto';
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken, newToken } from '../../primitives/random-tokens.js';
import type { TeamRole } from '../../store/schema.js';
import { type AuditAction, recordAudit } from '../audit/audit.js';
import { type ServiceContext, userActor } from '../context.js';
import { DomainError } from '../domain-error.js';
import { type SecondStep, secondStepOf } from '../mfa/mfa-policy.js';
import { createAccount } from './accounts.js';
import { deviceName, KEPT_USER_AGENT_LENGTH } from './device-names.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { clearSignInAttempts, MAX_SIGN_IN_ATTEMPTS, returnSignInAttempt, takeSignInAttempt } from './sign-in-attempts.js';

/** A session ends after this long without a request (CONTRACT 9)… */
export const SESSION_IDLE_SECONDS = 12 * 3600;
/** …and this long after sign-in, whatever its use. */
export const SESSION_LIFETIME_SECONDS = 7 * 24 * 3600;
/** A session's last request is written at most this often: every request reads the session, few need write it. */
const SEEN_EVERY_SECONDS = 60;

export interface UserSession {
  sessionId: string;
  userId: string;
  accountId: string;
  email: string;
  accountName: string;
  role: TeamRole;
}

/** Where a browser signs in from, kept with its session for the user's list of sessions. */
export interface SessionDevice {
  userAgent: string | undefined;
  address: string;
}

/** A new session: a fresh random token every time, so no id chosen before sign-in survives it. */
export async function createSession(ctx: ServiceContext, userId: string, device: SessionDevice): Promise<string> {
  const token = newToken();
  const now = ctx.clock.now();
  const endsAt = iso(addSeconds(now, SESSION_LIFETIME_SECONDS));
  await ctx.store.sessions.create({
    id: newId('ses'),
    token_digest: sha256Hex(token),
    user_id: userId,
    created_at: iso(now),
    expires_at: iso(addSeconds(now, SESSION_IDLE_SECONDS)),
    ends_at: endsAt,
    last_seen_at: iso(now),
    user_agent: device.userAgent?.slice(0, KEPT_USER_AGENT_LENGTH) ?? null,
    address: device.address,
  });
  return token;
}

/** Whether the dashboard's "Create account" may make an account now (KEYWARD_SIGNUP, CONTRACT 5). */
export async function signUpAllowed(ctx: ServiceContext): Promise<boolean> {
  if (ctx.signup === 'open') return true;
  if (ctx.signup === 'closed') return false;
  return !(await ctx.store.accounts.anyExists());
}

/** Thrown inside the account's transaction when `first` found an account there: it makes nothing. */
class SignUpRefused extends Error {}

/**
 * `submitted` both when an account was made and when the email had one already (nothing changes
 * then): the person is told the same, and signs in next. `refused` when the policy allows no sign-up.
 */
export type SignUpResult = 'submitted' | 'refused';

export async function signUp(ctx: ServiceContext, input: { accountName: string; email: string; password: string }): Promise<SignUpResult> {
  if (!(await signUpAllowed(ctx))) return 'refused';
  // With `first`, two sign-ups at once must not both find the instance empty: they are serialised
  // (lockFirstSignUp) and look again inside the account's transaction.
  const onlyFirst = async () => {
    await ctx.store.accounts.lockFirstSignUp();
    if (!(await signUpAllowed(ctx))) throw new SignUpRefused();
  };
  try {
    await createAccount(ctx, { name: input.accountName, email: input.email, password: input.password }, ctx.signup === 'first' ? { before: onlyFirst } : {});
    return 'submitted';
  } catch (error) {
    if (error instanceof SignUpRefused) return 'refused';
    if (error instanceof DomainError && error.code === 'email_taken') return 'submitted';
    throw error;
  }
}

export type SignInResult =
  | { ok: true; token: string }
  /** `lockedUntil` is set when this failure used the last attempt of the window. */
  | { ok: false; reason: 'invalid'; lockedUntil: string | null }
  /** Locked: the password was not checked. */
  | { ok: false; reason: 'locked'; until: string }
  /** The password was right, but the user's account requires SSO and the user is not an owner (CONTRACT 9): no session. */
  | { ok: false; reason: 'sso_required' }
  /**
   * The password was right, and a one-time code (or, where the account requires codes, an enrolment)
   * must follow before any session (services/users/second-step.ts); `email` as normalised.
   */
  | { ok: 'second_step'; userId: string; accountId: string; email: string; step: SecondStep };

// Spent on unknown emails so that a wrong email costs as long as a wrong password (no account probing by timing).
const DECOY_HASH = hashPassword(randomBytes(16).toString('hex'));

/**
 * Why a sign-in failed, as its audit event says: a password checked and wrong, or not checked at all
 * (locked out); a one-time code wrong, used already, or not checked (locked out) at the second step;
 * a single sign-on callback refused (services/sso/sso-login.ts).
 */
export type SignInFailure = 'wrong_password' | 'locked_out' | 'wrong_code' | 'reused_code' | 'code_locked_out' | 'sso_refused';

/**
 * Records a failed sign-in in the account of the email's user, if it has one (never the password).
 * One statement whether or not it has: the answer's work and time do not tell the two apart.
 */
export async function recordFailedSignIn(ctx: ServiceContext, email: string, device: SessionDevice, failure: SignInFailure): Promise<void> {
  await ctx.store.sessions.recordFailedSignIn(email, {
    actor: 'browser',
    action: 'user.sign_in_failed' satisfies AuditAction,
    detail: JSON.stringify({ email, address: device.address, failure }),
    at: iso(ctx.clock.now()),
  });
}

export async function signIn(ctx: ServiceContext, input: { email: string; password: string; device: SessionDevice }): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const attempt = await takeSignInAttempt(ctx, email, ctx.clock.now());
  if (!attempt.taken) {
    await recordFailedSignIn(ctx, email, input.device, 'locked_out');
    return { ok: false, reason: 'locked', until: attempt.lockedUntil };
  }
  const user = await ctx.store.accounts.userByEmail(email);
  const good = await verifyPassword(input.password, user?.password_hash ?? (await DECOY_HASH));
  if (!user?.password_hash || !good) {
    await recordFailedSignIn(ctx, email, input.device, 'wrong_password');
    return { ok: false, reason: 'invalid', lockedUntil: attempt.attempts >= MAX_SIGN_IN_ATTEMPTS ? attempt.windowEnds : null };
  }
  // Told only once the password is right: the refusal says nothing about an email to whoever lacks it.
  if (await ctx.store.sso.passwordTurnedOff(user.id)) return { ok: false, reason: 'sso_required' };
  const second = await secondStepOf(ctx, user.id);
  if (second) {
    // The password's attempt is given back but the count is not cleared: the codes that follow count
    // from there, and only a right code clears it (a right password again cannot reset the codes' count).
    await returnSignInAttempt(ctx, email);
    return { ok: 'second_step', userId: user.id, accountId: second.accountId, email, step: second.step };
  }
  await clearSignInAttempts(ctx, email);
  const token = await startSignedInSession(ctx, user.id, input.device);
  // Removed while the password was checked: as for an email without a user.
  if (token === null) return { ok: false, reason: 'invalid', lockedUntil: null };
  return { ok: true, token };
}

/**
 * The end of every sign-in, whatever proved who the user is (a password here, the account's
 * identity provider in services/sso): the user's last sign-in, its `user.signed_in` event and a new
 * session, in one transaction (joining the caller's, if one is open). Null when the user no longer
 * exists (removed meanwhile): nothing is written then.
 */
export async function startSignedInSession(ctx: ServiceContext, userId: string, device: SessionDevice, via?: 'sso'): Promise<string | null> {
  return ctx.store.transaction(async () => {
    const at = iso(ctx.clock.now());
    const accountId = await ctx.store.sessions.signedIn(userId, at);
    if (accountId === undefined) return null;
    await recordAudit(ctx, {
      accountId,
      actor: userActor(userId),
      action: 'user.signed_in',
      targetId: userId,
      detail: { address: device.address, device: deviceName(device.userAgent), ...(via ? { via } : {}) },
      at,
    });
    return createSession(ctx, userId, device);
  });
}

/**
 * The live session of a cookie's token, with its user's role as it is now. With `seen`, a request of
 * the session: its idle deadline moves 12 h on (never past its absolute end), written at most once a
 * minute.
 */
export async function openSession(ctx: ServiceContext, token: string, seen?: SessionDevice): Promise<UserSession | null> {
  if (!isToken(token)) return null;
  const now = ctx.clock.now();
  const found = await ctx.store.sessions.userSession(sha256Hex(token), iso(now));
  if (!found) return null;
  const { lastSeenAt, endsAt, ...session } = found;
  if (seen && Date.parse(lastSeenAt) <= now.getTime() - SEEN_EVERY_SECONDS * 1000) {
    const idle = Math.min(addSeconds(now, SESSION_IDLE_SECONDS).getTime(), Date.parse(endsAt));
    await ctx.store.sessions.seen(session.sessionId, iso(now), iso(new Date(idle)));
  }
  return session;
}

export async function endSession(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.store.sessions.end(sha256Hex(token));
}

/** One of a user's live sessions, as their "Security" page lists it. */
export interface SessionView {
  sessionId: string;
  /** A readable name from the User-Agent it signed in with ("Chrome on macOS", device-names.ts). */
  device: string;
  address: string | null;
  signedInAt: string;
  lastSeenAt: string;
}

/** The user's live sessions, the most recently used first. */
export async function listSessions(ctx: ServiceContext, userId: string): Promise<SessionView[]> {
  const rows = await ctx.store.sessions.liveOfUser(userId, iso(ctx.clock.now()));
  return rows.map((row) => ({
    sessionId: row.id,
    device: deviceName(row.user_agent),
    address: row.address,
    signedInAt: row.created_at,
    lastSeenAt: row.last_seen_at,
  }));
}

/** Who ends sessions: a signed-in user, over their own sessions only, named in the trail by `actor`. */
export interface SessionOwner {
  userId: string;
  accountId: string;
  actor: string;
}

/**
 * Ends one of the user's live sessions ("Sign out" on the Security page). False when the user has
 * no such live session (another user's id, or one that ended already): nothing is ended then.
 */
export async function endSessionOf(ctx: ServiceContext, owner: SessionOwner, sessionId: string): Promise<boolean> {
  return ctx.store.transaction(async () => {
    const at = iso(ctx.clock.now());
    const ended = await ctx.store.sessions.endOfUser(owner.userId, sessionId, at);
    if (!ended) return false;
    await recordAudit(ctx, {
      accountId: owner.accountId,
      actor: owner.actor,
      action: 'session.ended',
      targetId: ended.id,
      detail: { device: deviceName(ended.user_agent), address: ended.address },
      at,
    });
    return true;
  });
}

/** Ends every session of the user, the one asking included ("Sign out everywhere"); how many there were. */
export async function endEverySession(ctx: ServiceContext, owner: SessionOwner): Promise<number> {
  return ctx.store.transaction(async () => {
    const count = await ctx.store.sessions.endAllOf(owner.userId);
    await recordAudit(ctx, {
      accountId: owner.accountId,
      actor: owner.actor,
      action: 'sessions.ended_everywhere',
      targetId: owner.userId,
      detail: { sessions: count },
      at: iso(ctx.clock.now()),
    });
    return count;
  });
}
