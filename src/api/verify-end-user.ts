/** POST /v1/end-users/{externalUserId}/verify?provider=P: check a stored static credential at its provider now (CONTRACT 8.3). */
import { Type } from '@sinclair/typebox';
import { verifyMemberCredential } from '../services/checks/credential-checks.js';
import type { ServiceContext } from '../services/context.js';
import { Problem } from '../web/problem.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { CheckOutcome, ExternalUserId, GUARD_STATUSES, ProviderSlug, problemResponses, Timestamp } from './schemas.js';

const Checked = Type.Object({
  provider: Type.String(),
  outcome: CheckOutcome,
  at: Timestamp,
});

export function registerVerifyEndUser(app: ApiInstance, ctx: ServiceContext) {
  app.post(
    '/end-users/:externalUserId/verify',
    {
      schema: {
        summary: "Check an end user's static credential at its provider",
        description:
          "Sends the provider's verify request with the stored values. A rejected outcome turns the credential to needs_reauth " +
          '(error credential_rejected) and sends credential.needs_reauth; a later valid one does not turn it back.',
        tags: ['end users'],
        params: Type.Object({ externalUserId: ExternalUserId }),
        querystring: Type.Object({ provider: ProviderSlug }, { additionalProperties: false }),
        response: { 200: Checked, ...problemResponses(...GUARD_STATUSES, 422) },
      },
      // The route takes no body (CONTRACT 8.3): one sent may be `{}`, and anything in it is unknown (2.2).
      preValidation: async (request) => {
        const { body } = request;
        if (body === undefined || body === null) return;
        if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
        throw new Problem('validation_failed', 'This route takes no body.', { errors: [{ path: '/body', message: 'must be empty: the route takes no body' }] });
      },
    },
    async (request) => {
      const auth = authOf(request);
      return verifyMemberCredential(ctx, {
        accountId: auth.accountId,
        serverId: auth.serverId,
        externalUserId: request.params.externalUserId,
        provider: request.query.provider,
        actor: `api:${auth.accountKeyId}`,
      });
    },
  );
}
