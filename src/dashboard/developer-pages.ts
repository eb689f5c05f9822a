/**
 * "Developer" → "Account API Keys" (CONTRACT 1 and 6): the list of the account's keys (hints only),
 * "Generate Key" (the new key answered once, in the POST's own response, so a later visit never shows
 * it again; the form acts once, so a reload of that answer makes no second key) and "Revoke" behind a
 * confirmation page. A key id from the URL is looked up through the
 * member's account: another account's key answers the same 404 as an unknown one.
 */
import type { FastifyReply } from 'fastify';
import { html, type SafeHtml } from '../web/html.js';
import { Problem } from '../errors.js';
import { createAccountKey, ENVIRONMENTS, listAccountKeys, revokeAccountKey, type AccountKeyView } from '../services/account-keys.js';
import type { ServiceContext } from '../services/context.js';
import { ServiceError } from '../services/service-error.js';
import { formText } from '../web/form-fields.js';
import { actorNames, timeOf } from './audit-pages.js';
import { formError, selectField, shownOnce, textField, type FieldErrors } from './forms.js';
import { createOnce, onceField } from './form-once.js';
import { csrfField, dashboardPage, fixedText, sendPage, type PageContext } from './layout.js';
import { pageContext, type PageRoutes } from './plugin.js';
import { memberActor } from './server-access.js';

const KEYS_URL = '/dashboard/developer/api-keys';
const CRUMBS = [{ label: 'Developer', href: '/dashboard/developer' }];

/** The notices a redirect may ask for, by code: the page shows only these fixed texts. */
const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked. Backends still using it are refused from now on.',
  'key-already-revoked': 'That key was revoked already.',
};

const ENVIRONMENT_LABELS: Record<string, string> = { production: 'Production', staging: 'Staging', development: 'Development', other: 'Other' };

