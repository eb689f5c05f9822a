/**
 * A server's Providers tab: GET lists the enabled providers under three forms (enable one of the
 * catalog, add a custom OAuth provider, add a custom static one); each form POSTs, and a refused one
 * comes back with status 422, its errors beside the fields and its values kept, secrets excepted.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from '../web/html.js';
import { SLUG_PATTERN } from '../providers/types.js';
import type { ServiceContext } from '../services/context.js';
import {
  addCustomOAuthProvider,
  addCustomStaticProvider,
  enableProvider,
  findServerProvider,
  listServerProviders,
  parseFieldSpec,
} from '../services/providers.js';
import { ServiceError } from '../services/service-error.js';
import type { StaticField } from '../providers/types.js';
import { formText } from '../web/form-fields.js';
import { type FieldErrors } from './forms.js';
import { dashboardPage, fixedText, sendPage } from './layout.js';
import { pageContext } from './plugin.js';
import { providersBody, type ProviderForm, type RefusedForm } from './provider-forms.js';
import { memberActor, serverBreadcrumbs, serverOfAccount, serverTabs, type AccountServer } from './server-access.js';

/** Notices are looked up by code, so nothing from the query string is ever shown. */
const NOTICES: Record<string, string> = {
  'provider-enabled': 'Provider enabled on this server.',
  'provider-added': 'Custom provider added and enabled on this server.',
};

const SLUG = new RegExp(SLUG_PATTERN);
const SLUG_RULE = 'Use 1 to 63 lower-case letters, digits and -, starting with a letter or digit.';

type ServerRoute = { Params: { serverId: string }; Querystring: { notice?: unknown } };

