/**
 * Team → "Single sign-on" (CONTRACT 9): the account's OpenID Connect provider, saved by one form
 * (its discovery document is fetched and checked before anything is stored, and a refusal is shown
 * beside the field it concerns), "Require SSO", and "Remove" behind a confirmation page. Every role
 * sees the page; the route table lets only admins and owners post its forms (route-actions.ts:
 * `team.sso`), and the page draws them only for those.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { type ServiceContext, userActor } from '../services/context.js';
import type { DomainErrorCode } from '../services/domain-error.js';
import { configureSso, removeSso, SSO_JOIN_ROLES, setSsoRequired, ssoRedirectUri, ssoState } from '../services/sso/sso-settings.js';
import type { TeamActor } from '../services/team/team-actor.js';
import { type Refusal, refusalOf } from './domain-errors.js';
import { Choice, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { type PageRoutes, pageContext } from './plugin.js';
import { removeSsoPage, SSO_SETTINGS_URL, type SsoPageView, type SsoSettingsForm, ssoPage } from './sso-views.js';

/** The notices a redirect may ask for, by code: the page shows only these fixed texts. */
const NOTICES: Record<string, string> = {
  saved: 'Single sign-on saved. People of the allowed domains can now use “Sign in with SSO”.',
  'required-on': 'Require SSO is on: passwords are turned off for everyone but owners, from their next sign-in.',
  'required-off': 'Require SSO is off: everyone with a password can sign in with it again.',
  unchanged: 'Nothing changed: Require SSO was already so.',
  removed: 'Single sign-on removed. Everyone with a password signs in with it again.',
  'not-configured': 'No identity provider is connected.',
};

export const SsoSettingsBody = SignedInForm({
  issuer: Text(),
  clientId: Text(),
  clientSecret: Text(),
  allowedDomains: Text(),
  defaultRole: Choice(SSO_JOIN_ROLES),
});
/** The checkbox sends `on` when checked, nothing when not. */
export const SsoRequireBody = SignedInForm({ required: Type.Optional(Choice(['on'] as const)) });
/** "Remove": a button and the CSRF token. */
export const SsoRemoveBody = SignedInForm({});
const SsoQuery = Query({ notice: Notice });

/** The form's fields by the service's names for them. */
const FIELDS = { issuer: 'issuer', clientId: 'clientId', clientSecret: 'clientSecret', allowedDomains: 'allowedDomains', defaultRole: 'defaultRole' };

/** The admins' rule is a matter of role (403); any other refusal is about what was typed (422). */
const STATUS: Partial<Record<DomainErrorCode, number>> = { role_not_allowed: 403 };
const statusOf = (refused: Refusal) => STATUS[refused.code] ?? refused.status;

function actorOf(context: PageContext): TeamActor {
  const { user } = context;
  return { kind: 'user', actor: userActor(user.userId), userId: user.userId, accountId: user.accountId, role: user.role };
}

async function loadSsoPage(ctx: ServiceContext, context: PageContext, view: Omit<SsoPageView, 'state' | 'redirectUri'> = {}): Promise<string> {
  return ssoPage(context, { state: await ssoState(ctx, context.user.accountId), redirectUri: ssoRedirectUri(ctx), ...view });
}

function redirectToSso(reply: FastifyReply, notice: keyof typeof NOTICES) {
  return reply.redirect(`${SSO_SETTINGS_URL}?notice=${notice}`, 303);
}

export const registerSsoPages: PageRoutes = (scope, ctx) => {
  scope.get<{ Querystring: Static<typeof SsoQuery> }>('/team/sso', queryRoute(SsoQuery), async (request, reply) => {
    refuseMalformed(request);
    return sendPage(reply, await loadSsoPage(ctx, pageContext(request), { notice: fixedText(NOTICES, request.query.notice) }));
  });

  scope.post<{ Body: Static<typeof SsoSettingsBody> }>('/team/sso', formRoute(SsoSettingsBody), async (request, reply) => {
    const context = pageContext(request);
    const errors = formErrors(request, { defaultRole: 'Choose a role.' });
    const body = request.body;
    // The secret is never put back into the page, typed or stored.
    const form: SsoSettingsForm = {
      values: { issuer: body.issuer ?? '', clientId: body.clientId ?? '', allowedDomains: body.allowedDomains ?? '', defaultRole: body.defaultRole ?? '' },
      errors: errors ?? {},
    };
    if (errors) return sendPage(reply, await loadSsoPage(ctx, context, { form }), 422);
    try {
      await configureSso(ctx, {
        accountId: context.user.accountId,
        issuer: form.values.issuer,
        clientId: form.values.clientId,
        clientSecret: body.clientSecret ?? '',
        allowedDomains: form.values.allowedDomains,
        defaultRole: form.values.defaultRole,
        actor: actorOf(context),
      });
      return redirectToSso(reply, 'saved');
    } catch (error) {
      const refused = refusalOf(error, FIELDS);
      return sendPage(reply, await loadSsoPage(ctx, context, { form: { ...form, errors: refused.errors, problem: refused.problem } }), statusOf(refused));
    }
  });

  scope.post<{ Body: Static<typeof SsoRequireBody> }>('/team/sso/require', formRoute(SsoRequireBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const required = request.body.required === 'on';
    try {
      const changed = await setSsoRequired(ctx, { accountId: context.user.accountId, required, actor: actorOf(context) });
      return redirectToSso(reply, changed ? (required ? 'required-on' : 'required-off') : 'unchanged');
    } catch (error) {
      const refused = refusalOf(error, {});
      return sendPage(reply, await loadSsoPage(ctx, context, { requireProblem: refused.problem }), statusOf(refused));
    }
  });

  scope.get('/team/sso/remove', async (request, reply) => {
    const context = pageContext(request);
    const { settings } = await ssoState(ctx, context.user.accountId);
    if (!settings) return redirectToSso(reply, 'not-configured');
    return sendPage(reply, removeSsoPage(context, settings.issuer));
  });

  scope.post<{ Body: Static<typeof SsoRemoveBody> }>('/team/sso/remove', formRoute(SsoRemoveBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const removed = await removeSso(ctx, { accountId: context.user.accountId, actor: actorOf(context) });
    return redirectToSso(reply, removed ? 'removed' : 'not-configured');
  });
};
