/**
 * "Developer" → "Account API Keys" (CONTRACT 1 and 6): the list of the account's keys (hints only),
 * "Generate Key" (the new key answered once, in the POST's own response, so a later visit never shows
 * it again; the form acts once, so a reload of that answer makes no second key) and "Revoke" behind a
 * confirmation page. A key id from the URL is looked up through the
 * user's account: another account's key answers the same 404 as an unknown one.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type ServiceContext, userActor } from '../services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../services/keys/account-keys.js';
import { actorNames } from './actor-names.js';
import { developerPage, type GenerateForm, KEYS_URL, keysPage, revokeKeyPage } from './developer-views.js';
import { notFoundPage, refusalOf } from './domain-errors.js';
import { createOnce } from './form-once.js';
import { CreateForm, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import type { FieldErrors } from './forms.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { type PageRoutes, pageContext } from './plugin.js';

/** The notices a redirect may ask for, by code: the page shows only these fixed texts. */
const NOTICES: Record<string, string> = {
  'key-revoked': 'The key was revoked. Backends still using it are refused from now on.',
  'key-already-revoked': 'That key was revoked already.',
};

export const GenerateBody = CreateForm({ label: Text(), environment: Text(), expiresAt: Text(64) });
const KeysQuery = Query({ notice: Notice });
/** "Revoke": a button and the CSRF token. */
const RevokeKeyBody = SignedInForm({});
type KeyParams = { keyId: string };

/** What a datetime-local control sends (no zone): read as UTC, as the field's hint says. */
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/;

async function loadKeysPage(
  ctx: ServiceContext,
  context: PageContext,
  options: { form?: GenerateForm; newKey?: string; notice?: string | null },
): Promise<string> {
  const { accountId } = context.user;
  const keys = await listAccountKeys(ctx, accountId);
  const names = await actorNames(
    ctx,
    accountId,
    keys.map((k) => k.createdBy),
  );
  return keysPage(context, { keys, names, now: ctx.clock.now().toISOString(), ...options });
}

/** The account's own key, or the 404 every unknown or foreign key id gets. */
async function keyOfAccount(ctx: ServiceContext, accountId: string, keyId: string) {
  const key = await ctx.store.keys.accountKeyOfAccount(accountId, keyId);
  if (!key) throw notFoundPage();
  return key;
}

/**
 * Reads the "Generate Key" form: only what the form itself has to say (a datetime-local value, read
 * as UTC); the label, the environment and the expiry's rules are the service's.
 */
function readForm(body: Static<typeof GenerateBody>, errors: FieldErrors): GenerateForm & { expiresAt: string | null } {
  const values = { label: (body.label ?? '').trim(), environment: body.environment ?? '', expiresAt: (body.expiresAt ?? '').trim() };
  let expiresAt: string | null = null;
  if (values.expiresAt) {
    const parsed = LOCAL_TIME.test(values.expiresAt) ? new Date(`${values.expiresAt}Z`) : null;
    if (!parsed || Number.isNaN(parsed.getTime())) errors.expiresAt = 'Enter a date and time, such as 2030-01-31T09:00 (UTC).';
    else expiresAt = parsed.toISOString();
  }
  return { values, errors, expiresAt };
}

function redirectToKeys(reply: FastifyReply, notice: keyof typeof NOTICES) {
  return reply.redirect(`${KEYS_URL}?notice=${notice}`, 303);
}

export const registerDeveloperPages: PageRoutes = (scope, ctx) => {
  scope.get('/developer', async (request, reply) => {
    return sendPage(reply, developerPage(pageContext(request)));
  });

  scope.get<{ Querystring: Static<typeof KeysQuery> }>('/developer/api-keys', queryRoute(KeysQuery), async (request, reply) => {
    refuseMalformed(request);
    const notice = fixedText(NOTICES, request.query.notice);
    return sendPage(reply, await loadKeysPage(ctx, pageContext(request), { notice }));
  });

  scope.post<{ Body: Static<typeof GenerateBody> }>('/developer/api-keys', formRoute(GenerateBody), async (request, reply) => {
    const context = pageContext(request);
    const form = readForm(request.body, formErrors(request) ?? {});
    if (Object.keys(form.errors).length) return sendPage(reply, await loadKeysPage(ctx, context, { form }), 422);
    const target = {
      section: 'developer' as const,
      back: { href: KEYS_URL, label: 'Account API Keys' },
      lost: 'If you did not see the key it made, revoke the newest key in the list and generate another.',
    };
    return createOnce(ctx, request.body.once, reply, context, target, async () => {
      try {
        const { key } = await createAccountKey(ctx, {
          accountId: context.user.accountId,
          label: form.values.label,
          environment: form.values.environment,
          expiresAt: form.expiresAt,
          actor: userActor(context.user.userId),
        });
        // Answered here, not after a redirect: the key exists only in this response.
        return sendPage(reply, await loadKeysPage(ctx, context, { newKey: key }));
      } catch (error) {
        const refused = refusalOf(error, { label: 'label', environment: 'environment', expiresAt: 'expiresAt' });
        return sendPage(reply, await loadKeysPage(ctx, context, { form: { ...form, errors: refused.errors, problem: refused.problem } }), refused.status);
      }
    });
  });

  scope.get<{ Params: KeyParams }>('/developer/api-keys/:keyId/revoke', async (request, reply) => {
    const context = pageContext(request);
    const key = await keyOfAccount(ctx, context.user.accountId, request.params.keyId);
    if (key.revoked_at) return redirectToKeys(reply, 'key-already-revoked');
    return sendPage(reply, revokeKeyPage(context, key));
  });

  scope.post<{ Params: KeyParams; Body: Static<typeof RevokeKeyBody> }>(
    '/developer/api-keys/:keyId/revoke',
    formRoute(RevokeKeyBody),
    async (request, reply) => {
      refuseMalformed(request);
      const context = pageContext(request);
      const key = await keyOfAccount(ctx, context.user.accountId, request.params.keyId);
      if (key.revoked_at) return redirectToKeys(reply, 'key-already-revoked');
      await revokeAccountKey(ctx, key.id, userActor(context.user.userId));
      return redirectToKeys(reply, 'key-revoked');
    },
  );
};
