/**
 * Servers (CONTRACT 6, issue 4.3): the account's servers and the create form, and one server's Overview
 * tab — its mode, its server key ("Rotate key", with a grace period) and its allowed redirect URIs.
 * A new or rotated key is answered in the POST's own 200 page (never after a redirect), so a later
 * visit cannot show it again; both forms act once, so a reload of that page makes no second server
 * or key.
 */
import type { FastifyInstance } from 'fastify';
import { html, type SafeHtml } from '../web/html.js';
import type { ServiceContext } from '../services/context.js';
import { ServiceError } from '../services/service-error.js';
import { formText } from '../web/form-fields.js';
import {
  allowRedirectUri,
  createServer,
  listLiveServerKeys,
  listRedirectUris,
  listServersOfAccount,
  removeRedirectUri,
  rotateServerKey,
  SERVER_MODES,
  setServerMode,
  type ServerMode,
} from '../services/servers.js';
import { formError, selectField, sentence, shownOnce, textField, type FieldErrors } from './forms.js';
import { createOnce, onceField } from './form-once.js';
import { csrfField, dashboardPage, fixedText, sendPage, type PageContext } from './layout.js';
import { pageContext } from './plugin.js';
import { memberActor, serverBreadcrumbs, serverOfAccount, serverTabs, type AccountServer } from './server-access.js';

const MODE_LABELS: Record<ServerMode, string> = { business: 'Business', personal: 'Personal' };
const MODE_OPTIONS = SERVER_MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }));
const MODE_HINT = 'Business mode has an audience of your end users, managed through the API. Personal mode has no audience.';

/** The grace periods offered by "Rotate key"; the service takes any 0 to 7 days, the page offers these. */
const GRACE_OPTIONS = [
  { value: '0', label: 'No grace: the old key stops at once' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '604800', label: '7 days' },
];
// A mis-click on "Rotate key" must not cut production off at once, so the form starts on a day's grace.
const DEFAULT_GRACE = '86400';

/** What a `?notice=` code says: fixed texts only, so the query string never reaches the page. */
const NOTICES: Record<string, string> = {
  'mode-changed': 'The mode was changed.',
  'mode-unchanged': 'The server was already in that mode.',
  'redirect-added': 'The redirect URI was added.',
  'redirect-removed': 'The redirect URI was removed.',
  'redirect-missing': 'That redirect URI was not on the list.',
};

type Params = { Params: { serverId: string } };
type NoticeQuery = { Querystring: { notice?: string } };

/** A stored time, readable and still machine-readable (times are stored as UTC ISO text). */
function when(at: string): SafeHtml {
  return html`<time datetime="${at}">${at.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function modeBadge(mode: ServerMode): SafeHtml {
  return html`<span class="badge${mode === 'business' ? ' ok' : ''}">${MODE_LABELS[mode]}</span>`;
}

// ---- Servers: the list and the create form ----

async function serversPage(ctx: ServiceContext, context: PageContext, values: Record<string, string> = {}, errors: FieldErrors = {}, problem?: string) {
  const servers = await listServersOfAccount(ctx, context.member.accountId);
  const table = servers.length
    ? html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Created</th><th scope="col">Current key</th></tr></thead>
<tbody>${servers.map(
        (s) => html`<tr><td><a href="/dashboard/servers/${s.id}">${s.name}</a></td><td>${modeBadge(s.mode)}</td><td>${when(s.createdAt)}</td><td><code>${s.keyHint ?? '—'}</code></td></tr>`,
      )}</tbody>
</table>`
    : html`<p class="empty">No servers yet. Create one to get its server API key.</p>`;
  return dashboardPage(context, {
    title: 'Servers',
    section: 'servers',
    body: html`<section class="panel" aria-labelledby="servers-list"><h2 id="servers-list">Your servers</h2>${table}</section>
<section class="panel" aria-labelledby="servers-create"><h2 id="servers-create">Create a server</h2>
${formError(problem)}
<form method="post" action="/dashboard/servers" novalidate>${csrfField(context.csrf)}${onceField()}
${textField({ name: 'name', label: 'Name', value: values.name, required: true, maxLength: 100, errors })}
${selectField({ name: 'mode', label: 'Mode', value: values.mode ?? 'business', options: MODE_OPTIONS, hint: MODE_HINT, required: true, errors })}
<div class="form-actions"><button type="submit">Create server</button></div>
</form></section>`,
  });
}

// ---- One server's Overview tab ----

interface OverviewState {
  notice?: string | null;
  /** A key to show once: only in the answer to the POST that made it. */
  secret?: { label: string; value: string };
  values?: Record<string, string>;
  errors?: FieldErrors;
}

