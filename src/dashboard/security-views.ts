/**
 * What "Security" shows (security-pages.ts has the routes), reached from the user's email at the top
 * right of every page: the signed-in user's own live sessions (device, address, signed in, last seen;
 * "This device" on the one asking), "Sign out" for each of the others and "Sign out everywhere"
 * (CONTRACT 9). Only the user's own sessions: a role sees the same page, since every user may look
 * after their own sign-in.
 */
import type { SessionView } from '../services/users/sessions.js';
import { html, type SafeHtml } from '../web/html.js';
import { timeOf } from './display-format.js';
import { csrfField, dashboardPage, type PageContext } from './layout-views.js';
import { type CodesView, codesSection } from './mfa-views.js';

export const SECURITY_URL = '/dashboard/security';
export const END_ALL_URL = `${SECURITY_URL}/sessions/end-all`;

export const endSessionUrl = (sessionId: string) => `${SECURITY_URL}/sessions/${sessionId}/end`;

function sessionRows(context: PageContext, sessions: SessionView[]): SafeHtml[] {
  return sessions.map((session) => {
    const here = session.sessionId === context.user.sessionId;
    // A session from before sessions kept their address (migration 017) has none.
    const address = session.address ?? '—';
    return html`<tr>
<td>${session.device}${here ? html` <span class="badge ok">This device</span>` : ''}</td>
<td><code>${address}</code></td>
<td>${timeOf(session.signedInAt)}</td>
<td>${timeOf(session.lastSeenAt)}</td>
<td class="actions">${
      // This browser signs out with "Sign out" at the top right, or with everyone below.
      here
        ? ''
        : html`<form method="post" action="${endSessionUrl(session.sessionId)}">${csrfField(context.csrf)}<button type="submit" class="danger" aria-label="Sign out ${session.device} at ${address}">Sign out</button></form>`
    }</td>
</tr>`;
  });
}

function sessionsSection(context: PageContext, sessions: SessionView[]): SafeHtml {
  return html`<section class="panel" aria-labelledby="sessions-title">
<h2 id="sessions-title">Sessions</h2>
<p class="muted">Where you are signed in to this dashboard, the most recently used first. A session ends after 12 hours without use, and 7 days after it signed in whatever its use. Times are in UTC.</p>
<table>
<thead><tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>
${sessionRows(context, sessions)}
</tbody>
</table>
<form method="post" action="${END_ALL_URL}">
${csrfField(context.csrf)}
<div class="form-actions"><button type="submit" class="danger">Sign out everywhere</button><span class="muted">Ends every session above, this one included.</span></div>
</form>
</section>`;
}

/** The "Security" page. */
export function securityPage(context: PageContext, view: { sessions: SessionView[]; codes: CodesView; notice?: string | null }): string {
  // One section per part of the user's own sign-in; the one-time codes (MFA) section goes before the sessions.
  const sections: SafeHtml[] = [codesSection(context, view.codes), sessionsSection(context, view.sessions)];
  return dashboardPage(context, { title: 'Security', section: 'security', notice: view.notice, body: html`${sections}` });
}
