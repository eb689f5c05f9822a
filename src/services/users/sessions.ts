/**
 * Dashboard users: sign-up, sign-in with a lock-out after repeated failures, and sessions kept in
 * the database (only a digest of the cookie's token is stored, so a leaked table opens no session).
 *
 * Neither sign-up nor sign-in tells whether an email has an account: both run scrypt exactly once
 * whatever the email, the lock-out counts every email alike (sign-in-attempts.ts), and sign-up
 * answers the same whether it made an account or found the email taken.
 */
import { randomBytes } from 'node:crypto';
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken, newToken } from '../../primitives/random-tokens.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../domain-error.js';
import type { TeamRole } from '../team/roles.js';
import { createAccount } from './accounts.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { clearSignInAttempts, MAX_SIGN_IN_ATTEMPTS, takeSignInAttempt } from './sign-in-attempts.js';

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
    // Bounded: the header is the browser's to choose.
    user_agent: device.userAgent?.slice(0, 300) ?? null,
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
  | { ok: false; reason: 'locked'; until: string };

// Spent on unknown emails so that a wrong email costs as long as a wrong password (no account probing by timing).
const DECOY_HASH = hashPassword(randomBytes(16).toString('hex'));

export async function signIn(ctx: ServiceContext, input: { email: string; password: string; device: SessionDevice }): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const attempt = await takeSignInAttempt(ctx, email, ctx.clock.now());
  if (!attempt.taken) return { ok: false, reason: 'locked', until: attempt.lockedUntil };
  const user = await ctx.store.accounts.userByEmail(email);
  const good = await verifyPassword(input.password, user?.password_hash ?? (await DECOY_HASH));
  if (!user?.password_hash || !good) {
    return { ok: false, reason: 'invalid', lockedUntil: attempt.attempts >= MAX_SIGN_IN_ATTEMPTS ? attempt.windowEnds : null };
  }
  await clearSignInAttempts(ctx, email);
  return { ok: true, token: await createSession(ctx, user.id, input.device) };
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