async function overviewPage(ctx: ServiceContext, context: PageContext, server: AccountServer, state: OverviewState = {}) {
  const [keys, uris] = await Promise.all([listLiveServerKeys(ctx, server.id), listRedirectUris(ctx, server.id)]);
  const values = state.values ?? {};
  const errors = state.errors ?? {};
  const current = keys.filter((k) => k.expiresAt === null);
  const inGrace = keys.filter((k) => k.expiresAt !== null);

  const details = html`<section class="panel" aria-labelledby="server-details"><h2 id="server-details">Details</h2>
<table><tbody>
<tr><th scope="row">Name</th><td>${server.name}</td></tr>
<tr><th scope="row">Server ID</th><td><code>${server.id}</code></td></tr>
<tr><th scope="row">Mode</th><td>${modeBadge(server.mode)}</td></tr>
<tr><th scope="row">Created</th><td>${when(server.created_at)}</td></tr>
</tbody></table></section>`;

  const mode = html`<section class="panel" aria-labelledby="server-mode"><h2 id="server-mode">Mode</h2>
<form method="post" action="/dashboard/servers/${server.id}/mode" novalidate>${csrfField(context.csrf)}
${selectField({ name: 'mode', label: 'Mode', value: server.mode, options: MODE_OPTIONS, hint: MODE_HINT, required: true, errors })}
<div class="form-actions"><button type="submit" class="secondary">Change mode</button></div>
</form></section>`;

  const graceTable = inGrace.length
    ? html`<h3>Old keys still working</h3>
<table><thead><tr><th scope="col">Key</th><th scope="col">Made</th><th scope="col">Stops working</th></tr></thead>
<tbody>${inGrace.map((k) => html`<tr><td><code>${k.hint}</code></td><td>${when(k.createdAt)}</td><td>${when(k.expiresAt!)}</td></tr>`)}</tbody></table>`
    : '';
  const key = html`<section class="panel" aria-labelledby="server-key"><h2 id="server-key">Server API key</h2>
<p>Current key: ${current.length ? current.map((k) => html`<code>${k.hint}</code> <span class="muted">(made ${when(k.createdAt)})</span> `) : html`<span class="muted">none</span>`}</p>
${graceTable}
<form method="post" action="/dashboard/servers/${server.id}/rotate-key" novalidate>${csrfField(context.csrf)}${onceField()}
${selectField({
    name: 'grace',
    label: 'Grace period',
    hint: 'How long the current key keeps working after the new one is made, while you deploy it.',
    value: values.grace ?? DEFAULT_GRACE,
    options: GRACE_OPTIONS,
    required: true,
    errors,
  })}
<div class="form-actions"><button type="submit" class="secondary">Rotate key</button></div>
</form></section>`;

  const uriList = uris.length
    ? html`<table><thead><tr><th scope="col">Redirect URI</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${uris.map(
        // The button's name stays "Remove"; the URI it removes is its description for screen readers.
        (uri, i) => html`<tr><td><code id="redirect-uri-${i}">${uri}</code></td><td class="actions"><form method="post" action="/dashboard/servers/${server.id}/redirect-uris/remove">${csrfField(context.csrf)}<input type="hidden" name="uri" value="${uri}"><button type="submit" class="secondary" aria-describedby="redirect-uri-${i}">Remove</button></form></td></tr>`,
      )}</tbody></table>`
    : html`<p class="empty">No redirect URIs yet. Add your app's address below so Keyward can send end users back to it after they connect.</p>`;
  const redirects = html`<section class="panel" aria-labelledby="server-redirects"><h2 id="server-redirects">Allowed redirect URIs</h2>
<p class="muted">Where Keyward may send an end user's browser after a connection (the <code>redirectUri</code> your backend passes), compared exactly.</p>
${uriList}
<form method="post" action="/dashboard/servers/${server.id}/redirect-uris" class="inline-form" novalidate>${csrfField(context.csrf)}
${textField({ name: 'uri', label: 'Redirect URI', type: 'url', value: values.uri, required: true, maxLength: 2048, hint: 'An absolute http(s) URL without a fragment.', errors })}
<button type="submit">Add redirect URI</button>
</form></section>`;

  return dashboardPage(context, {
    title: server.name,
    section: 'servers',
    breadcrumbs: serverBreadcrumbs(),
    notice: state.notice,
    body: html`${serverTabs(server, 'overview')}
${state.secret ? shownOnce(state.secret.label, state.secret.value) : ''}
<div class="columns">${details}${mode}</div>
${key}
${redirects}`,
  });
}

