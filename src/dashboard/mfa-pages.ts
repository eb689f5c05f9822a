/**
 * One-time codes of the signed-in user (CONTRACT 9), from their email (top right) → "Security":
 * "Turn on" answers the enrolment page (a fresh secret each time, replacing one left unconfirmed),
 * "Confirm" turns the codes on with one code and answers the ten recovery codes (only in that answer);
 * "Turn off" and "New recovery codes" each ask for a code first: one from the app or a recovery code,
 * counted toward the sign-in lock-out like any other code (services/users/second-step.ts), so a
 * session left open cannot be used to guess one. Every user has these over their own codes only
 * (action `own.security`).
 *
 * And Team → "Require MFA" (action `team.mfa_policy`, an admin's): the account's policy, set to the
 * value the form names, so a second post of the same form changes nothing.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type ServiceContext, userActor } from '../services/context.js';
import { setMfaRequired } from '../services/mfa/mfa-policy.js';
import {
  type CodeOwner,
  codesState,
  confirmEnrolment,
  type Enrolment,
  newRecoveryCodes,
  pendingEnrolment,
  startEnrolment,
  turnOffCodes,
} from '../services/mfa/one-time-codes.js';
import { type CountedCheck, checkCodeCounted } from '../services/users/second-step.js';
import { lastAttemptText, lockedOutText } from './auth-routes.js';
import { Choice, Filled, formErrors, formRoute, refuseMalformed, SignedInForm } from './form-schemas.js';
import { sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { type CodeForm, enrolPage, newRecoveryCodesPage, REUSED_CODE, recoveryCodesPage, turnOffPage, WRONG_ENROLMENT_CODE } from './mfa-views.js';
import { type PageRoutes, pageContext } from './plugin.js';
import { qrCodeSvg } from './qr-code.js';
import { SECURITY_URL } from './security-views.js';
import { TEAM_URL } from './team-views.js';

/** "Turn on": a button and the CSRF token. */
const TurnOnBody = SignedInForm({});
export const CodeBody = SignedInForm({ code: Filled(64) });
export const MfaPolicyBody = SignedInForm({ required: Choice(['on', 'off'] as const) });

const ENTER_CODE = { code: 'Enter a code from your authenticator app, or a recovery code.' };
const WRONG_CODE = 'That is neither the code your authenticator app shows now nor one of your unused recovery codes.';

/** The signed-in user, over their own codes, named in the audit trail as themselves. */
function ownerOf(context: PageContext): CodeOwner {
  const { user } = context;
  return { userId: user.userId, accountId: user.accountId, email: user.email, actor: userActor(user.userId) };
}

/** How a refused code reads above its form, with its status (`off`: the codes are off already, nothing to refuse). */
function refusal(checked: Exclude<CountedCheck, { ok: true }>): { status: number; form: CodeForm } | null {
  switch (checked.reason) {
    case 'locked':
      return { status: 429, form: { errors: {}, problem: lockedOutText(checked.until) } };
    case 'wrong':
      return { status: 401, form: { errors: {}, problem: `${WRONG_CODE}${lastAttemptText(checked.lockedUntil)}` } };
    case 'reused':
      return { status: 401, form: { errors: {}, problem: `${REUSED_CODE}${lastAttemptText(checked.lockedUntil)}` } };
    default:
      return null;
  }
}

/** The notices of "Security" (security-pages.ts) these routes come back with. */
const toSecurity = (reply: FastifyReply, notice: 'mfa-off' | 'mfa-on-already' | 'mfa-not-on') => reply.redirect(`${SECURITY_URL}?notice=${notice}`, 303);

