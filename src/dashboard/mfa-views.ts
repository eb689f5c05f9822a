/**
 * What one-time codes show (CONTRACT 9; mfa-routes.ts and mfa-pages.ts have the routes):
 *
 * - the sign-in's second step, on the public card: "Enter the code from your authenticator app" with a
 *   "Code" field and a link to use a recovery code instead, and, where the account requires codes of a
 *   user who has none, the enrolment itself, then the recovery codes once;
 * - the "One-time codes" section of "Security", the enrolment page ("Turn on": the QR code as inline
 *   SVG, the base32 secret as text, a "Code" field and "Confirm"), the ten recovery codes shown once
 *   with "Copy", and the pages of "Turn off" and "New recovery codes", each asking for a code;
 * - the "Require MFA" panel of "Team", its form drawn only for a role that may set it.
 *
 * Nothing here holds a secret longer than the answer it is in: the secret and the recovery codes are
 * drawn only into the answer of the request that made them (or, for the secret, into the enrolment's
 * page until it is confirmed).
 */
import type { Enrolment } from '../services/mfa/one-time-codes.js';
import { RECOVERY_CODE_COUNT } from '../services/mfa/recovery-codes.js';
import { html, type SafeHtml } from '../web/html.js';
import { type FieldErrors, formError, textField } from './forms.js';
import { csrfField, dashboardPage, type PageContext, publicPage } from './layout-views.js';
import { may, roleNote } from './role-views.js';

export const SIGN_IN_CODE_URL = '/dashboard/sign-in/code';
export const SIGN_IN_RECOVERY_URL = '/dashboard/sign-in/recovery';
// Written out, not imported from security-views.ts: that page draws this file's section, so importing it back would make a cycle.
const SECURITY_URL = '/dashboard/security';
const MFA_URL = `${SECURITY_URL}/mfa`;
export const ENROL_URL = `${MFA_URL}/enrol`;
export const CONFIRM_URL = `${MFA_URL}/confirm`;
export const TURN_OFF_URL = `${MFA_URL}/turn-off`;
export const RECOVERY_CODES_URL = `${MFA_URL}/recovery-codes`;
export const MFA_POLICY_URL = '/dashboard/team/mfa-policy';

const CRUMBS = [{ label: 'Security', href: SECURITY_URL }];

/** What a refused code reads, wherever one is typed. */
export const REUSED_CODE = 'That code was used already. Wait for your app to show the next one, and type that.';
export const WRONG_ENROLMENT_CODE =
  'That code does not match the secret above. Check that your phone sets its time automatically, and type the code the app shows now.';

/** A code typed back: what the field says, and what went wrong with the last one. */
export interface CodeForm {
  errors: FieldErrors;
  problem?: string;
}

const NO_ERRORS: CodeForm = { errors: {} };

function codeField(errors: FieldErrors, hint?: string): SafeHtml {
  return textField({ name: 'code', label: 'Code', required: true, autocomplete: 'one-time-code', maxLength: 64, hint, errors });
}

/** How to add the secret to an app: the QR code, the secret as text, then the first code. */
function enrolmentSteps(enrolment: Enrolment, qr: SafeHtml): SafeHtml {
  return html`<ol class="link-list">
<li>Open an authenticator app on your phone (such as 1Password, Google Authenticator or Microsoft Authenticator) and scan this QR code:
<div class="qr-code" role="img" aria-label="QR code of your one-time code secret">${qr}</div></li>
<li>Or, if you cannot scan it, add an account in the app by hand with this secret key (time-based, 6 digits, every 30 seconds):
<div class="secret-row"><input id="totp-secret" class="secret" type="text" readonly value="${enrolment.secret}" aria-label="Secret key">
<button type="button" class="secondary" data-copy="totp-secret">Copy</button></div></li>
<li>Type the 6-digit code the app now shows for Keyward.</li>
</ol>`;
}

/** Ten recovery codes, shown once, with "Copy". */
function recoveryCodesPanel(codes: string[]): SafeHtml {
  return html`<section class="shown-once" aria-labelledby="recovery-codes-title">
<h2 id="recovery-codes-title">Recovery codes</h2>
<p class="warning"><strong>Copy them now: they will not be shown again.</strong> Keep them somewhere safe, away from your phone. Each one signs you in once if you lose your authenticator app. Keyward keeps only a digest of each.</p>
<div class="secret-row"><textarea id="recovery-codes" class="secret" readonly rows="${codes.length}" aria-label="Recovery codes">${codes.join('\n')}</textarea>
<button type="button" class="secondary" data-copy="recovery-codes">Copy</button></div>
</section>`;
}

