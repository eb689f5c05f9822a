/**
 * A user's one-time code app (CONTRACT 9): enrolment (a fresh secret, sealed under the user's id, and
 * its otpauth URI), confirmation by one code (which turns the codes on and makes ten recovery codes),
 * the check of a code, the use of a recovery code, turning the codes off and new recovery codes.
 *
 * No code is accepted twice: a code is accepted only for a time step after the last one accepted
 * (the confirming code's included), by the one guarded UPDATE that moves `last_step` (store/
 * mfa-repository.ts), so two nodes given the same code at once accept it once. A recovery code is
 * spent the same way. Neither a code nor the secret is ever logged or written to the audit trail.
 *
 * How many wrong codes may be tried is the sign-in lock-out's to say (services/users/second-step.ts
 * counts each one): this file checks, it does not count.
 */
import { iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';
import { newRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeDigest, typedRecoveryCode } from './recovery-codes.js';
import { newTotpSecret, otpauthUri, stepOfCode, typedCode } from './totp.js';
import { openTotpSecret, sealTotpSecret } from './totp-secret.js';

/** A user acting on their own codes (or signing in with them), named in the audit trail by `actor`. */
export interface CodeOwner {
  userId: string;
  accountId: string;
  email: string;
  actor: string;
}

/** What an authenticator app is given: the secret as text and the otpauth URI of its QR code. */
export interface Enrolment {
  secret: string;
  uri: string;
}

/** The user's codes: whether they are on, and how many recovery codes are left. */
export interface CodesState {
  on: boolean;
  unusedRecoveryCodes: number;
}

/** What became of a code: accepted (now used), not a code of this user now, used already, or the user's codes are off. */
export type CodeCheck = 'accepted' | 'wrong' | 'reused' | 'off';

/** Whether the user's codes are on (confirmed). */
export async function codesOn(ctx: ServiceContext, userId: string): Promise<boolean> {
  return !!(await ctx.store.mfa.totpOf(userId))?.enabled_at;
}

export async function codesState(ctx: ServiceContext, userId: string): Promise<CodesState> {
  const on = await codesOn(ctx, userId);
  return { on, unusedRecoveryCodes: on ? await ctx.store.mfa.unusedRecoveryCodes(userId) : 0 };
}

/**
 * Starts an enrolment with a fresh secret, replacing one left unconfirmed; null when the user's codes
 * are on already (turning them on again needs turning them off first).
 */
export async function startEnrolment(ctx: ServiceContext, user: { userId: string; email: string }): Promise<Enrolment | null> {
  const secret = newTotpSecret();
  const sealed = sealTotpSecret(ctx.vault, user.userId, secret);
  if (!(await ctx.store.mfa.startEnrolment(user.userId, sealed, iso(ctx.clock.now())))) return null;
  return { secret, uri: otpauthUri(secret, user.email) };
}

/** The user's enrolment waiting for its code (shown again after a wrong one), or null when there is none. */
export async function pendingEnrolment(ctx: ServiceContext, user: { userId: string; email: string }): Promise<Enrolment | null> {
  const totp = await ctx.store.mfa.totpOf(user.userId);
  if (!totp || totp.enabled_at) return null;
  const secret = openTotpSecret(ctx.vault, user.userId, totp.secret);
  return { secret, uri: otpauthUri(secret, user.email) };
}

/** Ten new recovery codes in place of the user's old ones (inside the caller's transaction); the codes, to be shown once. */
async function replaceRecoveryCodes(ctx: ServiceContext, userId: string, at: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await ctx.store.mfa.replaceRecoveryCodes(
    userId,
    codes.map((code) => ({ id: newId('rcv'), user_id: userId, code_digest: recoveryCodeDigest(userId, code), created_at: at, used_at: null })),
  );
  return codes;
}

export type Confirmation = { confirmed: true; recoveryCodes: string[] } | { confirmed: false; reason: 'wrong' | 'no_enrolment' };

/**
 * Confirms the user's pending enrolment with a code of its secret: the codes are on from now, the
 * code's step is accepted (so the confirming code is never accepted again), and ten recovery codes
 * are made. `no_enrolment` when there is none to confirm (never started, or confirmed meanwhile).
 */
export async function confirmEnrolment(ctx: ServiceContext, user: CodeOwner, typed: string): Promise<Confirmation> {
  return ctx.store.transaction(async () => {
    const totp = await ctx.store.mfa.totpOf(user.userId);
    if (!totp || totp.enabled_at) return { confirmed: false, reason: 'no_enrolment' } as const;
    const code = typedCode(typed);
    const now = ctx.clock.now();
    const step = code === null ? null : stepOfCode(openTotpSecret(ctx.vault, user.userId, totp.secret), code, now);
    if (step === null) return { confirmed: false, reason: 'wrong' } as const;
    const at = iso(now);
    // Guarded by the secret the code was checked against: an enrolment started again meanwhile is not confirmed by it.
    if (!(await ctx.store.mfa.confirm(user.userId, totp.secret, step, at))) return { confirmed: false, reason: 'no_enrolment' } as const;
    const recoveryCodes = await replaceRecoveryCodes(ctx, user.userId, at);
    await recordAudit(ctx, { accountId: user.accountId, actor: user.actor, action: 'mfa.enabled', targetId: user.userId, detail: { email: user.email }, at });
    return { confirmed: true, recoveryCodes };
  });
}

/** Checks a code from the user's app now, accepting it (for good) when it is right and of a step after the last one accepted. */
export async function acceptCode(ctx: ServiceContext, userId: string, typed: string): Promise<CodeCheck> {
  const totp = await ctx.store.mfa.totpOf(userId);
  if (!totp?.enabled_at) return 'off';
  const code = typedCode(typed);
  const step = code === null ? null : stepOfCode(openTotpSecret(ctx.vault, userId, totp.secret), code, ctx.clock.now());
  if (step === null) return 'wrong';
  return (await ctx.store.mfa.acceptStep(userId, step)) ? 'accepted' : 'reused';
}

/** Spends one of the user's recovery codes if the text is one still unused (recorded, with how many are left). */
export async function useRecoveryCode(ctx: ServiceContext, user: CodeOwner, typed: string): Promise<CodeCheck> {
  const code = typedRecoveryCode(typed);
  return ctx.store.transaction(async () => {
    if (!(await codesOn(ctx, user.userId))) return 'off';
    const at = iso(ctx.clock.now());
    if (!code || !(await ctx.store.mfa.spendRecoveryCode(user.userId, recoveryCodeDigest(user.userId, code), at))) return 'wrong';
    const remaining = await ctx.store.mfa.unusedRecoveryCodes(user.userId);
    await recordAudit(ctx, {
      accountId: user.accountId,
      actor: user.actor,
      action: 'mfa.recovery_code_used',
      targetId: user.userId,
      detail: { email: user.email, remaining },
      at,
    });
    return 'accepted';
  });
}

/**
 * What a "Code" field holds: a code from the app (six digits) or, failing that, a recovery code.
 * `via` says which it was taken for.
 */
export async function acceptAnyCode(ctx: ServiceContext, user: CodeOwner, typed: string): Promise<{ check: CodeCheck; via: 'app' | 'recovery' }> {
  if (typedCode(typed) !== null) return { check: await acceptCode(ctx, user.userId, typed), via: 'app' };
  return { check: await useRecoveryCode(ctx, user, typed), via: 'recovery' };
}

/** Turns the user's codes off (their secret and recovery codes are deleted); false when they were off. */
export async function turnOffCodes(ctx: ServiceContext, user: CodeOwner): Promise<boolean> {
  return ctx.store.transaction(async () => {
    if (!(await ctx.store.mfa.remove(user.userId))) return false;
    await recordAudit(ctx, {
      accountId: user.accountId,
      actor: user.actor,
      action: 'mfa.disabled',
      targetId: user.userId,
      detail: { email: user.email },
      at: iso(ctx.clock.now()),
    });
    return true;
  });
}

/** Ten new recovery codes in place of the old ones, to be shown once; null when the user's codes are off. */
export async function newRecoveryCodes(ctx: ServiceContext, user: CodeOwner): Promise<string[] | null> {
  return ctx.store.transaction(async () => {
    if (!(await codesOn(ctx, user.userId))) return null;
    const at = iso(ctx.clock.now());
    const codes = await replaceRecoveryCodes(ctx, user.userId, at);
    await recordAudit(ctx, {
      accountId: user.accountId,
      actor: user.actor,
      action: 'mfa.recovery_codes_regenerated',
      targetId: user.userId,
      detail: { email: user.email },
      at,
    });
    return codes;
  });
}
