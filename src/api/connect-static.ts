/** POST /v1/credentials/static/{providerSlug}/connect: a hosted form URL for one end user (CONTRACT 2.4). */
import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../services/context.js';
import { createFormSession } from '../services/providers/static-forms.js';
import { type ApiInstance, authOf } from './api-instance.js';
import { sendCreated } from './idempotent-create.js';
import { ExternalUserId, GUARD_STATUSES, IdempotencyHeaders, ProviderSlug, problemResponses, RedirectUri, Timestamp } from './schemas.js';

const Body = Type.Object(
  {
    externalUserId: ExternalUserId,
    redirectUri: Type.Optional(RedirectUri),
    expiresIn: Type.Optional(Type.Integer({ minimum: 60, maximum: 86400, default: 1800, description: 'Seconds the form stays open.' })),
  },
  { additionalProperties: false },
);

const Created = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  externalUserId: Type.String(),
  status: Type.Literal('pending'),
  url: Type.String({ description: 'The hosted form, single use; give it to the end user only.' }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  fields: Type.Array(Type.Object({ name: Type.String(), label: Type.String(), secret: Type.Boolean(), required: Type.Boolean() })),
});

export function registerConnectStatic(app: ApiInstance, ctx: ServiceContext) {
  app.post(
    '/credentials/static/:providerSlug/connect',
    {
      schema: {
        summary: 'Get a hosted form URL where an end user enters static credentials',
        tags: ['credentials'],
        params: Type.Object({ providerSlug: ProviderSlug }),
        // No query parameters: an unknown one is refused, as on the other routes.
        querystring: Type.Object({}, { additionalProperties: false }),
        headers: IdempotencyHeaders,
        body: Body,
        response: { 201: Created, ...problemResponses(...GUARD_STATUSES, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const { serverId } = authOf(request);
      const { providerSlug } = request.params;
      const { externalUserId, redirectUri, expiresIn = 1800 } = request.body;
      return sendCreated(ctx, request, reply, `POST static-connect ${providerSlug}`, () =>
        createFormSession(ctx, { serverId, slug: providerSlug, externalUserId, redirectUri, expiresIn }),
      );
    },
  );
}
