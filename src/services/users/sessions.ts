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
import { createAccount } from './accounts.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { clearSignInAttempts, MAX_SIGN_IN_ATTEMPTS, takeSignInAttempt } from './sign-in-attempts.js';

export const SESSION_SECONDS = 12 * 3600;

export interface UserSession {
  sessionId: string;
  userId: string;
  accountId: string;
  email: string;
  accountName: string;
}

/** A new session: a fresh random token every time, so no id chosen before sign-in survives it. */
async function createSession(ctx: ServiceContext, userId: string): Promise<string> {
  const token = newToken();
  const now = ctx.clock.now();
  await ctx.store.sessions.create({
    id: newId('ses'),
    token_digest: sha256Hex(token),
    user_id: userId,
    created_at: iso(now),
    expires_at: iso(addSeconds(now, SESSION_SECONDS)),
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

export async function signIn(ctx: ServiceContext, input: { email: string; password: string }): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const attempt = await takeSignInAttempt(ctx, email, ctx.clock.now());
  if (!attempt.taken) return { ok: false, reason: 'locked', until: attempt.lockedUntil };
  const user = await ctx.store.accounts.userByEmail(email);
  const good = await verifyPassword(input.password, user?.password_hash ?? (await DECOY_HASH));
  if (!user?.password_hash || !good) {
    return { ok: false, reason: 'invalid', lockedUntil: attempt.attempts >= MAX_SIGN_IN_ATTEMPTS ? attempt.windowEnds : null };
  }
  await clearSignInAttempts(ctx, email);
  return { ok: true, token: await createSession(ctx, user.id) };
}

export async function openSession(ctx: ServiceContext, token: string): Promise<UserSession | null> {
  if (!isToken(token)) return null;
  return (await ctx.store.sessions.userSession(sha256Hex(token), iso(ctx.clock.now()))) ?? null;
}

export async function endSession(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.store.sessions.end(sha256Hex(token));
}
