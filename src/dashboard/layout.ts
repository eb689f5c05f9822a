/**
 * The dashboard's page frame: one layout with the main navigation (Servers, Developer, Audit), the
 * signed-in member, and "Sign out". Everything is rendered on the server with the escaping `html`
 * template; the only script is /assets/dashboard.js (the "Copy" buttons), so the CSP allows no inline code.
 */
import type { FastifyReply } from 'fastify';
import { html, htmlDocument, type SafeHtml } from '../web/html.js';
import type { MemberSession } from '../services/sessions.js';
import { own } from '../web/form-fields.js';

export type Section = 'servers' | 'developer' | 'audit';

const SECTIONS: { id: Section; label: string; href: string }[] = [
  { id: 'servers', label: 'Servers', href: '/dashboard/servers' },
  { id: 'developer', label: 'Developer', href: '/dashboard/developer' },
  { id: 'audit', label: 'Audit', href: '/dashboard/audit' },
];

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'";

function document(title: string, body: SafeHtml): string {
  return htmlDocument(title, { stylesheet: '/assets/dashboard.css', script: '/assets/dashboard.js' }, body);
}

/** A hidden field with the session's CSRF token: every form of a signed-in page carries one. */
export function csrfField(csrf: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${csrf}">`;
}

export interface PageContext {
  member: MemberSession;
  csrf: string;
}

export interface DashboardPage {
  title: string;
  section: Section;
  body: SafeHtml;
  /** A short confirmation shown above the content (after a redirect), never user-supplied text. */
  notice?: string | null;
  /** Links above the title, from the section down to this page's parent. */
  breadcrumbs?: { label: string; href: string }[];
}

export function dashboardPage(context: PageContext, page: DashboardPage): string {
  const nav = SECTIONS.map(
    (s) => html`<a href="${s.href}"${s.id === page.section ? html` aria-current="page"` : ''}>${s.label}</a>`,
  );
  const crumbs = page.breadcrumbs?.length
    ? html`<nav class="breadcrumbs" aria-label="Breadcrumb">${page.breadcrumbs.map((c) => html`<a href="${c.href}">${c.label}</a><span aria-hidden="true"> / </span>`)}</nav>`
    : '';
  return document(
    page.title,
    html`<body class="app">
<header class="topbar">
<a class="brand" href="/dashboard">Keyward</a>
<nav class="main-nav" aria-label="Main">${nav}</nav>
<div class="who"><span>${context.member.email}</span><span class="account">${context.member.accountName}</span>
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

/**
 * The fixed text a request-chosen code (`?notice=`) names, or null. Only the table's own keys count:
 * a plain lookup would find `constructor` or `toString` on every object and print a function.
 */
export function fixedText(table: Record<string, string>, code: unknown): string | null {
  return typeof code === 'string' ? (own(table, code) ?? null) : null;
}

/** A signed-in form posted without its session's token (another site's, or a page kept too long). */
export function formExpiredPage(): string {
  return publicPage('Form expired', html`<p>This form could not be verified. Go back, reload the page and try again.</p>`);
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

/** The headers of every dashboard page: never cached, never framed, no inline code. */
export function sendPage(reply: FastifyReply, page: string, status = 200) {
  return reply
    .code(status)
    .headers({
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-security-policy': DASHBOARD_CSP,
    })
    .type('text/html; charset=utf-8')
    .send(page);
}

/** What the dashboard shows for an error: a page, never a stack or the problem's internals. */
export function errorPage(status: number): string {
  const [title, text] =
    status === 404
      ? ['Page not found', 'This page does not exist, or it belongs to another account.']
      : status >= 500
        ? ['Something went wrong', 'Keyward could not finish this request. Try again in a moment.']
        : ['Request not accepted', 'This request could not be read. Go back and try again.'];
  return publicPage(title, html`<p>${text}</p>
<p><a href="/dashboard">Back to the dashboard</a></p>`);
}
