/**
 * What "Team" shows (team-pages.ts has the routes; CONTRACT 9): the account's users with their roles,
 * the pending invitations, "Invite" (a new link shown once, with "Copy", only in the answer to the POST
 * that made it), and the confirmations before a user is removed or an invitation revoked. Each form is
 * drawn only for a role that may use it; the finer rule (only owners make, change or remove owners) is
 * drawn the same way, from the role each form would give or take.
 *
 * The public pages of an invitation's link (join-routes.ts) are here too: "Join {account}", and the
 * page of a link that no longer works, which names neither the account nor the email.
 */
import type { InvitationEmailOutcome, PendingInvitation } from '../services/team/invitations.js';
import { roleChangeAction, TEAM_ROLES, type TeamRole } from '../services/team/roles.js';
import { removalAction } from '../services/team/team-actor.js';
import type { TeamUser } from '../services/team/team-users.js';
import { html, type SafeHtml } from '../web/html.js';
import { shownDate, timeOf } from './display-format.js';
import { type FieldErrors, formError, selectField, shownOnce, textField } from './forms.js';
import { csrfField, dashboardPage, onceField, type PageContext, publicPage } from './layout-views.js';
import { mfaPolicyPanel } from './mfa-views.js';
import { may, roleNote } from './role-views.js';

export const TEAM_URL = '/dashboard/team';
export const INVITE_URL = `${TEAM_URL}/invitations`;
export const REVOKE_INVITATION_URL = `${TEAM_URL}/invitations/revoke`;
export const ROLE_URL = `${TEAM_URL}/role`;
export const REMOVE_URL = `${TEAM_URL}/remove`;
export const JOIN_URL = '/dashboard/join';

const CRUMBS = [{ label: 'Team', href: TEAM_URL }];

export const ROLE_LABELS: Record<TeamRole, string> = { owner: 'Owner', admin: 'Admin', developer: 'Developer', viewer: 'Viewer' };

/** Highest first, as a person reads a list of roles. */
const ROLES_DOWN = [...TEAM_ROLES].reverse();

/** The roles `role` may give: the invite form's choices, and each user's role select. */
function rolesUpTo(role: TeamRole, action: (to: TeamRole) => boolean): TeamRole[] {
  return ROLES_DOWN.filter((to) => TEAM_ROLES.indexOf(to) <= TEAM_ROLES.indexOf(role) && action(to));
}

export interface InviteForm {
  values: { email: string; role: string };
  errors: FieldErrors;
  problem?: string;
}

/** A new invitation, in the answer to the POST that made it only. */
export interface NewInvitationView {
  email: string;
  role: TeamRole;
  url: string;
  expiresAt: string;
  emailed: InvitationEmailOutcome;
}

export interface TeamView {
  users: TeamUser[];
  invitations: PendingInvitation[];
  form?: InviteForm;
  invited?: NewInvitationView;
  /** A refusal of a role change or a removal, above the list. */
  problem?: string;
  notice?: string | null;
  /** Whether the account requires one-time codes: its "Require MFA" panel (mfa-views.ts), drawn when given. */
  mfaRequired?: boolean;
}

function emailSentence(invited: NewInvitationView): SafeHtml {
  switch (invited.emailed) {
    case 'sent':
      return html`<p class="notice" role="status">The invitation was emailed to ${invited.email}. The link is also here, once, if you want to send it another way.</p>`;
    case 'failed':
      return html`<p class="warning" role="alert">The email to ${invited.email} could not be sent. The invitation exists all the same: copy the link and send it to them yourself.</p>`;
    default:
      return html`<p class="muted">Send this link to ${invited.email} yourself: this Keyward has no email server set up (KEYWARD_SMTP_URL).</p>`;
  }
}

function invitedPanel(invited: NewInvitationView): SafeHtml {
  return html`${shownOnce('Invitation link', invited.url)}
${emailSentence(invited)}
<p class="muted">Opened by ${invited.email}, it lets them choose a password and join as ${ROLE_LABELS[invited.role].toLowerCase()}. It works once, until ${timeOf(
    invited.expiresAt,
  )}.</p>`;
}

