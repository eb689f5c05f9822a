/**
 * The second step of a password sign-in (CONTRACT 9): after a right password, a user whose one-time
 * codes are on gives a code (or one of their recovery codes), and a user whose account requires codes
 * but who has none turns them on first. No session exists until then: the browser holds only a sealed
 * note of the pending sign-in (who, which step, until when: 5 minutes), which opens no page.
 *
 * Every code typed here, and on the signed-in forms that ask for one (turning codes off, new recovery
 * codes), counts toward the same lock-out as a wrong password (sign-in-attempts.ts, per email): the
 * attempt is taken before the code is checked, a locked email's code is not checked at all, and a
 * right code clears the count. The confirming code of an enrolment is not counted: its secret was
 * made for, and shown to, the person confirming it. A failed code is written to the audit trail as a
 * failed sign-in, never with the code.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { type ServiceContext, userActor } from '../context.js';
import type { SecondStep } from '../mfa/mfa-policy.js';
import { acceptAnyCode, type CodeOwner, codesOn, confirmEnrolment } from '../mfa/one-time-codes.js';
import { recordFailedSignIn, type SessionDevice, startSignedInSession } from './sessions.js';
import { clearSignInAttempts, MAX_SIGN_IN_ATTEMPTS, takeSignInAttempt } from './sign-in-attempts.js';

/** How long a right password waits for its code. */
export const SECOND_STEP_SECONDS = 5 * 60;

/** A sign-in whose password was right, waiting for its second step. `email` is the normalised one the lock-out counts. */
export interface PendingSignIn {
  userId: string;
  accountId: string;
  email: string;
  step: SecondStep;
  expiresAt: string;
}

const PENDING_AAD = 'dashboard-second-step';

/** The sealed note of a pending sign-in, as cookie-safe text (base64url). */
export function sealPendingSignIn(ctx: ServiceContext, pending: Omit<PendingSignIn, 'expiresAt'>): string {
  const expiresAt = iso(addSeconds(ctx.clock.now(), SECOND_STEP_SECONDS));
  return ctx.vault.sealJson({ ...pending, expiresAt } satisfies PendingSignIn, PENDING_AAD).toString('base64url');
}

/** The pending sign-in a browser's note holds, or null: none, not one made here, or expired. */
export function openPendingSignIn(ctx: ServiceContext, note: string | undefined): PendingSignIn | null {
  if (!note || !/^[A-Za-z0-9_-]{1,2048}$/.test(note)) return null;
  let pending: PendingSignIn;
  try {
    pending = ctx.vault.openJson<PendingSignIn>(Buffer.from(note, 'base64url'), PENDING_AAD);
  } catch {
    // Forged, cut short, or sealed under a master key this node was not given: as if there were none.
    return null;
  }
  return pending.expiresAt > iso(ctx.clock.now()) ? pending : null;
}

/** The user of a pending sign-in, acting on their own codes. */
const ownerOf = (pending: PendingSignIn): CodeOwner => ({
  userId: pending.userId,
  accountId: pending.accountId,
  email: pending.email,
  actor: userActor(pending.userId),
});

/** A code refused: wrong or used already (`lockedUntil` when this one used the window's last attempt), or not checked (locked). */
export type CodeRefusal = { ok: false; reason: 'wrong' | 'reused'; lockedUntil: string | null } | { ok: false; reason: 'locked'; until: string };

/** A code checked against the user's codes: accepted, refused, or the user's codes are off (`off`: nothing was counted against them). */
export type CountedCheck = { ok: true; via: 'app' | 'recovery' } | CodeRefusal | { ok: false; reason: 'off' };

/**
 * Checks a code (from the app, or a recovery code) of the user, counted toward the sign-in lock-out
 * of their email; `failed` records a refusal where one is recorded (at sign-in).
 */
export async function checkCodeCounted(
  ctx: ServiceContext,
  user: CodeOwner,
  typed: string,
  failed: (failure: 'wrong_code' | 'reused_code' | 'code_locked_out') => Promise<void> = async () => {},
): Promise<CountedCheck> {
  // Nothing to check (or count) for a user whose codes are off.
  if (!(await codesOn(ctx, user.userId))) return { ok: false, reason: 'off' };
  const attempt = await takeSignInAttempt(ctx, user.email, ctx.clock.now());
  if (!attempt.taken) {
    await failed('code_locked_out');
    return { ok: false, reason: 'locked', until: attempt.lockedUntil };
  }
  const { check, via } = await acceptAnyCode(ctx, user, typed);
  if (check === 'accepted') {
    await clearSignInAttempts(ctx, user.email);
    return { ok: true, via };
  }
  if (check === 'off') return { ok: false, reason: 'off' };
  await failed(check === 'reused' ? 'reused_code' : 'wrong_code');
  return { ok: false, reason: check, lockedUntil: attempt.attempts >= MAX_SIGN_IN_ATTEMPTS ? attempt.windowEnds : null };
}

/** The end of a second step: a session (and, after an enrolment, the recovery codes to show once), a refusal, or `gone` (start again). */
export type SecondStepResult = { ok: true; token: string; recoveryCodes: string[] | null } | CodeRefusal | { ok: false; reason: 'gone' };

/**
 * The second step of a user whose codes are on: a code from the app or a recovery code. `gone` when
 * the codes were turned off, or the user removed, since the password: the sign-in starts again.
 */
export async function signInWithCode(ctx: ServiceContext, pending: PendingSignIn, typed: string, device: SessionDevice): Promise<SecondStepResult> {
  const checked = await checkCodeCounted(ctx, ownerOf(pending), typed, (failure) => recordFailedSignIn(ctx, pending.email, device, failure));
  if (!checked.ok) return checked.reason === 'off' ? { ok: false, reason: 'gone' } : checked;
  const token = await startSignedInSession(ctx, pending.userId, device);
  return token === null ? { ok: false, reason: 'gone' } : { ok: true, token, recoveryCodes: null };
}

/**
 * The second step of a user who must turn codes on first (the account requires them): the code that
 * confirms their enrolment, then the session, and their recovery codes to show once.
 */
export async function signInWithEnrolment(
  ctx: ServiceContext,
  pending: PendingSignIn,
  typed: string,
  device: SessionDevice,
): Promise<SecondStepResult | { ok: false; reason: 'wrong_enrolment_code' }> {
  const confirmed = await confirmEnrolment(ctx, ownerOf(pending), typed);
  if (!confirmed.confirmed) return confirmed.reason === 'wrong' ? { ok: false, reason: 'wrong_enrolment_code' } : { ok: false, reason: 'gone' };
  await clearSignInAttempts(ctx, pending.email);
  const token = await startSignedInSession(ctx, pending.userId, device);
  return token === null ? { ok: false, reason: 'gone' } : { ok: true, token, recoveryCodes: confirmed.recoveryCodes };
}
