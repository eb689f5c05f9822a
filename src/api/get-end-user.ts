/** GET /v1/end-users/{externalUserId}: one member with the secrets of each credential (CONTRACT 2.6). */
import { Type } from '@sinclair/typebox';
import { getMember } from '../services/audience/members.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { AudienceMemberWithSecrets, ExternalUserId, GUARD_STATUSES, problemResponses } from './schemas.js';

export function registerGetEndUser(app: ApiInstance, ctx: ServiceContext) {
  app.get(
    '/end-users/:externalUserId',
    {
      // The member read returns the auth version; the guard's judgement of the keys is confirmed by it.
      config: { authVersionCheckedByHandler: true },
      schema: {
        summary: "Read one end user's credentials",
        tags: ['end users'],
        params: Type.Object({ externalUserId: ExternalUserId }),
        querystring: Type.Object(
          {
            minValiditySeconds: Type.Optional(
              Type.Integer({ minimum: 0, maximum: 3600, default: 60, description: 'Refresh OAuth access tokens that expire sooner than this.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: AudienceMemberWithSecrets, ...problemResponses(...GUARD_STATUSES) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      // Where a key, a server key or the server changed after this node last read the auth version,
      // the keys are judged again on fresh rows before the read is answered (throws the refusal).
      const confirmAuth = async (authVersion: string) => {
        if (authVersion !== auth.authVersion) await request.recheckAuth!();
      };
      return getMember(ctx, auth.serverId, request.params.externalUserId, request.query.minValiditySeconds ?? 60, confirmAuth);
    },
  );
}