function inviteForm(context: PageContext, form: InviteForm): SafeHtml {
  const roles = rolesUpTo(context.user.role, () => true);
  return html`<section class="panel" aria-labelledby="invite-title">
<h2 id="invite-title">Invite</h2>
${formError(form.problem)}
<form method="post" action="${INVITE_URL}" novalidate>
${csrfField(context.csrf)}${onceField(context.once)}
${textField({ name: 'email', label: 'Email', type: 'email', required: true, maxLength: 320, value: form.values.email, errors: form.errors })}
${selectField({
  name: 'role',
  label: 'Role',
  required: true,
  value: form.values.role || 'viewer',
  options: roles.map((r) => ({ value: r, label: ROLE_LABELS[r] })),
  hint: 'At most your own role. Viewers see everything and change nothing; developers manage keys, providers and webhooks; admins also servers and the team.',
  errors: form.errors,
})}
<div class="form-actions"><button type="submit">Invite</button></div>
</form>
</section>`;
}

/** A user's role: a select with "Change role" where the viewer may change it, else the role as text. */
function roleCell(context: PageContext, user: TeamUser): SafeHtml {
  const mine = context.user.role;
  if (!may(context, roleChangeAction(user.role))) return html`${ROLE_LABELS[user.role]}`;
  const choices = rolesUpTo(mine, (to) => may(context, roleChangeAction(to)));
  return html`<form method="post" action="${ROLE_URL}" class="inline-form">
${csrfField(context.csrf)}<input type="hidden" name="user" value="${user.id}">
<select name="role" aria-label="Role of ${user.email}">
${choices.map((r) => html`<option value="${r}"${r === user.role ? html` selected` : ''}>${ROLE_LABELS[r]}</option>`)}
</select>
<button type="submit" class="secondary">Change role</button>
</form>`;
}

function userRows(context: PageContext, users: TeamUser[]): SafeHtml[] {
  return users.map(
    (user) => html`<tr>
<td>${user.email}${user.id === context.user.userId ? html` <span class="muted">(you)</span>` : ''}</td>
<td>${roleCell(context, user)}</td>
<td>${timeOf(user.createdAt)}</td>
<td>${user.lastSignInAt ? timeOf(user.lastSignInAt) : 'Never'}</td>
<td class="actions">${
      // A GET form: the button opens the confirmation page, whose POST carries the CSRF token.
      may(context, removalAction(user.role))
        ? html`<form method="get" action="${REMOVE_URL}"><input type="hidden" name="user" value="${user.id}"><button type="submit" class="danger" aria-label="Remove ${user.email}">Remove</button></form>`
        : ''
    }</td>
</tr>`,
  );
}

function invitationRows(context: PageContext, invitations: PendingInvitation[]): SafeHtml[] {
  return invitations.map(
    (invitation) => html`<tr>
<td>${invitation.email}</td>
<td>${ROLE_LABELS[invitation.role]}</td>
<td>${timeOf(invitation.expiresAt)}</td>
<td class="actions">${
      may(context, 'team.invite')
        ? html`<form method="get" action="${REVOKE_INVITATION_URL}"><input type="hidden" name="invitation" value="${invitation.id}"><button type="submit" class="danger" aria-label="Revoke the invitation of ${invitation.email}">Revoke invitation</button></form>`
        : ''
    }</td>
</tr>`,
  );
}