// ——— The sign-in's second step (public) ———

/** "Enter the code from your authenticator app": the second step of a user whose codes are on. */
export function signInCodePage(csrf: string, form: CodeForm = NO_ERRORS): string {
  return publicPage(
    'Enter the code from your authenticator app',
    html`${formError(form.problem)}
<p>Your password was right. Open your authenticator app and type the 6-digit code it shows for Keyward.</p>
<form method="post" action="${SIGN_IN_CODE_URL}" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${codeField(form.errors)}
<button type="submit">Sign in</button>
</form>
<p class="aside">No access to your app? <a href="${SIGN_IN_RECOVERY_URL}">Use a recovery code instead</a>. Or <a href="/dashboard/sign-in">start again</a>.</p>`,
  );
}

/** The same step with one of the user's recovery codes. */
export function signInRecoveryPage(csrf: string, form: CodeForm = NO_ERRORS): string {
  return publicPage(
    'Enter a recovery code',
    html`${formError(form.problem)}
<p>Type one of the recovery codes you saved when you turned on one-time codes. Each code works once.</p>
<form method="post" action="${SIGN_IN_RECOVERY_URL}" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'recoveryCode', label: 'Recovery code', required: true, autocomplete: 'off', maxLength: 64, hint: 'Such as abcd-efgh-2345.', errors: form.errors })}
<button type="submit">Sign in</button>
</form>
<p class="aside"><a href="${SIGN_IN_CODE_URL}">Use the code from your app instead</a>. Or <a href="/dashboard/sign-in">start again</a>.</p>`,
  );
}

/** The second step of a user whose account requires codes and who has none: they turn them on first. */
export function signInEnrolPage(csrf: string, enrolment: Enrolment, qr: SafeHtml, form: CodeForm = NO_ERRORS): string {
  return publicPage(
    'Turn on one-time codes',
    html`${formError(form.problem)}
<p>Your account requires a code from an authenticator app at every sign-in. Set one up now to finish signing in.</p>
${enrolmentSteps(enrolment, qr)}
<form method="post" action="${SIGN_IN_CODE_URL}" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${codeField(form.errors)}
<button type="submit">Confirm</button>
</form>
<p class="aside"><a href="/dashboard/sign-in">Start again</a></p>`,
  );
}

/** After an enrolment at sign-in: signed in, and the recovery codes once. */
export function signedInWithRecoveryCodesPage(codes: string[], home: string): string {
  return publicPage(
    'One-time codes are on',
    html`<p>You are signed in. From now on, sign-in asks for a code from your authenticator app.</p>
${recoveryCodesPanel(codes)}
<p><a href="${home}">Continue to the dashboard</a></p>`,
  );
}

// ——— "Security" (signed in) ———

/** The user's codes as "Security" shows them. */
export interface CodesView {
  on: boolean;
  unusedRecoveryCodes: number;
  /** Whether the user's account requires codes. */
  required: boolean;
}

/** The "One-time codes" section of "Security". */
export function codesSection(context: PageContext, codes: CodesView): SafeHtml {
  const policy = codes.required ? html`<p class="muted">Your account requires one-time codes for everyone who signs in with a password.</p>` : '';
  if (!codes.on) {
    return html`<section class="panel" aria-labelledby="codes-title">
<h2 id="codes-title">One-time codes</h2>
<p>Off. Sign-in asks only for your password. Turn on one-time codes to be asked for a code from an authenticator app on your phone as well.</p>
${policy}
<form method="post" action="${ENROL_URL}">
${csrfField(context.csrf)}
<div class="form-actions"><button type="submit">Turn on</button></div>
</form>
</section>`;
  }
  return html`<section class="panel" aria-labelledby="codes-title">
<h2 id="codes-title">One-time codes</h2>
<p><span class="badge ok">On</span> Sign-in asks for a code from your authenticator app. ${codes.unusedRecoveryCodes} of ${RECOVERY_CODE_COUNT} recovery codes left.</p>
${policy}
<div class="form-actions">
<form method="get" action="${RECOVERY_CODES_URL}"><button type="submit" class="secondary">New recovery codes</button></form>
<form method="get" action="${TURN_OFF_URL}"><button type="submit" class="danger">Turn off</button></form>
</div>
</section>`;
}

