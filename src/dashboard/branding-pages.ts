/**
 * A server's "Branding" page (CONTRACT 10), under its Overview: GET shows it; POST (multipart, for the
 * logo file) changes the display name, the accent colour and, when a file was chosen, the logo;
 * "Remove logo" takes the logo away. The service checks everything before it writes, so a refused
 * value leaves the stored branding as it was and the form comes back with the message beside its field.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { type Branding, readBranding } from '../services/branding/branding.js';
import { changeBranding } from '../services/branding/branding-changes.js';
import { logoTooLarge, MAX_LOGO_BYTES } from '../services/branding/logo-check.js';
import { type ServiceContext, userActor } from '../services/context.js';
import { multipartParser, uploadedFile } from '../web/multipart-form.js';
import { brandingBody, brandingUrl } from './branding-views.js';
import { refusalOf } from './domain-errors.js';
import { formErrors, formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { pageContext } from './plugin.js';
import { type AccountServer, serverOfAccount } from './server-access.js';
import { type ServerFormState, serverTabPage } from './server-views.js';

export const BrandingBody = SignedInForm({ displayName: Text(400), accentColor: Text(64) });
const ButtonBody = SignedInForm({});
const NoticeQuery = Query({ notice: Notice });

const NOTICES: Record<string, string> = {
  saved: 'The branding was saved. Your end users see it from their next page.',
  'logo-removed': 'The logo was removed.',
};

/** The form's fields, the file's 64 KiB and room for the rest; a larger file is read through and said to be too large. */
const UPLOAD_LIMITS = {
  fileField: 'logo',
  textFields: ['csrf', 'displayName', 'accentColor'],
  keepBytes: MAX_LOGO_BYTES + 16 * 1024,
  readBytes: 1024 * 1024,
} as const;

type Params = { Params: { serverId: string } };

function brandingPage(context: PageContext, server: AccountServer, branding: Branding, state: ServerFormState & { notice?: string | null } = {}): string {
  return serverTabPage(context, server, {
    tab: 'overview',
    title: 'Branding',
    notice: state.notice,
    under: { label: 'Branding', href: brandingUrl(server) },
    body: brandingBody(context, server, branding, state),
  });
}

export function registerBrandingPages(scope: FastifyInstance, ctx: ServiceContext) {
  scope.get<Params & { Querystring: Static<typeof NoticeQuery> }>('/servers/:serverId/branding', queryRoute(NoticeQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    const notice = fixedText(NOTICES, request.query.notice);
    return sendPage(reply, brandingPage(context, server, await readBranding(ctx, server.id), { notice }));
  });

  // Multipart is read on this route alone: its own scope, so no other form of the dashboard takes it.
  scope.register(async (upload) => {
    upload.addContentTypeParser('multipart/form-data', multipartParser(UPLOAD_LIMITS));
    upload.post<Params & { Body: Static<typeof BrandingBody> }>('/servers/:serverId/branding', formRoute(BrandingBody), async (request, reply) => {
      const context = pageContext(request);
      const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
      const values = { displayName: request.body.displayName ?? '', accentColor: request.body.accentColor ?? '' };
      const again = async (state: Parameters<typeof brandingPage>[3], status: number) =>
        sendPage(reply, brandingPage(context, server, await readBranding(ctx, server.id), { values, ...state }), status);
      const errors = formErrors(request);
      if (errors) return again({ errors }, 422);
      const file = uploadedFile(request);
      try {
        if (file?.truncated) throw logoTooLarge(null);
        await changeBranding(ctx, server.id, { ...values, ...(file ? { logo: file.bytes } : {}) }, userActor(context.user.userId));
      } catch (error) {
        const refused = refusalOf(error, { displayName: 'displayName', accentColor: 'accentColor', logo: 'logo' });
        return again({ errors: refused.errors, problem: refused.problem }, refused.status);
      }
      return reply.redirect(`${brandingUrl(server)}?notice=saved`, 303);
    });
  });

  scope.post<Params & { Body: Static<typeof ButtonBody> }>('/servers/:serverId/branding/remove-logo', formRoute(ButtonBody), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.user.accountId, request.params.serverId);
    await changeBranding(ctx, server.id, { logo: null }, userActor(context.user.userId));
    return reply.redirect(`${brandingUrl(server)}?notice=logo-removed`, 303);
  });
}
