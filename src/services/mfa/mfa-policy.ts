/**
 * Who must give a one-time code when they sign in with a password (CONTRACT 9): a user whose codes
 * are on, and, where the account's "Require MFA" is set (an admin's choice), every password user, who
 * then turns their codes on before their first session. Single sign-on asks for no code: this is read
 * by the password sign-in only (services/users/sessions.ts).
 */
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';

/** What a password sign-in still needs before its session: a code, or an enrolment first. */
export type SecondStep = 'code' | 'enrol';

/** The second step the user's password sign-in needs (with the user's account), or null when the password is enough. */
export async function secondStepOf(ctx: ServiceContext, userId: string): Promise<{ step: SecondStep; accountId: string } | null> {
  const factor = await ctx.store.mfa.signInFactor(userId);
  if (!factor || !(factor.enabled || factor.required)) return null;
  return { step: factor.enabled ? 'code' : 'enrol', accountId: factor.accountId };
}

export async function mfaRequired(ctx: ServiceContext, accountId: string): Promise<boolean> {
  return ctx.store.mfa.requireMfa(accountId);
}

/**
 * Sets the account's "Require MFA" (the route has judged the actor's role); recorded when it changed.
 * Sessions already open stay open: the rule counts from each user's next sign-in.
 */
export async function setMfaRequired(ctx: ServiceContext, input: { accountId: string; required: boolean; actor: Actor }): Promise<boolean> {
  return ctx.store.transaction(async () => {
    const at = iso(ctx.clock.now());
    if (!(await ctx.store.mfa.setRequireMfa(input.accountId, input.required, at))) return false;
    await recordAudit(ctx, {
      accountId: input.accountId,
      actor: input.actor,
      action: 'account.mfa_required_changed',
      targetId: input.accountId,
      detail: { required: input.required },
      at,
    });
    return true;
  });
}

/** The ids of the account's users whose codes are on (`user list`'s `mfa`). */
export async function usersWithMfa(ctx: ServiceContext, accountId: string): Promise<Set<string>> {
  return new Set(await ctx.store.mfa.enabledUsers(accountId));
}