/** "Turn on": the QR code, the secret, and the "Code" field that confirms them. */
export function enrolPage(context: PageContext, enrolment: Enrolment, qr: SafeHtml, form: CodeForm = NO_ERRORS): string {
  const body = html`<section class="panel">
${formError(form.problem)}
${enrolmentSteps(enrolment, qr)}
<form method="post" action="${CONFIRM_URL}" novalidate>
${csrfField(context.csrf)}
${codeField(form.errors)}
<div class="form-actions"><button type="submit">Confirm</button><a href="${SECURITY_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'Turn on one-time codes', section: 'security', breadcrumbs: CRUMBS, body });
}

/** The recovery codes, once: after "Confirm" (`turnedOn`) or "New recovery codes". */
export function recoveryCodesPage(context: PageContext, codes: string[], turnedOn: boolean): string {
  const body = html`${
    turnedOn
      ? html`<p class="notice" role="status">One-time codes are on: sign-in asks for a code from your authenticator app from now on.</p>`
      : html`<p class="notice" role="status">Your old recovery codes no longer work.</p>`
  }
${recoveryCodesPanel(codes)}
<p><a href="${SECURITY_URL}">Back to Security</a></p>`;
  return dashboardPage(context, { title: turnedOn ? 'One-time codes are on' : 'New recovery codes', section: 'security', breadcrumbs: CRUMBS, body });
}

const PROOF_HINT = 'The code your authenticator app shows now, or one of your recovery codes.';

/** "Turn off", confirmed by a code. */
export function turnOffPage(context: PageContext, form: CodeForm = NO_ERRORS): string {
  const body = html`<section class="panel">
${formError(form.problem)}
<p>Turn off one-time codes? Sign-in will ask only for your password, and your recovery codes stop working.</p>
<form method="post" action="${TURN_OFF_URL}" novalidate>
${csrfField(context.csrf)}
${codeField(form.errors, PROOF_HINT)}
<div class="form-actions"><button type="submit" class="danger">Turn off</button><a href="${SECURITY_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'Turn off one-time codes', section: 'security', breadcrumbs: CRUMBS, body });
}

/** "New recovery codes", confirmed by a code. */
export function newRecoveryCodesPage(context: PageContext, form: CodeForm = NO_ERRORS): string {
  const body = html`<section class="panel">
${formError(form.problem)}
<p>Make ${RECOVERY_CODE_COUNT} new recovery codes? Your old ones, used or not, stop working.</p>
<form method="post" action="${RECOVERY_CODES_URL}" novalidate>
${csrfField(context.csrf)}
${codeField(form.errors, PROOF_HINT)}
<div class="form-actions"><button type="submit">Make new recovery codes</button><a href="${SECURITY_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'New recovery codes', section: 'security', breadcrumbs: CRUMBS, body });
}

// ——— "Team" (signed in) ———

/** The account's "Require MFA": its state, and the button that changes it for a role that may. */
export function mfaPolicyPanel(context: PageContext, required: boolean): SafeHtml {
  const state = required
    ? html`<p><span class="badge ok">Required</span> Everyone who signs in with a password gives a code from an authenticator app; who has none sets one up at their next sign-in.</p>`
    : html`<p>Not required. Each user may turn on one-time codes under their email (top right) → Security.</p>`;
  const form = may(context, 'team.mfa_policy')
    ? html`<form method="post" action="${MFA_POLICY_URL}">
${csrfField(context.csrf)}<input type="hidden" name="required" value="${required ? 'off' : 'on'}">
<div class="form-actions"><button type="submit"${required ? html` class="danger"` : ''}>${required ? 'Stop requiring MFA' : 'Require MFA'}</button><span class="muted">Counts from each user's next sign-in; single sign-on asks for no code.</span></div>
</form>`
    : roleNote(context, 'can see this policy but not change it.');
  return html`<section class="panel" aria-labelledby="mfa-policy-title">
<h2 id="mfa-policy-title">One-time codes (MFA)</h2>
${state}
${form}
</section>`;
}
