/**
 * GET /oauth/callback: where providers send the end user's browser back (CONTRACT 2.3). The outcome
 * goes to the company's app as a 303 when the flow named a redirectUri, else to a plain page.
 */
import type { FastifyInstance } from 'fastify';
import { readBranding } from '../services/branding/branding.js';
import type { ServiceContext } from '../services/context.js';
import { handleCallback } from '../services/oauth/oauth-flows.js';
import { setPageHeaders } from '../web/page-headers.js';
import { redirectToApp } from './app-redirect.js';
import { connectPageOf, sentBrowserNonce } from './connect-page-cookies.js';
import { errorPage, successPage } from './form-page.js';

const START_AGAIN = 'Go back to the app that sent you here and connect again.';

/** On the scope of the /oauth prefix. */
export function registerOAuthCallback(scope: FastifyInstance, ctx: ServiceContext) {
  scope.get('/callback', async (request, reply) => {
    // The raw query, as the provider sent it: oauth4webapi checks it (and refuses repeated parameters).
    const query = new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length));
    const outcome = await handleCallback(ctx, query, { nonce: sentBrowserNonce(request) });
    setPageHeaders(reply);
    // A flow started from a Connect page goes back to it, which tells its outcome (connect-page-routes.ts).
    if ((outcome.kind === 'failed' || outcome.kind === 'completed') && outcome.flow.connectSessionId) {
      const back = await connectPageOf(ctx, request, { id: outcome.flow.id, connectSessionId: outcome.flow.connectSessionId });
      if (back) return reply.code(303).header('location', back).send();
    }
    switch (outcome.kind) {
      case 'unknown':
        return reply.code(400).send(errorPage(400, 'Sign-in link not valid', `This page was not reached from a connection Keyward started. ${START_AGAIN}`));
      case 'malformed':
        return reply.code(400).send(errorPage(400, 'Sign-in answer not valid', `The provider's answer could not be read. ${START_AGAIN}`));
      case 'gone':
        return reply.code(410).send(errorPage(410, 'Sign-in link no longer valid', `This connection was already completed or cancelled. ${START_AGAIN}`));
      case 'unbound':
        return reply
          .code(400)
          .send(
            errorPage(
              400,
              'Different browser',
              'Finish connecting in the browser you started in. This connection was started in another browser, and nothing was connected here.',
            ),
          );
      case 'expired':
        return reply.code(410).send(errorPage(410, 'Sign-in link expired', `This connection took too long and has expired. ${START_AGAIN}`));
      case 'failed': {
        const { flow, providerName, error, cause } = outcome;
        request.log.info({ flowId: flow.id, provider: flow.provider, error }, 'oauth flow failed');
        if (flow.redirectUri) return redirectToApp(reply, flow.redirectUri, { status: 'error', error, flowId: flow.id, provider: flow.provider });
        // The flow is the end user's own, on a known server: its page wears that server's branding.
        const branding = await readBranding(ctx, flow.serverId);
        return cause === 'provider'
          ? reply.code(400).send(errorPage(400, `${providerName} not connected`, `${providerName} did not grant access (${error}). ${START_AGAIN}`, branding))
          : reply
              .code(502)
              .send(
                errorPage(
                  502,
                  `${providerName} not connected`,
                  `Keyward could not finish the connection with ${providerName} (${error}). ${START_AGAIN}`,
                  branding,
                ),
              );
      }
      case 'completed': {
        const { flow, providerName } = outcome;
        if (flow.redirectUri) return redirectToApp(reply, flow.redirectUri, { status: 'success', flowId: flow.id, provider: flow.provider });
        return reply.send(successPage(providerName, await readBranding(ctx, flow.serverId)));
      }
    }
  });
}
