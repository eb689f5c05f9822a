/**
 * The Connect page (CONTRACT 10) and its few companions: the server's branding, "Connecting as …",
 * then each offered provider with its state for this end user and what can be done about it. Every
 * action is a plain form, so the page works without JavaScript; its one script (assets/connect-page.js,
 * from 'self' under the page's CSP) only posts the page's events to connect.js's opener (and that the
 * popup leaves for a provider) and closes the popup, reading what it needs from data attributes, never
 * from inline script.
 */
import type { StaticProvider } from '../catalog/provider-definition.js';
import type { Branding } from '../services/branding/branding.js';
import type { ConnectPageState, OfferedProvider } from '../services/connect-sessions/connect-sessions.js';
import { brandedPage } from '../web/branded-page.js';
import { html, type SafeHtml } from '../web/html.js';
import { staticFields } from './form-page.js';

/** What the page tells connect.js's opener (CONTRACT 10), one event per thing that happened in this answer. */
export interface PageEvent {
  type: 'connected' | 'disconnected' | 'error';
  provider: string;
  credentialId?: string;
  code?: string;
}

/** A static provider's form sent back: its values (non-secret ones only) and messages. */
export interface StaticFormAgain {
  slug: string;
  values: Record<string, string>;
  errors: Record<string, string>;
  /** The provider refused the values as a whole (CONTRACT 8.3). */
  notice?: string;
}

export interface ConnectPageView {
  branding: Branding;
  /** `/connect/s/{token}`: where the page's forms go. */
  base: string;
  csrf: string;
  state: ConnectPageState;
  /** A sentence atop the providers: what just happened. */
  notice?: { kind: 'success' | 'error'; text: string };
  staticForm?: StaticFormAgain;
  events: PageEvent[];
  allowedOrigins: string[];
  /** The page runs in connect.js's popup (known from a form or a flow the popup started). */
  popup: boolean;
  /** Where "Done" goes: the redirect URI with the outcome, or the page's own "all set" page. */
  doneHref: string;
}

const TITLE = 'Connect your accounts';

/** The hidden fields of every form on the page: the CSRF token, and whether the page runs in the popup (set by its script). */
function hiddenFields(view: Pick<ConnectPageView, 'csrf' | 'popup'>): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${view.csrf}"><input type="hidden" name="popup" value="${view.popup ? '1' : ''}">`;
}

function stateLabel(offer: OfferedProvider): SafeHtml {
  if (!offer.credential) return html`<span class="provider-state">Not connected</span>`;
  if (offer.credential.status === 'needs_reauth') return html`<span class="provider-state attention">Connect again</span>`;
  return html`<span class="provider-state connected">Connected</span>`;
}

function staticForm(view: ConnectPageView, provider: StaticProvider): SafeHtml {
  const again = view.staticForm?.slug === provider.slug ? view.staticForm : undefined;
  return html`<form method="post" action="${view.base}/connect/${provider.slug}" novalidate>
${hiddenFields(view)}
${again?.notice ? html`<p class="error summary" role="alert">${again.notice}</p>` : ''}
${staticFields(provider, { values: again?.values ?? {}, errors: again?.errors ?? {} }, `field-${provider.slug}-`)}
<button type="submit">Connect</button>
</form>`;
}

function providerActions(view: ConnectPageView, offer: OfferedProvider): SafeHtml | '' {
  const { provider, credential } = offer;
  const disconnect: SafeHtml | '' = credential
    ? html`<form method="get" action="${view.base}/disconnect/${provider.slug}"><input type="hidden" name="popup" value="${view.popup ? '1' : ''}">
<button type="submit" class="secondary">Disconnect</button></form>`
    : '';
  // A connected provider is connected again (replacing its credential) only once it needs it.
  if (credential?.status === 'active') return disconnect;
  // An OAuth provider's form is marked: the page's script tells connect.js when the popup leaves for it.
  const connect =
    provider.kind === 'static'
      ? staticForm(view, provider)
      : html`<form method="post" action="${view.base}/connect/${provider.slug}" data-keyward-oauth="${provider.slug}">${hiddenFields(view)}<button type="submit">Connect</button></form>`;
  return html`${connect}${disconnect}`;
}

function providerItem(view: ConnectPageView, offer: OfferedProvider): SafeHtml {
  const { provider } = offer;
  return html`<li class="provider" id="provider-${provider.slug}">
<div class="provider-head"><h2>${provider.name}</h2>${stateLabel(offer)}</div>
<div class="provider-actions">${providerActions(view, offer)}</div>
</li>`;
}

export function connectPage(view: ConnectPageView): string {
  const { state, notice } = view;
  return brandedPage(
    view.branding,
    TITLE,
    html`<h1>${TITLE}</h1>
<p class="connecting-as">Connecting as <strong>${state.connectingAs}</strong></p>
${notice ? html`<p class="${notice.kind === 'error' ? 'error summary' : 'notice'}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</p>` : ''}
${
  state.providers.length === 0
    ? html`<p>There is nothing to connect here right now. Ask the app that sent you here.</p>`
    : html`<ul class="providers">
${state.providers.map((offer) => providerItem(view, offer))}
</ul>`
}
<p class="done"><a class="button secondary" href="${view.doneHref}" data-keyward-done>Done</a></p>
<div id="keyward-connect" hidden data-origins="${JSON.stringify(view.allowedOrigins)}" data-events="${JSON.stringify(view.events)}" data-popup="${view.popup ? '1' : ''}"></div>
<script src="/assets/connect-page.js" defer></script>`,
  );
}

/** The confirmation before a provider is disconnected. */
export function disconnectPage(view: { branding: Branding; base: string; csrf: string; popup: boolean; providerName: string; slug: string }): string {
  return brandedPage(
    view.branding,
    `Disconnect ${view.providerName}`,
    html`<h1>Disconnect ${view.providerName}?</h1>
<p>The app that sent you here will no longer be able to use your ${view.providerName} account. You can connect it again later.</p>
<form method="post" action="${view.base}/disconnect/${view.slug}">
${hiddenFields(view)}
<button type="submit" class="danger">Disconnect</button>
</form>
<p class="done"><a href="${view.base}">Cancel</a></p>`,
  );
}

/**
 * The answer to "Connect" for an OAuth provider: the browser goes on by the Refresh header, or by the
 * link. Not a redirect: the page's CSP lets forms submit to Keyward (and the redirect URI) only, and a
 * browser holds the redirects that follow a form's POST to that rule too (a provider's authorization
 * page may itself redirect to another of its hosts).
 */
export function continuePage(branding: Branding, providerName: string, authorizationUrl: string): string {
  return brandedPage(
    branding,
    `Continue to ${providerName}`,
    html`<h1>Continue to ${providerName}</h1>
<p>You are being sent to ${providerName} to allow access, and then back here.</p>
<p><a class="button" href="${authorizationUrl}">Continue to ${providerName}</a></p>`,
  );
}

/** "Done" on a session without a redirect URI. */
export function donePage(branding: Branding): string {
  return brandedPage(
    branding,
    'All set',
    html`<h1>All set</h1>
<p>You can close this window and go back to the app.</p>`,
  );
}

/** An expired session: nothing says whose it was. */
export function expiredPage(): string {
  return brandedPage(
    null,
    'Link expired',
    html`<h1>Link expired</h1>
<p>This link has expired. Ask the app that sent you here for a new one.</p>`,
  );
}
