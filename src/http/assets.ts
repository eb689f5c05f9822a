import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** The hosted pages' one stylesheet, served from 'self' so the CSP needs no inline styles. */
export function registerAssets(app: FastifyInstance) {
  const css = readFileSync(new URL('../assets/keyward.css', import.meta.url));
  app.get('/assets/keyward.css', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(css),
  );
}