/** What a datetime-local control sends (no zone): read as UTC, as the field's hint says. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

interface GenerateForm {
  values: { label: string; environment: string; expiresAt: string };
  errors: FieldErrors;
  problem?: string;
}

function status(key: AccountKeyView, now: string): { text: 'Active' | 'Revoked' | 'Expired'; badge: string } {
  if (key.revokedAt) return { text: 'Revoked', badge: 'bad' };
  if (key.expiresAt && key.expiresAt <= now) return { text: 'Expired', badge: 'warn' };
  return { text: 'Active', badge: 'ok' };
}

function generateForm(csrf: string, form: GenerateForm): SafeHtml {
  const { values, errors } = form;
  return html`<section class="panel" aria-labelledby="generate-title">
<h2 id="generate-title">Generate a new key</h2>
${formError(form.problem)}
<form method="post" action="${KEYS_URL}" novalidate>
${csrfField(csrf)}${onceField()}
${textField({ name: 'label', label: 'Label', required: true, maxLength: 100, value: values.label, hint: 'What uses this key, such as "Billing backend". 1 to 100 characters.', errors })}
${selectField({
  name: 'environment',
  label: 'Environment',
  required: true,
  value: values.environment || 'production',
  options: ENVIRONMENTS.map((e) => ({ value: e, label: ENVIRONMENT_LABELS[e]! })),
  errors,
})}
${textField({
  name: 'expiresAt',
  label: 'Expires at',
  type: 'datetime-local',
  value: values.expiresAt,
  hint: 'In UTC, not your local time, and in the future. Leave it empty for a key that does not expire.',
  errors,
})}
<div class="form-actions"><button type="submit">Generate Key</button></div>
</form>
</section>`;
}

function keyRows(keys: AccountKeyView[], names: Map<string, string>, now: string): SafeHtml[] {
  return keys.map((key) => {
    const state = status(key, now);
    const exposure = key.browserExposure;
    return html`<tr>
<td>${key.label}</td>
<td>${ENVIRONMENT_LABELS[key.environment] ?? key.environment}</td>
<td><code>${key.hint}</code></td>
<td>${names.get(key.createdBy)}<br><span class="muted">${timeOf(key.createdAt)}</span></td>
<td>${key.lastUsedAt ? timeOf(key.lastUsedAt) : 'Never'}</td>
<td>${key.expiresAt ? timeOf(key.expiresAt) : 'Never'}</td>
<td><span class="badge ${state.badge}">${state.text}</span>${key.revokedAt ? html`<br><span class="muted">${timeOf(key.revokedAt)}</span>` : ''}</td>
<td class="actions">${
      // A GET form: the button only opens the confirmation page, whose POST form carries the CSRF token
      // (a token in a GET URL would end up in history and logs). An expired key can be revoked too: it
      // still counts towards the limit of 50.
      key.revokedAt
        ? ''
        : html`<form method="get" action="${KEYS_URL}/${key.id}/revoke"><button type="submit" class="danger" aria-label="Revoke ${key.label}">Revoke</button></form>`
    }</td>
</tr>${
      exposure
        ? html`<tr class="exposure"><td colspan="8"><p class="warning" role="note"><strong>${key.label}:</strong> Used from a browser at ${exposure.origin} on ${timeOf(
            exposure.at,
          )}${state.text === 'Active' ? ' — revoke it and generate a new one.' : '.'}</p></td></tr>`
        : ''
    }`;
  });
}

async function keysPage(ctx: ServiceContext, context: PageContext, options: { form?: GenerateForm; newKey?: string; notice?: string | null }): Promise<string> {
  const { accountId } = context.member;
  const keys = await listAccountKeys(ctx, accountId);
  const names = await actorNames(ctx, accountId, keys.map((k) => k.createdBy));
  const now = ctx.clock.now().toISOString();
  const table = keys.length
    ? html`<table>
<thead><tr><th scope="col">Label</th><th scope="col">Environment</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>
${keyRows(keys, names, now)}
</tbody>
</table>`
    : html`<p class="empty">No account API keys yet. Generate one to call the management API.</p>`;
  const body = html`${options.newKey ? shownOnce('New account API key', options.newKey) : ''}
<section class="panel">
<p>An account API key opens the management API for the whole account. Send it as <code>Authorization: Bearer …</code>, together with one server's key in <code>x-service-key</code>, which chooses the server.</p>
<p class="warning">Use it from your backends only — never in a browser, a mobile app or any code you ship to users. Keyward refuses calls made from a browser and flags the key here.</p>
<p class="muted">Generate one key per environment (production, staging, development), so one can be revoked without stopping the others. An account may have at most 50 keys that are not revoked.</p>
</section>
${generateForm(context.csrf, options.form ?? { values: { label: '', environment: 'production', expiresAt: '' }, errors: {} })}
<section class="panel" aria-labelledby="keys-title">
<h2 id="keys-title">Keys</h2>
${table}
</section>`;
  return dashboardPage(context, { title: 'Account API Keys', section: 'developer', breadcrumbs: CRUMBS, notice: options.notice, body });
}

/** The account's own key, or the 404 every unknown or foreign key id gets. */
async function keyOfAccount(ctx: ServiceContext, accountId: string, keyId: string) {
  const key = await ctx.store.keys.accountKeyOfAccount(accountId, keyId);
  if (!key) throw new Problem('route_not_found', 'No such account API key in this account.');
  return key;
}

/** Checks the "Generate Key" form the way the member will read it; the service checks again. */
function readForm(body: unknown, now: Date): GenerateForm & { expiresAt: string | null } {
  const values = { label: formText(body, 'label').trim(), environment: formText(body, 'environment'), expiresAt: formText(body, 'expiresAt').trim() };
  const errors: FieldErrors = {};
  if (!values.label) errors.label = 'Enter a label, such as the name of the backend that will use the key.';
  else if ([...values.label].length > 100) errors.label = 'Use at most 100 characters.';
  if (!(ENVIRONMENTS as readonly string[]).includes(values.environment)) errors.environment = 'Choose one of the environments.';
  let expiresAt: string | null = null;
  if (values.expiresAt) {
    const parsed = LOCAL_TIME.test(values.expiresAt) ? new Date(`${values.expiresAt}Z`) : null;
    if (!parsed || Number.isNaN(parsed.getTime())) errors.expiresAt = 'Enter a date and time, such as 2030-01-31T09:00 (UTC).';
    else if (parsed <= now) errors.expiresAt = 'Choose a time in the future (UTC).';
    else expiresAt = parsed.toISOString();
  }
  return { values, errors, expiresAt };
}

