/**
 * The events of CONTRACT 7 as schemas, for the OpenAPI document's `webhooks` section: the typed SDK's
 * event types are generated from them, as its request and response types are from the routes'. The
 * SDK's tests validate real deliveries against these schemas, so they cannot drift from what is sent.
 */
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { WebhookEventType } from '../services/webhooks/webhook-events.js';
import { CheckOutcome, ProblemSchema, Timestamp } from './schemas.js';

const EventCredential = Type.Object(
  {
    id: Type.String(),
    provider: Type.String(),
    type: Type.Union([Type.Literal('oauth2'), Type.Literal('static')]),
    status: Type.Union([Type.Literal('active'), Type.Literal('needs_reauth'), Type.Literal('revoked')]),
    connectedAt: Timestamp,
    updatedAt: Timestamp,
    lastUsedAt: Type.Union([Timestamp, Type.Null()]),
    lastCheck: Type.Union([Type.Object({ at: Timestamp, outcome: CheckOutcome }, { additionalProperties: false }), Type.Null()]),
  },
  { additionalProperties: false },
);

const RevokedCredential = Type.Object(
  { ...EventCredential.properties, status: Type.Literal('revoked'), revokedAt: Timestamp },
  { additionalProperties: false },
);

/** The member's profile (CONTRACT 10) as the event was written: null and {} where unset. */
const EventEndUser = Type.Object(
  {
    displayName: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    tags: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: false, description: "The end user's display name, email and tags when the event was written." },
);

const member = { serverId: Type.String(), externalUserId: Type.String(), endUser: EventEndUser };

/**
 * One event's envelope: its type as a literal, so a union of events narrows on `type`. The type is one
 * the outbox writes (webhook-events.ts), so renaming an event there fails to compile here.
 */
function event<D extends TObject>(type: WebhookEventType, description: string, data: D) {
  return Type.Object(
    { type: Type.Literal(type), timestamp: Type.String({ description: 'RFC 3339 UTC time, to the second.' }), data },
    { description, additionalProperties: false },
  );
}

const strict = { additionalProperties: false };

const EVENTS = {
  CredentialConnectedEvent: event(
    'credential.connected',
    'An OAuth callback or a hosted form stored a credential (new, or replacing one).',
    Type.Object(
      {
        ...member,
        credential: EventCredential,
        flowId: Type.Optional(Type.String({ description: 'Set when an OAuth flow connected it.' })),
        sessionId: Type.Optional(Type.String({ description: 'Set when a hosted form connected it.' })),
      },
      strict,
    ),
  ),
  CredentialRevokedEvent: event(
    'credential.revoked',
    'A credential was revoked (API, dashboard, or replaced by a new one).',
    Type.Object(
      {
        ...member,
        credential: RevokedCredential,
        reason: Type.Union([Type.Literal('revoked'), Type.Literal('replaced')]),
        replacedBy: Type.Optional(Type.String({ description: 'The id of the credential that replaced it.' })),
        providerRevocation: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('not_supported')]),
      },
      strict,
    ),
  ),
  CredentialNeedsReauthEvent: event(
    'credential.needs_reauth',
    'A refresh was refused (invalid_grant), or a check of static values was refused (401 or 403): the end user must connect again.',
    Type.Object(
      {
        ...member,
        credential: EventCredential,
        error: Type.Object({ code: Type.Union([Type.Literal('refresh_rejected'), Type.Literal('credential_rejected')]), message: Type.String() }, strict),
      },
      strict,
    ),
  ),
  CredentialRefreshFailedEvent: event(
    'credential.refresh_failed',
    'A refresh failed for an outage, the first time in a row.',
    Type.Object(
      {
        ...member,
        credential: EventCredential,
        error: Type.Object({ code: Type.Literal('refresh_failed'), message: Type.String(), retryable: Type.Boolean() }, strict),
      },
      strict,
    ),
  ),
  CredentialRecoveredEvent: event(
    'credential.recovered',
    'A refresh succeeded after refresh_failed.',
    Type.Object({ ...member, credential: EventCredential }, strict),
  ),
  ConnectFailedEvent: event(
    'connect.failed',
    'An OAuth flow ended as failed, or an OAuth flow, hosted form or connect session expired with nothing finished (error "expired").',
    Type.Object(
      {
        ...member,
        provider: Type.Optional(Type.String({ description: 'Absent for a connect session, which offers several.' })),
        flowId: Type.Optional(Type.String({ description: 'Set for an OAuth flow.' })),
        sessionId: Type.Optional(Type.String({ description: 'Set for a hosted form (cfs_…) or a connect session (csn_…) that expired.' })),
        error: Type.String({ description: 'access_denied, token_exchange_failed, flow_expired, expired, …' }),
      },
      strict,
    ),
  ),
} satisfies Record<string, TSchema>;

/** Named schemas for the document's components: the problem every error carries, and each event. */
export const DOCUMENTED_SCHEMAS: Record<string, TSchema> = { Problem: ProblemSchema, ...EVENTS };

/** The OpenAPI 3.1 `webhooks` section: one signed POST to the company's endpoint per event type. */
export const WEBHOOKS = Object.fromEntries(
  Object.entries(EVENTS).map(([name, schema]) => [
    schema.properties.type.const,
    {
      post: {
        summary: schema.description,
        description: 'Signed as Standard Webhooks: webhook-id, webhook-timestamp and webhook-signature headers.',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } },
        responses: { '2XX': { description: 'Delivered; a timeout, 408, 429 or 5xx is retried for 24 hours, any other answer fails.' } },
      },
    },
  ]),
);
