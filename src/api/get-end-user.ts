/** GET /v1/end-users/{externalUserId}: one member with the secrets of each credential (CONTRACT 2.6). */
import { Type } from '@sinclair/typebox';
import { openMember, readMember } from '../services/audience/members.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import type { GuardHook } from './guard-hook.js';
import { AudienceMemberWithSecrets, ExternalUserId, GUARD_STATUSES, problemResponses } from './schemas.js';

const PATH = '/end-users/:externalUserId';

export function registerGetEndUser(app: ApiInstance, ctx: ServiceContext, guard: GuardHook) {
  // The member read returns the auth version: the guard's judgement of the keys is confirmed by it.
  guard.leaveVersionToHandler(`${app.prefix}${PATH}`);
  app.get(
    PATH,
    {
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
      const read = await readMember(ctx, authOf(request).serverId, request.params.externalUserId);
      // Where a key, a server key or the server changed after this node last read the auth version,
      // the keys are judged again on fresh rows before anything is answered or refreshed.
      await guard.confirm(request, read.authVersion);
      const { secretsReadable } = authOf(request);
      return openMember(ctx, read, request.params.externalUserId, request.query.minValiditySeconds ?? 60, { secretsReadable });
    },
  );
}
