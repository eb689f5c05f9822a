/** POST /v1/oauth/{provider}/start: an authorization URL for one end user (CONTRACT 2.3). */
import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../services/context.js';
import { startFlow } from '../services/oauth/oauth-flows.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { sendCreated } from './idempotent-create.js';
import { ExternalUserId, GUARD_STATUSES, IdempotencyHeaders, ProviderSlug, problemResponses, RedirectUri, Timestamp } from './schemas.js';

const Body = Type.Object(
  {
    externalUserId: ExternalUserId,
    redirectUri: Type.Optional(RedirectUri),
    scopes: Type.Optional(
      Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,200}$' }), {
        maxItems: 100,
        uniqueItems: true,
        description: "Replaces the provider's default scopes (RFC 6749 scope tokens).",
      }),
    ),
    expiresIn: Type.Optional(Type.Integer({ minimum: 60, maximum: 3600, default: 600, description: 'Seconds the flow stays open.' })),
  },
  { additionalProperties: false },
);

const Created = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  externalUserId: Type.String(),
  status: Type.Literal('pending'),
  authorizationUrl: Type.String({ description: "The provider's authorization page; send the end user's browser there." }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

export function registerOAuthStart(app: ApiInstance, ctx: ServiceContext) {
  app.post(
    '/oauth/:provider/start',
    {
      schema: {
        summary: 'Start an OAuth flow for an end user',
        tags: ['credentials'],
        params: Type.Object({ provider: ProviderSlug }),
        querystring: Type.Object({}, { additionalProperties: false }),
        headers: IdempotencyHeaders,
        body: Body,
        response: { 201: Created, ...problemResponses(...GUARD_STATUSES, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { serverId } = authOf(request);
      const { provider } = request.params;
      const { externalUserId, redirectUri, scopes, expiresIn = 600 } = request.body;
      return sendCreated(ctx, request, reply, `POST oauth-start ${provider}`, () =>
        startFlow(ctx, { serverId, slug: provider, externalUserId, redirectUri, scopes, expiresIn }),
      );
    },
  );
}
