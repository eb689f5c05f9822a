/**
 * A server's Providers tab: GET lists the enabled providers under three forms (enable one of the
 * catalog, add a custom OAuth provider, add a custom static one); each form POSTs, and a refused one
 * comes back with status 422, its errors beside the fields and its values kept, secrets excepted.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StaticField } from '../catalog/provider-definition.js';
import { type ServiceContext, userActor } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import { addCustomOAuthProvider, addCustomStaticProvider, type CustomProviderApiInput, parseFieldSpec } from '../services/providers/custom-providers.js';
import { enableProvider, listServerProviders } from '../services/providers/server-providers.js';
import { refusalOf } from './domain-errors.js';
import { Filled, formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import type { FieldErrors } from './forms.js';
import { fixedText, sendPage } from './layout.js';
import { pageContext } from './plugin.js';
import { type ProviderForm, providersBody, type RefusedForm } from './provider-views.js';
import { type AccountServer, serverOfAccount } from './server-access.js';
import { serverTabPage } from './server-views.js';

/** Notices are looked up by code, so nothing from the query string is ever shown. */
const NOTICES: Record<string, string> = {
  'provider-enabled': 'Provider enabled on this server.',
  'provider-added': 'Custom provider added and enabled on this server.',
};

/** The custom OAuth form's inputs by the services' field names. */
const CUSTOM_OAUTH_FIELDS = {
  slug: 'oauthSlug',
  name: 'oauthName',
  authorizationUrl: 'authorizationUrl',
  tokenUrl: 'tokenUrl',
  revocationUrl: 'revocationUrl',
  clientId: 'oauthClientId',
  clientSecret: 'oauthClientSecret',
  scopes: 'oauthScopes',
  tokenAuth: 'tokenAuth',
  apiBaseUrl: 'oauthApiBaseUrl',
  apiHosts: 'oauthApiHosts',
};

/** The custom static form's inputs by the services' field names. */
const CUSTOM_STATIC_FIELDS = {
  slug: 'staticSlug',
  name: 'staticName',
  fields: 'fields',
  apiBaseUrl: 'staticApiBaseUrl',
  apiHosts: 'staticApiHosts',
  auth: 'auth',
  verify: 'verify',
};

/** What a form's action ends in: a refusal (errors, or a problem above the form) or a notice after success. */
type FormOutcome = { values: Record<string, string>; errors: FieldErrors; problem?: string; notice?: string };

// Which provider, its endpoints and its client are the services' to judge; the forms say what was left empty.
export const EnableBody = SignedInForm({ provider: Filled(100), clientId: Text(), clientSecret: Text(), scopes: Text() });
export const CustomOAuthBody = SignedInForm({
  oauthSlug: Filled(),
  oauthName: Text(),
  authorizationUrl: Filled(),
  tokenUrl: Filled(),
  revocationUrl: Text(),
  oauthClientId: Filled(),
  oauthClientSecret: Filled(),
  oauthScopes: Text(),
  tokenAuth: Text(),
  oauthApiBaseUrl: Text(),
  oauthApiHosts: Text(),
});
export const CustomStaticBody = SignedInForm({
  staticSlug: Filled(),
  staticName: Text(),
  fields: Text(),
  staticApiBaseUrl: Text(),
  staticApiHosts: Text(),
  auth: Text(),
  verify: Text(),
});
const PageQuery = Query({ notice: Notice });

/** What each form says of a required field left empty. */
const LEFT_EMPTY = {
  provider: 'Choose a provider.',
  oauthSlug: 'Enter the slug.',
  authorizationUrl: 'Enter the authorization URL.',
  tokenUrl: 'Enter the token URL.',
  oauthClientId: 'Enter the client ID.',
  oauthClientSecret: 'Enter the client secret.',
  staticSlug: 'Enter the slug.',
};

type ServerParams = { serverId: string };

/** The API fields as the service takes them: each empty one left out, the hosts split on commas and line ends. */
function apiInput(values: { baseUrl?: string; hosts?: string; auth?: string; verify?: string }): CustomProviderApiInput {
  return {
    apiBaseUrl: values.baseUrl || undefined,
    apiHosts: (values.hosts ?? '').split(/[\s,]+/).filter(Boolean),
    auth: values.auth || undefined,
    verify: values.verify || undefined,
  };
}

/** "a, b c" → ['a', 'b', 'c']; nothing typed → undefined (the provider's defaults). */
function parseScopes(text: string): string[] | undefined {
  const scopes = text.split(/[\s,]+/).filter(Boolean);
  return scopes.length ? scopes : undefined;
}

