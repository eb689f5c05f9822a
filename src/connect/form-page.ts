/** The hosted static-credential form and its outcome pages. */
import type { StaticProvider } from '../catalog/provider-definition.js';
import type { Branding } from '../services/branding/branding.js';
import { brandedPage } from '../web/branded-page.js';
import { own } from '../web/form-fields.js';
import { html, page, type SafeHtml } from '../web/html.js';

export interface FormState {
  provider: StaticProvider;
  csrf: string;
  /** Non-secret values to keep after a refused submission; secret ones are never sent back. */
  values: Record<string, string>;
  errors: Record<string, string>;
  /** A refusal of the values as a whole, shown above the fields (the provider refused them: CONTRACT 8.3). */
  notice?: string;
  /** The server's branding (CONTRACT 10): its name, logo and accent around the form. */
  branding?: Branding | null;
}

/** What the form says above its fields when the provider refused the values it was given. */
export function refusedCredentialsMessage(providerName: string, status: number): string {
  return `${providerName} refused these credentials (HTTP ${status}). Check them and try again.`;
}

/**
 * A static provider's inputs, each with its label and its message; secret ones as password inputs,
 * never filled in again. `idPrefix` keeps ids unique where one page holds several providers' fields.
 */
export function staticFields(provider: StaticProvider, state: Pick<FormState, 'values' | 'errors'>, idPrefix = 'field-'): SafeHtml[] {
  return provider.fields.map((field) => {
    const id = `${idPrefix}${field.name}`;
    const error = own(state.errors, field.name);
    return html`<div class="field${error ? ' invalid' : ''}">
<label for="${id}">${field.label}${field.required ? '' : html` <span class="optional">(optional)</span>`}</label>
<input id="${id}" name="${field.name}" type="${field.secret ? 'password' : 'text'}" maxlength="4096"
 autocomplete="off" spellcheck="false"${field.required ? html` required` : ''}
 value="${field.secret ? '' : (own(state.values, field.name) ?? '')}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</div>`;
  });
}

export function formPage(state: FormState): string {
  const { provider } = state;
  const hasErrors = Object.keys(state.errors).length > 0;
  const fields = staticFields(provider, state);
  return brandedPage(
    state.branding ?? null,
    `Connect ${provider.name}`,
    html`<h1>Connect ${provider.name}</h1>
<p>Enter your ${provider.name} credentials. They are encrypted and shared only with the app that sent you here.</p>
${state.notice ? html`<p class="error summary" role="alert">${state.notice}</p>` : ''}
${hasErrors ? html`<p class="error summary" role="alert">Some values need attention; see below.</p>` : ''}
<form method="post" novalidate>
<input type="hidden" name="csrf" value="${state.csrf}">
${fields}
<button type="submit">Connect ${provider.name}</button>
</form>`,
  );
}

export function successPage(providerName: string, branding: Branding | null = null): string {
  return brandedPage(
    branding,
    `${providerName} connected`,
    html`<h1>${providerName} connected</h1>
<p>Your credentials were saved. You can close this window.</p>`,
  );
}

const MESSAGES = {
  404: { title: 'Link not found', text: 'This link is not valid. Ask the app that sent you here for a new one.' },
  410: { title: 'Link no longer valid', text: 'This link was already used or has expired. Ask the app that sent you here for a new one.' },
  403: { title: 'Form expired in this browser', text: 'This page could not be verified. Reload it and try again.' },
} as const;

export function messagePage(status: 403 | 404 | 410): string {
  const { title, text } = MESSAGES[status];
  return page(
    title,
    html`<h1>${title}</h1>
<p>${text}</p>`,
  );
}

/** `branding` only where the page belongs to a known server's flow: an unknown or used link's page reveals no one. */
export function errorPage(status: number, title: string, text: string, branding: Branding | null = null): string {
  return brandedPage(
    branding,
    title,
    html`<h1>${title}</h1>
<p>${text}</p>
<p class="status">Error ${status}</p>`,
  );
}