export function teamPage(context: PageContext, view: TeamView): string {
  const users = html`<section class="panel" aria-labelledby="users-title">
<h2 id="users-title">Users</h2>
${formError(view.problem)}
<table>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Last sign-in</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>
${userRows(context, view.users)}
</tbody>
</table>
</section>`;
  const invitations = html`<section class="panel" aria-labelledby="invitations-title">
<h2 id="invitations-title">Pending invitations</h2>
${
  view.invitations.length
    ? html`<table>
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>
${invitationRows(context, view.invitations)}
</tbody>
</table>`
    : html`<p class="empty">No pending invitations.</p>`
}
</section>`;
  const invite = may(context, 'team.invite')
    ? inviteForm(context, view.form ?? { values: { email: '', role: 'viewer' }, errors: {} })
    : roleNote(context, 'can see the team but not invite, change or remove anyone.');
  const body = html`${view.invited ? invitedPanel(view.invited) : ''}
${invite}
${users}
${invitations}
${view.mfaRequired === undefined ? '' : mfaPolicyPanel(context, view.mfaRequired)}
<p class="muted"><a href="${TEAM_URL}/sso">Single sign-on</a>: how the team signs in through your company’s identity provider (OpenID Connect).</p>`;
  return dashboardPage(context, { title: 'Team', section: 'team', notice: view.notice, body });
}

/** "Remove user", confirmed by a POST form. */
export function removeUserPage(context: PageContext, user: { id: string; email: string; role: TeamRole }): string {
  const body = html`<section class="panel">
<p>Remove <strong>${user.email}</strong> (${ROLE_LABELS[user.role].toLowerCase()}) from ${context.user.accountName}? They are signed out everywhere at once and can no longer sign in to this account.</p>
<form method="post" action="${REMOVE_URL}">
${csrfField(context.csrf)}<input type="hidden" name="user" value="${user.id}">
<div class="form-actions"><button type="submit" class="danger">Remove</button><a href="${TEAM_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'Remove user', section: 'team', breadcrumbs: CRUMBS, body });
}

/** "Revoke invitation", confirmed by a POST form. */
export function revokeInvitationPage(context: PageContext, invitation: { id: string; email: string; role: TeamRole; expires_at: string }): string {
  const body = html`<section class="panel">
<p>Revoke the invitation of <strong>${invitation.email}</strong> (${ROLE_LABELS[invitation.role].toLowerCase()}, until ${shownDate(
    invitation.expires_at,
  )})? Its link stops working at once.</p>
<form method="post" action="${REVOKE_INVITATION_URL}">
${csrfField(context.csrf)}<input type="hidden" name="invitation" value="${invitation.id}">
<div class="form-actions"><button type="submit" class="danger">Revoke invitation</button><a href="${TEAM_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'Revoke invitation', section: 'team', breadcrumbs: CRUMBS, body });
}

/** "Join {account}": the invitation's email, and the password the person chooses. */
export function joinPage(
  csrf: string,
  token: string,
  invitation: { accountName: string; email: string; role: TeamRole },
  errors: FieldErrors = {},
  problem?: string,
  /** "Join with SSO" (sso-views.ts), where the account has single sign-on. */
  sso?: SafeHtml,
): string {
  return publicPage(
    `Join ${invitation.accountName}`,
    html`${formError(problem)}
<p>You were invited to join <strong>${invitation.accountName}</strong> on Keyward as ${ROLE_LABELS[invitation.role].toLowerCase()}.</p>
<form method="post" action="${JOIN_URL}" novalidate>
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="token" value="${token}">
<div class="field"><label for="join-email">Email</label>
<input id="join-email" type="email" value="${invitation.email}" readonly autocomplete="username"></div>
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.', errors })}
<button type="submit">Join</button>
</form>
${sso ?? ''}`,
  );
}

/** The sentence for a link that no longer works: it says what became of the link, never whose it was. */
const GONE: Record<'used' | 'expired' | 'revoked', string> = {
  used: 'This invitation link was used already: each link joins once.',
  expired: 'This invitation link has expired: links work for 7 days.',
  revoked: 'This invitation link was revoked.',
};

export function invitationGonePage(state: keyof typeof GONE): string {
  return publicPage(
    'Invitation link not valid',
    html`<p>${GONE[state]}</p>
<p>Ask the person who invited you for a new invitation. If you have joined already, <a href="/dashboard/sign-in">sign in</a>.</p>`,
  );
}