export function registerServerPages(scope: FastifyInstance, ctx: ServiceContext) {
  scope.get('/servers', async (request, reply) => sendPage(reply, await serversPage(ctx, pageContext(request))));

  scope.post('/servers', async (request, reply) => {
    const context = pageContext(request);
    const values = { name: formText(request.body, 'name'), mode: formText(request.body, 'mode') };
    const errors: FieldErrors = {};
    if (!values.name.trim()) errors.name = 'Enter a name for the server.';
    if (!SERVER_MODES.includes(values.mode as ServerMode)) errors.mode = 'Choose Business or Personal.';
    if (Object.keys(errors).length) return sendPage(reply, await serversPage(ctx, context, values, errors), 422);
    const target = {
      section: 'servers' as const,
      back: { href: '/dashboard/servers', label: 'Servers' },
      lost: 'If you did not see the server it made, it is in the list: rotate its key there to get one you can copy.',
    };
    return createOnce(ctx, request, reply, context, target, async () => {
      try {
        const { serverId, serverKey } = await createServer(ctx, {
          accountId: context.member.accountId,
          name: values.name,
          mode: values.mode as ServerMode,
          actor: memberActor(context.member.memberId),
        });
        const server = await serverOfAccount(ctx, context.member.accountId, serverId);
        return sendPage(reply, await overviewPage(ctx, context, server, { notice: 'Server created.', secret: { label: 'Server API key', value: serverKey } }));
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        // The service's remaining refusal is about the name (length); anything else goes above the form.
        const aboutName = error.message.startsWith('the server name');
        const fieldErrors: FieldErrors = aboutName ? { name: sentence(error.message) } : {};
        return sendPage(reply, await serversPage(ctx, context, values, fieldErrors, aboutName ? undefined : sentence(error.message)), 422);
      }
    });
  });

  scope.get<Params & NoticeQuery>('/servers/:serverId', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    const notice = fixedText(NOTICES, request.query.notice);
    return sendPage(reply, await overviewPage(ctx, context, server, { notice }));
  });

  scope.post<Params>('/servers/:serverId/mode', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    const mode = formText(request.body, 'mode');
    if (!SERVER_MODES.includes(mode as ServerMode)) {
      return sendPage(reply, await overviewPage(ctx, context, server, { errors: { mode: 'Choose Business or Personal.' } }), 422);
    }
    // No change, no audit event: the trail should list only real changes.
    if (mode === server.mode) return reply.redirect(`/dashboard/servers/${server.id}?notice=mode-unchanged`, 303);
    await setServerMode(ctx, server.id, mode as ServerMode, memberActor(context.member.memberId));
    return reply.redirect(`/dashboard/servers/${server.id}?notice=mode-changed`, 303);
  });

  scope.post<Params>('/servers/:serverId/rotate-key', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    const grace = formText(request.body, 'grace');
    if (!GRACE_OPTIONS.some((o) => o.value === grace)) {
      return sendPage(reply, await overviewPage(ctx, context, server, { errors: { grace: 'Choose a grace period from the list.' } }), 422);
    }
    const target = {
      section: 'servers' as const,
      back: { href: `/dashboard/servers/${server.id}`, label: server.name },
      lost: 'If you did not see the new key, rotate the key again: the key it made is then replaced too.',
    };
    return createOnce(ctx, request, reply, context, target, async () => {
      const { serverKey } = await rotateServerKey(ctx, server.id, Number(grace), memberActor(context.member.memberId));
      return sendPage(
        reply,
        await overviewPage(ctx, context, server, { notice: 'The server key was rotated.', secret: { label: 'New server API key', value: serverKey }, values: { grace } }),
      );
    });
  });

  scope.post<Params>('/servers/:serverId/redirect-uris', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    const uri = formText(request.body, 'uri').trim();
    const refuse = async (message: string) => sendPage(reply, await overviewPage(ctx, context, server, { values: { uri }, errors: { uri: message } }), 422);
    if (!uri) return refuse('Enter a redirect URI.');
    try {
      await allowRedirectUri(ctx, server.id, uri);
    } catch (error) {
      if (error instanceof ServiceError && error.reason === 'invalid') return refuse(sentence(error.message));
      throw error;
    }
    return reply.redirect(`/dashboard/servers/${server.id}?notice=redirect-added`, 303);
  });

  scope.post<Params>('/servers/:serverId/redirect-uris/remove', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    const removed = await removeRedirectUri(ctx, server.id, formText(request.body, 'uri'));
    return reply.redirect(`/dashboard/servers/${server.id}?notice=${removed ? 'redirect-removed' : 'redirect-missing'}`, 303);
  });
}
