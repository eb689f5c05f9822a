/**
 * The dashboard's page frame: one layout with the main navigation (Servers, Developer, Team, Audit), the
 * signed-in user, and "Sign out"; the public card of sign-in and sign-up; the error pages. Everything
 * is rendered on the server with the escaping `html` template; the only script is /assets/dashboard.js
 * (the "Copy" buttons), so the CSP allows no inline code.
 */

import type { UserSession } from '../services/users/sessions.js';
import { html, htmlDocument, type SafeHtml } from '../web/html.js';
import { UNAVAILABLE_PAGE } from '../web/problem-answers.js';

export type Section = 'servers' | 'developer' | 'team' | 'audit' | 'security';

const SECTIONS: { id: Section; label: string; href: string }[] = [
  { id: 'servers', label: 'Servers', href: '/dashboard/servers' },
  { id: 'developer', label: 'Developer', href: '/dashboard/developer' },
  { id: 'team', label: 'Team', href: '/dashboard/team' },
  { id: 'audit', label: 'Audit', href: '/dashboard/audit' },
];

function document(title: string, body: SafeHtml): string {
  return htmlDocument(title, { stylesheet: '/assets/dashboard.css', script: '/assets/dashboard.js' }, body);
}

/** A hidden field with the session's CSRF token: every form of a signed-in page carries one. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

/** Who is signed in and the tokens of their forms: all a signed-in page needs of the request. */
export interface PageContext {
  user: UserSession;
  csrf: string;
  /** A fresh one-time nonce for the form of this page that creates something (form-once.ts). */
  once: string;
}

/** The hidden field of a form that creates something: the nonce its POST claims before creating. */
export function onceField(once: string): SafeHtml {
  return html`<input type="hidden" name="once" value="${once}">`;
}

export interface Breadcrumb {
  label: string;
  href: string;
}

export interface DashboardPage {
  title: string;
  section: Section;
  body: SafeHtml;
  /** A short confirmation shown above the content (after a redirect), never user-supplied text. */
  notice?: string | null;
  /** Links above the title, from the section down to this page's parent. */
  breadcrumbs?: Breadcrumb[];
}

export function dashboardPage(context: PageContext, page: DashboardPage): string {
  const nav = SECTIONS.map((s) => html`<a href="${s.href}"${s.id === page.section ? html` aria-current="page"` : ''}>${s.label}</a>`);
  const crumbs = page.breadcrumbs?.length
    ? html`<nav class="breadcrumbs" aria-label="Breadcrumb">${page.breadcrumbs.map((c) => html`<a href="${c.href}">${c.label}</a><span aria-hidden="true"> / </span>`)}</nav>`
    : '';
  return document(
    page.title,
    html`<body class="app">
<header class="topbar">
<a class="brand" href="/dashboard">Keyward</a>
<nav class="main-nav" aria-label="Main">${nav}</nav>
<div class="who"><a href="/dashboard/security" title="Security"${page.section === 'security' ? html` aria-current="page"` : ''}><span>${context.user.email}</span></a><span class="account">${context.user.accountName}</span>
<form method="post" action="/dashboard/sign-out">${csrfField(context.csrf)}<button type="submit" class="link">Sign out</button></form></div>
</header>
<main class="page">
${crumbs}
<h1>${page.title}</h1>
${page.notice ? html`<p class="notice" role="status">${page.notice}</p>` : ''}
${page.body}
</main>
</body>`,
  );
}

/** A signed-in form posted without its session's token (another site's, or a page kept too long). */
export function formExpiredPage(): string {
  return publicPage('Form expired', html`<p>This form could not be verified. Go back, reload the page and try again.</p>`);
}

/** A page or form the user's role does not allow (CONTRACT 9): nothing was changed. */
export function roleRefusedPage(role: string): string {
  return publicPage(
    'Not allowed',
    html`<p>Your role (${role}) cannot do this.</p>
<p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}

/** Sign-in and sign-up: a centred card without navigation. */
export function publicPage(title: string, body: SafeHtml): string {
  return document(
    title,
    html`<body class="public">
<main class="card">
<p class="brand">Keyward</p>
<h1>${title}</h1>
${body}
</main>
</body>`,
  );
}

/** What the dashboard shows for an error: a page, never a stack or the problem's internals. */
export function errorPage(status: number): string {
  const [title, text] =
    status === 404
      ? ['Page not found', 'This page does not exist, or it belongs to another account.']
      : status === 503
        ? [UNAVAILABLE_PAGE.title, UNAVAILABLE_PAGE.text]
        : status >= 500
          ? ['Something went wrong', 'Keyward could not finish this request. Try again in a moment.']
          : ['Request not accepted', 'This request could not be read. Go back and try again.'];
  return publicPage(
    title,
    html`<p>${text}</p>
<p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}

/** A create form sent a second time (its one-time nonce already claimed): nothing new was made. */
export function alreadySubmittedBody(target: { back: Breadcrumb; lost: string }): SafeHtml {
  return html`<section class="panel">
<p>This form was already submitted; nothing new was made.</p>
<p>${target.lost}</p>
<p><a href="${target.back.href}">Back to ${target.back.label}</a></p>
</section>`;
}