export const registerMfaPages: PageRoutes = (scope, ctx: ServiceContext) => {
  const enrolmentPage = async (context: PageContext, enrolment: Enrolment, form?: CodeForm) =>
    enrolPage(context, enrolment, await qrCodeSvg(enrolment.uri), form);

  scope.post<{ Body: Static<typeof TurnOnBody> }>('/security/mfa/enrol', formRoute(TurnOnBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const enrolment = await startEnrolment(ctx, ownerOf(context));
    if (!enrolment) return toSecurity(reply, 'mfa-on-already');
    // Answered here: the secret is drawn into this answer and the confirmation's, never into a GET.
    return sendPage(reply, await enrolmentPage(context, enrolment));
  });

  scope.post<{ Body: Static<typeof CodeBody> }>('/security/mfa/confirm', formRoute(CodeBody), async (request, reply) => {
    const context = pageContext(request);
    const errors = formErrors(request, ENTER_CODE);
    const enrolment = await pendingEnrolment(ctx, ownerOf(context));
    // Confirmed already (another tab), or never started.
    if (!enrolment) return (await codesState(ctx, context.user.userId)).on ? toSecurity(reply, 'mfa-on-already') : toSecurity(reply, 'mfa-not-on');
    if (errors) return sendPage(reply, await enrolmentPage(context, enrolment, { errors }), 422);
    const confirmed = await confirmEnrolment(ctx, ownerOf(context), request.body.code);
    if (confirmed.confirmed) return sendPage(reply, recoveryCodesPage(context, confirmed.recoveryCodes, true));
    if (confirmed.reason === 'no_enrolment') return toSecurity(reply, 'mfa-on-already');
    return sendPage(reply, await enrolmentPage(context, enrolment, { errors: {}, problem: WRONG_ENROLMENT_CODE }), 422);
  });

  scope.get('/security/mfa/turn-off', async (request, reply) => {
    const context = pageContext(request);
    if (!(await codesState(ctx, context.user.userId)).on) return toSecurity(reply, 'mfa-not-on');
    return sendPage(reply, turnOffPage(context));
  });

  scope.post<{ Body: Static<typeof CodeBody> }>('/security/mfa/turn-off', formRoute(CodeBody), async (request, reply) => {
    const context = pageContext(request);
    const errors = formErrors(request, ENTER_CODE);
    if (errors) return sendPage(reply, turnOffPage(context, { errors }), 422);
    const checked = await checkCodeCounted(ctx, ownerOf(context), request.body.code);
    if (!checked.ok) {
      const refused = refusal(checked);
      return refused ? sendPage(reply, turnOffPage(context, refused.form), refused.status) : toSecurity(reply, 'mfa-not-on');
    }
    await turnOffCodes(ctx, ownerOf(context));
    return toSecurity(reply, 'mfa-off');
  });

  scope.get('/security/mfa/recovery-codes', async (request, reply) => {
    const context = pageContext(request);
    if (!(await codesState(ctx, context.user.userId)).on) return toSecurity(reply, 'mfa-not-on');
    return sendPage(reply, newRecoveryCodesPage(context));
  });

  scope.post<{ Body: Static<typeof CodeBody> }>('/security/mfa/recovery-codes', formRoute(CodeBody), async (request, reply) => {
    const context = pageContext(request);
    const errors = formErrors(request, ENTER_CODE);
    if (errors) return sendPage(reply, newRecoveryCodesPage(context, { errors }), 422);
    const checked = await checkCodeCounted(ctx, ownerOf(context), request.body.code);
    if (!checked.ok) {
      const refused = refusal(checked);
      return refused ? sendPage(reply, newRecoveryCodesPage(context, refused.form), refused.status) : toSecurity(reply, 'mfa-not-on');
    }
    const codes = await newRecoveryCodes(ctx, ownerOf(context));
    // The new codes exist only in this answer.
    return codes ? sendPage(reply, recoveryCodesPage(context, codes, false)) : toSecurity(reply, 'mfa-not-on');
  });

  scope.post<{ Body: Static<typeof MfaPolicyBody> }>('/team/mfa-policy', formRoute(MfaPolicyBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    await setMfaRequired(ctx, { accountId: context.user.accountId, required: request.body.required === 'on', actor: userActor(context.user.userId) });
    return reply.redirect(TEAM_URL, 303);
  });
};
