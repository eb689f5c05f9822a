/**
 * Schemas shared by the management routes. Response schemas list every field they send, so a value
 * (a secret above all) can only leave where a schema names it.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { SLUG_PATTERN } from '../catalog/provider-definition.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * 1–255 Unicode characters (code points, as JSON Schema counts), no C0 or C1 control characters, and
 * well-formed: Ajv matches patterns with the `u` flag, where the surrogate range matches only a lone
 * surrogate (a pair is one code point above U+FFFF). Stored lossily, `alice\ud800` and `alice\udc00`
 * would otherwise become one end user.
 */
export const ExternalUserId = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[^\\u0000-\\u001F\\u007F-\\u009F\\uD800-\\uDFFF]*$',
  description: "The company's own id of the end user, matched exactly (case-sensitive, no normalisation).",
});

export const ProviderSlug = Type.String({ pattern: SLUG_PATTERN, description: 'A provider slug.' });

export const Timestamp = Type.String({ description: 'RFC 3339 UTC time.' });

export const RedirectUri = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "Where the end user's browser is sent afterwards; must equal one of the server's allowed redirect URIs.",
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$', description: 'Replays the first response for 24 hours.' }),
  ),
});

export const CheckOutcome = Type.Union([Type.Literal('valid'), Type.Literal('rejected'), Type.Literal('unreachable')], {
  description: 'valid: the provider answered 2xx; rejected: 401 or 403; unreachable: anything else (an outage, a timeout, a refused address).',
});

/** The last check of a static credential's values at its provider (CONTRACT 8.3). */
export const CredentialCheck = Type.Object({ at: Timestamp, outcome: CheckOutcome }, { description: 'The last check of the values; null if never checked.' });

export const CredentialSummary = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  type: Type.Union([Type.Literal('oauth2'), Type.Literal('static')]),
  status: Type.Union([Type.Literal('active'), Type.Literal('needs_reauth')]),
  connectedAt: Timestamp,
  updatedAt: Timestamp,
  lastUsedAt: Nullable(Type.String({ description: 'The last read with its secrets or proxied call, to the minute; null if never used.' })),
  lastCheck: Nullable(CredentialCheck),
});

export const CredentialWithSecrets = Type.Object({
  ...CredentialSummary.properties,
  values: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'static: the field names and what the end user typed.' })),
  accessToken: Type.Optional(Type.String()),
  tokenType: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Nullable(Timestamp)),
  scopes: Type.Optional(Type.Array(Type.String())),
  refreshedAt: Type.Optional(Nullable(Timestamp)),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.Optional(Type.String()), retryable: Type.Optional(Type.Boolean()) })),
  secretsWithheld: Type.Optional(
    Type.Literal(true, { description: 'A write-only server (secretsReadable false): no accessToken and no values; the proxy uses the credential.' }),
  ),
});

/** A member's profile (CONTRACT 10), as the list, the read, PATCH and webhook bodies show it. */
export const EndUserProfileFields = {
  displayName: Type.Union([Type.String(), Type.Null()], { description: "The end user's name as people read it; null where unset." }),
  email: Type.Union([Type.String(), Type.Null()], { description: "The end user's email address; null where unset." }),
  tags: Type.Record(Type.String(), Type.String(), { description: 'At most 10 key: value pairs, keys in order; {} where none.' }),
};

export const AudienceMemberSummary = Type.Object({
  externalUserId: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  ...EndUserProfileFields,
  credentials: Type.Array(CredentialSummary),
});

export const AudienceMemberWithSecrets = Type.Object({
  ...AudienceMemberSummary.properties,
  credentials: Type.Array(CredentialWithSecrets),
});

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    requestId: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { description: 'RFC 9457 problem details (application/problem+json).' },
);

/**
 * The error responses a route documents; all share the problem schema, under the media type they are
 * sent as. It documents them only: sendProblem sends its body already serialised, as text.
 */
export function problemResponses(...statuses: number[]) {
  const content = { 'application/problem+json': { schema: ProblemSchema } };
  const response = { description: ProblemSchema.description, content };
  return Object.fromEntries(statuses.map((status) => [status, status === 503 ? UNAVAILABLE_RESPONSE : response]));
}

const UNAVAILABLE_RESPONSE = {
  description: 'database_unavailable: the database cannot be reached for now; send the request again after Retry-After seconds.',
  headers: { 'retry-after': { type: 'integer', description: 'Seconds to wait before sending the request again.' } },
  content: { 'application/problem+json': { schema: ProblemSchema } },
};

/**
 * Every management route can fail authentication, rate limiting, or the request's own checks, and
 * answer 503 database_unavailable (with Retry-After) while the database cannot be reached.
 */
export const GUARD_STATUSES = [400, 401, 403, 404, 429, 500, 503];
