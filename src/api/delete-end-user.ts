/** DELETE /v1/end-users/{externalUserId}: revoke one provider's credential, or all and leave (CONTRACT 2.7). */
import { Type } from '@sinclair/typebox';
import { revokeMember } from '../services/audience/member-revocation.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { ExternalUserId, GUARD_STATUSES, ProviderSlug, problemResponses, Timestamp } from './schemas.js';

const Revoked = Type.Object({
  externalUserId: Type.String(),
  revoked: Type.Array(
    Type.Object({
      id: Type.String(),
      provider: Type.String(),
      revokedAt: Timestamp,
      providerRevocation: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('not_supported')]),
    }),
  ),
});

export function registerDeleteEndUser(app: ApiInstance, ctx: ServiceContext) {
  app.delete(
    '/end-users/:externalUserId',
    {
      schema: {
        summary: "Revoke an end user's credentials",
        tags: ['end users'],
        params: Type.Object({ externalUserId: ExternalUserId }),
        querystring: Type.Object({ provider: Type.Optional(ProviderSlug) }, { additionalProperties: false }),
        response: { 200: Revoked, ...problemResponses(...GUARD_STATUSES) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      return revokeMember(ctx, {
        accountId: auth.accountId,
        serverId: auth.serverId,
        externalUserId: request.params.externalUserId,
        provider: request.query.provider,
        actor: `api:${auth.accountKeyId}`,
      });
    },
  );
}