export function registerProviderPages(scope: FastifyInstance, ctx: ServiceContext) {
  const base = (server: AccountServer) => `/dashboard/servers/${server.id}/providers`;

  async function render(
    request: FastifyRequest<{ Params: ServerParams }>,
    reply: FastifyReply,
    server: AccountServer,
    refused: RefusedForm | null,
    notice: string | null = null,
  ) {
    const context = pageContext(request);
    const body = providersBody({
      action: base(server),
      context,
      callbackUrl: `${ctx.publicUrl}/oauth/callback`,
      providers: await listServerProviders(ctx, server.id),
      refused,
    });
    const page = serverTabPage(context, server, { tab: 'providers', title: `${server.name}: Providers`, body, notice });
    return sendPage(reply, page, refused ? 422 : 200);
  }

  /** Runs a form's action: a refusal re-renders the page (422), success redirects with a notice (303). */
  async function handle(
    request: FastifyRequest<{ Params: ServerParams }>,
    reply: FastifyReply,
    form: ProviderForm,
    run: (server: AccountServer) => Promise<FormOutcome>,
  ) {
    const server = await serverOfAccount(ctx, pageContext(request).user.accountId, request.params.serverId);
    const outcome = await run(server);
    if (outcome.notice) return reply.redirect(`${base(server)}?notice=${outcome.notice}`, 303);
    return render(request, reply, server, { form, values: outcome.values, errors: outcome.errors, problem: outcome.problem });
  }

  scope.get<{ Params: ServerParams; Querystring: Static<typeof PageQuery> }>('/servers/:serverId/providers', queryRoute(PageQuery), async (request, reply) => {
    refuseMalformed(request);
    const server = await serverOfAccount(ctx, pageContext(request).user.accountId, request.params.serverId);
    return render(request, reply, server, null, fixedText(NOTICES, request.query.notice));
  });

  scope.post<{ Params: ServerParams; Body: Static<typeof EnableBody> }>('/servers/:serverId/providers', formRoute(EnableBody), (request, reply) =>
    handle(request, reply, 'enable', async (server): Promise<FormOutcome> => {
      // Before any value is read: a refused body may hold a list where one text goes (the 400 page).
      const leftEmpty = formErrors(request, LEFT_EMPTY);
      const { body } = request;
      const values = { provider: (body.provider ?? '').trim(), clientId: (body.clientId ?? '').trim(), scopes: (body.scopes ?? '').trim() };
      const clientSecret = (body.clientSecret ?? '').trim();
      if (leftEmpty) return { values, errors: leftEmpty };
      try {
        await enableProvider(ctx, {
          serverId: server.id,
          slug: values.provider,
          clientId: values.clientId || undefined,
          clientSecret: clientSecret || undefined,
          scopes: parseScopes(values.scopes),
          actor: userActor(pageContext(request).user.userId),
        });
        return { values, errors: {}, notice: 'provider-enabled' };
      } catch (error) {
        const { errors, problem } = refusalOf(error, { provider: 'provider', clientId: 'clientId', clientSecret: 'clientSecret', scopes: 'scopes' });
        return { values, errors, problem };
      }
    }),
  );

  scope.post<{ Params: ServerParams; Body: Static<typeof CustomOAuthBody> }>(
    '/servers/:serverId/providers/custom-oauth',
    formRoute(CustomOAuthBody),
    (request, reply) =>
      handle(request, reply, 'custom-oauth', async (server) => {
        const errors = formErrors(request, LEFT_EMPTY);
        const values: Record<string, string> = {};
        // Every field but the secret is kept for a refused form to show again.
        for (const [name, typed] of Object.entries(request.body)) if (name !== 'csrf' && name !== 'oauthClientSecret') values[name] = (typed ?? '').trim();
        const clientSecret = (request.body.oauthClientSecret ?? '').trim();
        if (errors) return { values, errors };
        try {
          await addCustomOAuthProvider(ctx, {
            serverId: server.id,
            slug: values.oauthSlug!,
            name: values.oauthName || undefined,
            authorizationUrl: values.authorizationUrl!,
            tokenUrl: values.tokenUrl!,
            revocationUrl: values.revocationUrl || undefined,
            clientId: values.oauthClientId!,
            clientSecret,
            scopes: parseScopes(values.oauthScopes ?? ''),
            tokenAuth: values.tokenAuth || undefined,
            api: apiInput({ baseUrl: values.oauthApiBaseUrl, hosts: values.oauthApiHosts }),
            actor: userActor(pageContext(request).user.userId),
          });
          return { values, errors: {}, notice: 'provider-added' };
        } catch (error) {
          const { errors, problem } = refusalOf(error, CUSTOM_OAUTH_FIELDS);
          return { values, errors, problem };
        }
      }),
  );

  scope.post<{ Params: ServerParams; Body: Static<typeof CustomStaticBody> }>(
    '/servers/:serverId/providers/custom-static',
    formRoute(CustomStaticBody),
    (request, reply) =>
      handle(request, reply, 'custom-static', async (server) => {
        const errors: FieldErrors = formErrors(request, LEFT_EMPTY) ?? {};
        const { body } = request;
        // Field specs are kept as typed (only line ends normalised), so a refused textarea reads the same.
        const values = {
          staticSlug: (body.staticSlug ?? '').trim(),
          staticName: (body.staticName ?? '').trim(),
          fields: (body.fields ?? '').replace(/\r\n?/g, '\n'),
          staticApiBaseUrl: (body.staticApiBaseUrl ?? '').trim(),
          staticApiHosts: (body.staticApiHosts ?? '').trim(),
          auth: (body.auth ?? '').trim(),
          verify: (body.verify ?? '').trim(),
        };
        const fields: StaticField[] = [];
        const lineErrors: string[] = [];
        values.fields.split('\n').forEach((typed, i) => {
          const line = typed.trim();
          if (!line) return;
          try {
            fields.push(parseFieldSpec(line));
          } catch (error) {
            if (!(error instanceof DomainError)) throw error;
            lineErrors.push(`Line ${i + 1}: ${error.detail}.`);
          }
        });
        // No field at all is the service's to refuse (beside Fields, in its words).
        if (lineErrors.length) errors.fields = lineErrors.join(' ');
        if (Object.keys(errors).length) return { values, errors };
        try {
          await addCustomStaticProvider(ctx, {
            serverId: server.id,
            slug: values.staticSlug,
            name: values.staticName || undefined,
            fields,
            api: apiInput({ baseUrl: values.staticApiBaseUrl, hosts: values.staticApiHosts, auth: values.auth, verify: values.verify }),
            actor: userActor(pageContext(request).user.userId),
          });
          return { values, errors, notice: 'provider-added' };
        } catch (error) {
          const { errors, problem } = refusalOf(error, CUSTOM_STATIC_FIELDS);
          return { values, errors, problem };
        }
      }),
  );
}
