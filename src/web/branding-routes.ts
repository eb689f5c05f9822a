/**
 * What the end users' pages load for a server's branding (CONTRACT 10), public like those pages:
 *
 * - `GET /branding/{serverId}/logo-{version}`: the logo, with its stored content type. The version
 *   is the logo's digest, so the answer may be cached for a year; an old version, an unknown server or
 *   a server without a logo is 404. Opened directly (a browser tab on its URL), nothing in it runs:
 *   its CSP allows no script, loads nothing, and sandboxes the document; nosniff keeps the type.
 * - `GET /branding/style-{rrggbb}.css`: the pages' stylesheet with that accent (web/accent-stylesheet.ts).
 *
 * Errors here are problem+json, as everywhere outside /v1's pages: a browser loads these as
 * subresources, never as a page a person reads.
 */
import type { FastifyInstance } from 'fastify';
import { readLogo } from '../services/branding/branding.js';
import type { ServiceContext } from '../services/context.js';
import { accentStylesheet } from './accent-stylesheet.js';
import { Problem } from './problem.js';

/** Nothing in a served logo runs or loads: only its own inline styles apply (an SVG's <style>). */
export const LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
const VERSION = /^[0-9a-f]{16}$/;
const STYLESHEET = /^style-([0-9a-f]{6})\.css$/;

const notFound = (what: string) => new Problem('route_not_found', `No ${what} at this address.`);

export function registerBrandingRoutes(app: FastifyInstance, ctx: ServiceContext) {
  app.get<{ Params: { serverId: string; version: string } }>('/branding/:serverId/logo-:version', { schema: { hide: true } }, async (request, reply) => {
    const { serverId, version } = request.params;
    if (!VERSION.test(version)) throw notFound('logo');
    const logo = await readLogo(ctx, serverId, version);
    if (!logo) throw notFound('logo');
    const extension = logo.type === 'image/png' ? 'png' : 'svg';
    return reply
      .type(logo.type)
      .headers({
        'x-content-type-options': 'nosniff',
        'content-security-policy': LOGO_CSP,
        'content-disposition': `inline; filename="logo.${extension}"`,
        'cache-control': 'public, max-age=31536000, immutable',
      })
      .send(Buffer.from(logo.bytes));
  });

  app.get<{ Params: { file: string } }>('/branding/:file', { schema: { hide: true } }, async (request, reply) => {
    const hex = STYLESHEET.exec(request.params.file)?.[1];
    const css = hex ? accentStylesheet(hex) : null;
    if (css === null) throw notFound('stylesheet');
    // As long as the pages' own stylesheet (web/assets.ts): it changes with a release.
    return reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(css);
  });
}
