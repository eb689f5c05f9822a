/**
 * What a page draws for the signed-in user's role (CONTRACT 9: a form a role does not allow is not
 * shown). A page asks `may` with the same action the route table (route-actions.ts) gives the route
 * the form or button leads to, so the page and the route's own check can never disagree; the route's
 * check stays the guard, this only keeps a page from offering what would be refused.
 */
import { mayDo, type TeamAction } from '../services/team/roles.js';
import { html, type SafeHtml } from '../web/html.js';
import type { PageContext } from './layout-views.js';

/** Whether the signed-in user's role may take `action`: whether a page draws its forms and buttons. */
export function may(context: PageContext, action: TeamAction): boolean {
  return mayDo(context.user.role, action);
}

/**
 * The short line a page shows where it left forms out, so a person knows why: "Your role (viewer)
 * {does}", `does` saying what the role can and cannot do here ("can see these keys but not change them.").
 */
export function roleNote(context: PageContext, does: string): SafeHtml {
  return html`<p class="muted">Your role (${context.user.role}) ${does}</p>`;
}
