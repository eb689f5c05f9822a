/** GET /v1/end-users: the server's audience, oldest first, in keyset pages (CONTRACT 2.5). */
import { Type } from '@sinclair/typebox';
import { listMembers } from '../services/audience/members.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { AudienceMemberSummary, ExternalUserId, GUARD_STATUSES, ProviderSlug, problemResponses } from './schemas.js';

const Query = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ description: 'The nextCursor of the page before.' })),
    provider: Type.Optional(ProviderSlug),
    prefix: Type.Optional(ExternalUserId),
    tag: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.String())], {
        description:
          'key:value (repeat it for several: all must match): only end users with that tag and exactly that value. Keys are 1 to 40 characters of a-z, 0-9, "_", "." and "-"; at most 10 filters.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Page = Type.Object({
  data: Type.Array(AudienceMemberSummary),
  hasMore: Type.Boolean(),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

export function registerListEndUsers(app: ApiInstance, ctx: ServiceContext) {
  app.get(
    '/end-users',
    {
      schema: {
        summary: "List the server's audience",
        tags: ['end users'],
        querystring: Query,
        response: { 200: Page, ...problemResponses(...GUARD_STATUSES) },
      },
    },
    async (request) => {
      const { limit = 20, cursor, provider, prefix, tag } = request.query;
      return listMembers(ctx, authOf(request).serverId, { limit, cursor, provider, prefix, tag });
    },
  );
}
