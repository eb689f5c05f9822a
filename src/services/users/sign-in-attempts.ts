/**
 * The sign-in lock-out, counted per email before any password is checked (issue 8, item 3).
 *
 * An attempt is taken (counted) by one guarded upsert before scrypt runs, so however many sign-ins
 * arrive at once, on however many nodes, at most MAX_SIGN_IN_ATTEMPTS passwords are checked in a
 * lock window: the database hands out the attempts, one by one. The row is keyed by a MAC of the
 * email, not by user, so an email without an account is counted and locked exactly like one with
 * an account, and a leaked table does not list the emails that were tried.
 *
 * The MAC's key is the installation's `sign-in-attempts` secret, not one derived from the master key
 * (issue 17, item 3): during a rotation nodes run on different master keys, and each then counted
 * the email in a row of its own, letting five guesses per key through and starting afresh on the new
 * key. A plain SHA-256 of the email would also be the same on every node, but anyone holding the
 * table could test a list of addresses against it; the sealed secret cannot be used without the
 * master key.
 */
import { createHmac } from 'node:crypto';
import { addSeconds, iso } from '../../primitives/clock.js';
import type { ServiceContext } from '../context.js';
import { instanceSecret } from '../sealing/instance-secrets.js';

/** Sign-ins (failed or still being checked) in a row before an email is locked out, and for how long. */
export const MAX_SIGN_IN_ATTEMPTS = 5;
/** A window lasts this long after its latest attempt: 15 minutes without one start a fresh count. */
export const LOCK_SECONDS = 15 * 60;

export type AttemptTaken = { taken: true; attempts: number; windowEnds: string } | { taken: false; lockedUntil: string };

async function emailMac(ctx: ServiceContext, email: string): Promise<string> {
  const key = await instanceSecret(ctx, 'sign-in-attempts');
  return createHmac('sha256', key).update(`dashboard-sign-in|${email}`).digest('base64url');
}

/**
 * Takes one attempt for `email` (already normalised), or says until when it is locked. A lock that
 * ran out starts a fresh count with this attempt.
 */
export async function takeSignInAttempt(ctx: ServiceContext, email: string, now: Date): Promise<AttemptTaken> {
  const mac = await emailMac(ctx, email);
  const at = iso(now);
  const ends = iso(addSeconds(now, LOCK_SECONDS));
  const taken = await ctx.store.sessions.takeSignInAttempt(mac, at, ends, MAX_SIGN_IN_ATTEMPTS);
  if (taken) return { taken: true, ...taken };
  // The row can only be gone if a good sign-in cleared it meanwhile; the caller may simply retry later.
  return { taken: false, lockedUntil: (await ctx.store.sessions.signInWindowEnd(mac)) ?? ends };
}

/** A good password clears the count. */
export async function clearSignInAttempts(ctx: ServiceContext, email: string): Promise<void> {
  await ctx.store.sessions.clearSignInAttempts(await emailMac(ctx, email));
}

/**
 * A good password of a user who must still give a one-time code gives its attempt back instead of
 * clearing the count (services/users/second-step.ts): the codes then count from where the count was,
 * so signing in again with the password cannot start their count afresh; a good code clears it.
 */
export async function returnSignInAttempt(ctx: ServiceContext, email: string): Promise<void> {
  await ctx.store.mfa.returnSignInAttempt(await emailMac(ctx, email));
}
