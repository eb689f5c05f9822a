import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/**
 * The pages' stylesheets, icon and scripts, served from 'self' so the CSP needs nothing inline; and
 * /connect.js, which companies load into their own pages from Keyward.
 */
export function registerAssets(app: FastifyInstance) {
  const assets = [
    { path: '/assets/keyward.css', file: 'keyward.css', type: 'text/css; charset=utf-8' },
    { path: '/assets/favicon.svg', file: 'favicon.svg', type: 'image/svg+xml' },
    { path: '/assets/dashboard.css', file: 'dashboard.css', type: 'text/css; charset=utf-8' },
    { path: '/assets/dashboard.js', file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
    // The Connect page's script, and connect.js for the companies' own pages (CONTRACT 10).
    { path: '/assets/connect-page.js', file: 'connect-page.js', type: 'text/javascript; charset=utf-8' },
    { path: '/connect.js', file: 'connect.js', type: 'text/javascript; charset=utf-8' },
  ];
  for (const asset of assets) {
    const body = readFileSync(new URL(`../assets/${asset.file}`, import.meta.url));
    app.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
      reply.type(asset.type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(body),
    );
  }
}