function redirectToKeys(reply: FastifyReply, notice: keyof typeof NOTICES) {
  return reply.redirect(`${KEYS_URL}?notice=${notice}`, 303);
}

export const registerDeveloperPages: PageRoutes = (scope, ctx) => {
  scope.get('/developer', async (request, reply) => {
    const context = pageContext(request);
    const body = html`<section class="panel">
<p>Your backends call Keyward's management API to start connections for your end users and to read or revoke their credentials. Each call carries an account API key and a server key.</p>
<ul class="link-list">
<li><a href="${KEYS_URL}">Account API Keys</a> — generate and revoke the keys your backends use.</li>
<li><a href="/openapi.json">API reference</a> — the OpenAPI document of every route, its fields and its errors.</li>
</ul>
</section>`;
    return sendPage(reply, dashboardPage(context, { title: 'Developer', section: 'developer', body }));
  });

  scope.get('/developer/api-keys', async (request, reply) => {
    const notice = fixedText(NOTICES, (request.query as Record<string, unknown>).notice);
    return sendPage(reply, await keysPage(ctx, pageContext(request), { notice }));
  });

  scope.post('/developer/api-keys', async (request, reply) => {
    const context = pageContext(request);
    const form = readForm(request.body, ctx.clock.now());
    if (Object.keys(form.errors).length) return sendPage(reply, await keysPage(ctx, context, { form }), 422);
    const target = {
      section: 'developer' as const,
      back: { href: KEYS_URL, label: 'Account API Keys' },
      lost: 'If you did not see the key it made, revoke the newest key in the list and generate another.',
    };
    return createOnce(ctx, request, reply, context, target, async () => {
      try {
        const { key } = await createAccountKey(ctx, {
          accountId: context.member.accountId,
          label: form.values.label,
          environment: form.values.environment,
          expiresAt: form.expiresAt,
          actor: memberActor(context.member.memberId),
        });
        // Answered here, not after a redirect: the key exists only in this response.
        return sendPage(reply, await keysPage(ctx, context, { newKey: key }));
      } catch (error) {
        if (!(error instanceof ServiceError) || (error.reason !== 'limit' && error.reason !== 'invalid')) throw error;
        const problem =
          error.reason === 'limit'
            ? 'This account has 50 keys that are not revoked, the most it may have. Revoke one you no longer use, then generate the new one.'
            : `This key could not be generated: ${error.message}.`;
        return sendPage(reply, await keysPage(ctx, context, { form: { ...form, problem } }), error.reason === 'limit' ? 409 : 422);
      }
    });
  });

  scope.get<{ Params: { keyId: string } }>('/developer/api-keys/:keyId/revoke', async (request, reply) => {
    const context = pageContext(request);
    const key = await keyOfAccount(ctx, context.member.accountId, request.params.keyId);
    if (key.revoked_at) return redirectToKeys(reply, 'key-already-revoked');
    const body = html`<section class="panel">
<p>Revoke key <strong>${key.label}</strong> (<code>${key.hint}</code>)? Backends using it stop working at once.</p>
<form method="post" action="${KEYS_URL}/${key.id}/revoke">
${csrfField(context.csrf)}
<div class="form-actions"><button type="submit" class="danger">Revoke</button><a href="${KEYS_URL}">Cancel</a></div>
</form>
</section>`;
    return sendPage(
      reply,
      dashboardPage(context, { title: 'Revoke account API key', section: 'developer', breadcrumbs: [...CRUMBS, { label: 'Account API Keys', href: KEYS_URL }], body }),
    );
  });

  scope.post<{ Params: { keyId: string } }>('/developer/api-keys/:keyId/revoke', async (request, reply) => {
    const context = pageContext(request);
    const key = await keyOfAccount(ctx, context.member.accountId, request.params.keyId);
    if (key.revoked_at) return redirectToKeys(reply, 'key-already-revoked');
    await revokeAccountKey(ctx, key.id, memberActor(context.member.memberId));
    return redirectToKeys(reply, 'key-revoked');
  });
};
