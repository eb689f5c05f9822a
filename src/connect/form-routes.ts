/**
 * The hosted form: GET shows it (never using the link up), POST checks and stores the values.
 * CSRF: a random nonce in an HttpOnly, SameSite=Strict cookie, and in the form a MAC of the form id
 * and that nonce; a cross-site POST has neither.
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import { readBranding } from '../services/branding/branding.js';
import type { ServiceContext } from '../services/context.js';
import { type OpenForm, openForm, readStaticFields, submitForm } from '../services/providers/static-forms.js';
import { formText } from '../web/form-fields.js';
import { nonceCookie, nonceMatches } from '../web/nonce-cookie.js';
import { setPageHeaders } from '../web/page-headers.js';
import { redirectToApp } from './app-redirect.js';
import { formPage, messagePage, refusedCredentialsMessage, successPage } from './form-page.js';

const CSRF_COOKIE = 'keyward_form_csrf';

function redirectOrigin(form: OpenForm): string | null {
  return form.state === 'open' && form.redirectUri ? new URL(form.redirectUri).origin : null;
}

/** The hosted form's routes, on the scope of the /connect prefix. */
export async function registerFormRoutes(scope: FastifyInstance, ctx: ServiceContext) {
  const secureCookie = ctx.publicUrl.startsWith('https:');
  const csrfFor = (formId: string, nonce: string) => ctx.vault.mac(`form-csrf|${formId}|${nonce}`);
  await scope.register(formbody);

  scope.get<{ Params: { token: string } }>('/:token', async (request, reply) => {
    const form = await openForm(ctx, request.params.token);
    setPageHeaders(reply, redirectOrigin(form));
    if (form.state === 'unknown') return reply.code(404).send(messagePage(404));
    if (form.state === 'gone') return reply.code(410).send(messagePage(410));
    const nonce = nonceCookie(request, reply, { name: CSRF_COOKIE, path: '/connect', secure: secureCookie });
    const branding = await readBranding(ctx, form.serverId);
    return reply.send(formPage({ provider: form.provider, csrf: csrfFor(form.id, nonce), values: {}, errors: {}, branding }));
  });

  scope.post<{ Params: { token: string }; Body: Record<string, unknown> }>('/:token', async (request, reply) => {
    const form = await openForm(ctx, request.params.token);
    setPageHeaders(reply, redirectOrigin(form));
    if (form.state === 'unknown') return reply.code(404).send(messagePage(404));
    if (form.state === 'gone') return reply.code(410).send(messagePage(410));

    const text = (name: string) => formText(request.body, name);
    if (!nonceMatches(request, CSRF_COOKIE, (nonce) => csrfFor(form.id, nonce))) return reply.code(403).send(messagePage(403));

    const { values, errors, kept } = readStaticFields(form.provider.fields, text);
    const branding = await readBranding(ctx, form.serverId);
    if (Object.keys(errors).length > 0) {
      return reply.code(422).send(formPage({ provider: form.provider, csrf: text('csrf'), values: kept, errors, branding }));
    }

    const submitted = await submitForm(ctx, form, values);
    if ('refusedWithStatus' in submitted) {
      // Nothing was stored and the link is still good: the end user corrects the values and sends again.
      const notice = refusedCredentialsMessage(form.provider.name, submitted.refusedWithStatus);
      return reply.code(422).send(formPage({ provider: form.provider, csrf: text('csrf'), values: kept, errors: {}, notice, branding }));
    }
    if (!submitted.completed) return reply.code(410).send(messagePage(410));
    if (form.redirectUri) return redirectToApp(reply, form.redirectUri, { status: 'success', sessionId: form.id, provider: form.provider.slug });
    return reply.send(successPage(form.provider.name, branding));
  });
}
