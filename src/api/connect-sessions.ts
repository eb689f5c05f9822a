/** POST /v1/connect-sessions: a Connect page link for one end user (CONTRACT 10). */
import { Type } from '@sinclair/typebox';
import { MAX_ALLOWED_ORIGINS } from '../services/connect-sessions/allowed-origins.js';
import { createConnectSession } from '../services/connect-sessions/connect-sessions.js';
import type { ServiceContext } from '../services/context.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { sendCreated } from './idempotent-create.js';
import { ExternalUserId, GUARD_STATUSES, IdempotencyHeaders, ProviderSlug, problemResponses, RedirectUri, Timestamp } from './schemas.js';

const Body = Type.Object(
  {
    externalUserId: ExternalUserId,
    providers: Type.Optional(
      Type.Array(ProviderSlug, {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        description: 'The providers the page offers, each enabled on the server; every enabled provider (when the page is read) if left out.',
      }),
    ),
    redirectUri: Type.Optional(RedirectUri),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
        maxItems: MAX_ALLOWED_ORIGINS,
        description:
          'Origins (https://host[:port], or http://localhost:PORT) of the pages that open the Connect page with connect.js: its events are posted to these only.',
      }),
    ),
    expiresIn: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 14400, default: 1800, description: 'Seconds the link stays usable, for any number of connections.' }),
    ),
    endUser: Type.Optional(
      Type.Object(
        {
          displayName: Type.Optional(Type.String({ description: '1 to 200 characters, no control characters.' })),
          email: Type.Optional(Type.String({ description: 'An email address (name@example.com), at most 254 characters.' })),
        },
        {
          additionalProperties: false,
          description:
            'Stored on the end user (as PATCH /v1/end-users/{externalUserId} stores it); the page greets them by displayName, else by externalUserId.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const Created = Type.Object({
  id: Type.String(),
  externalUserId: Type.String(),
  url: Type.String({ description: "The Connect page; give it to the end user's browser only (or to connect.js)." }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

export function registerConnectSessions(app: ApiInstance, ctx: ServiceContext) {
  app.post(
    '/connect-sessions',
    {
      schema: {
        summary: 'Create a Connect page link where an end user connects and disconnects providers',
        tags: ['credentials'],
        querystring: Type.Object({}, { additionalProperties: false }),
        headers: IdempotencyHeaders,
        body: Body,
        response: { 201: Created, ...problemResponses(...GUARD_STATUSES, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const auth = authOf(request);
      const { externalUserId, providers, redirectUri, allowedOrigins, expiresIn = 1800, endUser } = request.body;
      return sendCreated(ctx, request, reply, 'POST connect-sessions', () =>
        createConnectSession(ctx, {
          accountId: auth.accountId,
          serverId: auth.serverId,
          externalUserId,
          providers,
          redirectUri,
          allowedOrigins,
          expiresIn,
          endUser,
          actor: `api:${auth.accountKeyId}`,
        }),
      );
    },
  );
}