/** A service message as a sentence beside a field ("the slug must…" → "The slug must….") */
function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** "a, b c" → ['a', 'b', 'c']; nothing typed → undefined (the provider's defaults). */
function parseScopes(text: string): string[] | undefined {
  const scopes = text.split(/[\s,]+/).filter(Boolean);
  return scopes.length ? scopes : undefined;
}

function required(values: Record<string, string>, names: [string, string][], errors: FieldErrors) {
  for (const [name, what] of names) if (!values[name]) errors[name] = `Enter the ${what}.`;
}

function checkSlug(slug: string, field: string, errors: FieldErrors) {
  if (slug && !SLUG.test(slug)) errors[field] = SLUG_RULE;
}

export function registerProviderPages(scope: FastifyInstance, ctx: ServiceContext) {
  const base = (server: AccountServer) => `/dashboard/servers/${server.id}/providers`;

  async function render(request: FastifyRequest<ServerRoute>, reply: FastifyReply, server: AccountServer, refused: RefusedForm | null) {
    const context = pageContext(request);
    const notice = refused ? null : fixedText(NOTICES, request.query.notice);
    const body = html`${serverTabs(server, 'providers')}
${providersBody({
  action: base(server),
  csrf: context.csrf,
  callbackUrl: `${ctx.publicUrl}/oauth/callback`,
  providers: await listServerProviders(ctx, server.id),
  refused,
})}`;
    const page = dashboardPage(context, {
      title: `${server.name}: Providers`,
      section: 'servers',
      body,
      notice,
      breadcrumbs: [...serverBreadcrumbs(), { label: server.name, href: `/dashboard/servers/${server.id}` }],
    });
    return sendPage(reply, page, refused ? 422 : 200);
  }

  /** Runs a form's action: a refusal re-renders the page (422), success redirects with a notice (303). */
  async function handle(
    request: FastifyRequest<ServerRoute>,
    reply: FastifyReply,
    form: ProviderForm,
    run: (server: AccountServer) => Promise<{ values: Record<string, string>; errors: FieldErrors; problem?: string; notice?: string }>,
  ) {
    const server = await serverOfAccount(ctx, pageContext(request).member.accountId, request.params.serverId);
    const outcome = await run(server);
    if (outcome.notice) return reply.redirect(`${base(server)}?notice=${outcome.notice}`, 303);
    return render(request, reply, server, { form, values: outcome.values, errors: outcome.errors, problem: outcome.problem });
  }

  scope.get<ServerRoute>('/servers/:serverId/providers', async (request, reply) => {
    const server = await serverOfAccount(ctx, pageContext(request).member.accountId, request.params.serverId);
    return render(request, reply, server, null);
  });

  scope.post<ServerRoute>('/servers/:serverId/providers', (request, reply) =>
    handle(request, reply, 'enable', async (server) => {
      const values = {
        provider: formText(request.body, 'provider').trim(),
        clientId: formText(request.body, 'clientId').trim(),
        scopes: formText(request.body, 'scopes').trim(),
      };
      const clientSecret = formText(request.body, 'clientSecret').trim();
      if (!values.provider) return { values, errors: { provider: 'Choose a provider.' } };
      try {
        await enableProvider(ctx, {
          serverId: server.id,
          slug: values.provider,
          clientId: values.clientId || undefined,
          clientSecret: clientSecret || undefined,
          scopes: parseScopes(values.scopes),
          actor: memberActor(pageContext(request).member.memberId),
        });
        return { values, errors: {}, notice: 'provider-enabled' };
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const message = sentence(error.message);
        if (error.reason === 'not_found') return { values, errors: { provider: message } };
        // enableProvider checks in this order: the OAuth client, then the scopes; a static provider
        // refuses whichever OAuth fields were given, so the message goes beside each of them.
        const found = await findServerProvider(ctx, server.id, values.provider);
        const errors: FieldErrors = {};
        if (found?.provider.kind === 'oauth2') {
          if (!values.clientId) errors.clientId = message;
          if (!clientSecret) errors.clientSecret = message;
          if (values.clientId && clientSecret) errors.scopes = message;
        } else {
          if (values.clientId) errors.clientId = message;
          if (clientSecret) errors.clientSecret = message;
          if (values.scopes) errors.scopes = message;
        }
        return Object.keys(errors).length ? { values, errors } : { values, errors, problem: message };
      }
    }),
  );

  scope.post<ServerRoute>('/servers/:serverId/providers/custom-oauth', (request, reply) =>
    handle(request, reply, 'custom-oauth', async (server) => {
      const values: Record<string, string> = {};
      for (const name of ['oauthSlug', 'oauthName', 'authorizationUrl', 'tokenUrl', 'revocationUrl', 'oauthClientId', 'oauthScopes', 'tokenAuth']) {
        values[name] = formText(request.body, name).trim();
      }
      const clientSecret = formText(request.body, 'oauthClientSecret').trim();
      const errors: FieldErrors = {};
      required(values, [['oauthSlug', 'slug'], ['authorizationUrl', 'authorization URL'], ['tokenUrl', 'token URL'], ['oauthClientId', 'client ID']], errors);
      if (!clientSecret) errors.oauthClientSecret = 'Enter the client secret.';
      checkSlug(values.oauthSlug!, 'oauthSlug', errors);
      if (Object.keys(errors).length) return { values, errors };
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
          scopes: parseScopes(values.oauthScopes!),
          tokenAuth: values.tokenAuth || undefined,
          actor: memberActor(pageContext(request).member.memberId),
        });
        return { values, errors, notice: 'provider-added' };
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const message = sentence(error.message);
        // The service stops at its first broken rule; its message names the field it is about.
        const field =
          error.reason === 'conflict' || /slug/.test(error.message) ? 'oauthSlug'
          : /authorization URL/.test(error.message) ? 'authorizationUrl'
          : /revocation URL/.test(error.message) ? 'revocationUrl'
          : /token URL/.test(error.message) ? 'tokenUrl'
          : /endpoint authentication/.test(error.message) ? 'tokenAuth'
          : /scope/.test(error.message) ? 'oauthScopes'
          : null;
        return field ? { values, errors: { [field]: message } } : { values, errors, problem: message };
      }
    }),
  );

  scope.post<ServerRoute>('/servers/:serverId/providers/custom-static', (request, reply) =>
    handle(request, reply, 'custom-static', async (server) => {
      // Field specs are kept as typed (only line ends normalised), so a refused textarea reads the same.
      const values = {
        staticSlug: formText(request.body, 'staticSlug').trim(),
        staticName: formText(request.body, 'staticName').trim(),
        fields: formText(request.body, 'fields').replace(/\r\n?/g, '\n'),
      };
      const errors: FieldErrors = {};
      required(values, [['staticSlug', 'slug']], errors);
      checkSlug(values.staticSlug, 'staticSlug', errors);
      const fields: StaticField[] = [];
      const lineErrors: string[] = [];
      values.fields.split('\n').forEach((typed, i) => {
        const line = typed.trim();
        if (!line) return;
        try {
          fields.push(parseFieldSpec(line));
        } catch (error) {
          if (!(error instanceof ServiceError)) throw error;
          lineErrors.push(`Line ${i + 1}: ${error.message}.`);
        }
      });
      if (fields.length === 0 && lineErrors.length === 0) errors.fields = 'Enter at least one field, one per line, e.g. apiKey:API key:secret';
      else if (lineErrors.length) errors.fields = lineErrors.join(' ');
      if (Object.keys(errors).length) return { values, errors };
      try {
        await addCustomStaticProvider(ctx, {
          serverId: server.id,
          slug: values.staticSlug,
          name: values.staticName || undefined,
          fields,
          actor: memberActor(pageContext(request).member.memberId),
        });
        return { values, errors, notice: 'provider-added' };
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        const field = error.reason === 'conflict' || /slug/.test(error.message) ? 'staticSlug' : 'fields';
        return { values, errors: { [field]: sentence(error.message) } };
      }
    }),
  );
}
