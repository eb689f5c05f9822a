/**
 * PATCH /v1/end-users/{externalUserId}: sets an existing member's display name, email and tags
 * (CONTRACT 10). A field left out stays, null clears it; `tags` merges key by key, a tag set to null
 * is removed. The schema checks the body's shape (unknown fields refused, each value a string or
 * null); the rules (lengths, the email's form, tag keys, at most ten tags after the merge) are the
 * service's, the same for a connect session's `endUser` (services/audience/profile-rules.ts).
 */
import { Type } from '@sinclair/typebox';
import { updateEndUser } from '../services/audience/end-user-profile.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { AudienceMemberSummary, ExternalUserId, GUARD_STATUSES, problemResponses } from './schemas.js';

/** A string, or null to clear: one JSON Schema type, so a wrong type is one error naming both. */
const TextOrNull = (description: string) => Type.Unsafe<string | null>({ type: ['string', 'null'], description });

const Body = Type.Object(
  {
    displayName: Type.Optional(TextOrNull('1 to 200 characters, no control characters; null clears it.')),
    email: Type.Optional(TextOrNull('An email address (name@example.com), at most 254 characters; null clears it.')),
    tags: Type.Optional(
      Type.Record(Type.String(), TextOrNull('Up to 200 characters; null removes the tag.'), {
        description:
          'Merged key by key into the end user\'s tags; a key set to null is removed. Keys are 1 to 40 characters of a-z, 0-9, "_", "." and "-"; at most 10 tags after the merge.',
      }),
    ),
  },
  { additionalProperties: false },
);

export function registerPatchEndUser(app: ApiInstance, ctx: ServiceContext) {
  app.patch(
    '/end-users/:externalUserId',
    {
      schema: {
        summary: "Set an end user's display name, email and tags",
        tags: ['end users'],
        params: Type.Object({ externalUserId: ExternalUserId }),
        body: Body,
        response: { 200: AudienceMemberSummary, ...problemResponses(...GUARD_STATUSES) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      return updateEndUser(ctx, {
        accountId: auth.accountId,
        serverId: auth.serverId,
        externalUserId: request.params.externalUserId,
        change: request.body,
        actor: `api:${auth.accountKeyId}`,
      });
    },
  );
}
