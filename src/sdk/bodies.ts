/**
 * The SDK's names for the bodies Keyward takes and answers, all picked out of the generated
 * openapi-types.ts: none is written by hand, so a route's schema change shows here at compile time.
 */
import type { components, paths, webhooks } from './openapi-types.js';

type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Post<P extends keyof paths> = NonNullable<paths[P]['post']>;
type Get<P extends keyof paths> = NonNullable<paths[P]['get']>;
type Delete<P extends keyof paths> = NonNullable<paths[P]['delete']>;
type Patch<P extends keyof paths> = NonNullable<paths[P]['patch']>;

type OAuthStart = Post<'/v1/oauth/{provider}/start'>;
type StaticConnect = Post<'/v1/credentials/static/{providerSlug}/connect'>;
type ConnectSessions = Post<'/v1/connect-sessions'>;
type ListEndUsers = Get<'/v1/end-users'>;
type GetEndUser = Get<'/v1/end-users/{externalUserId}'>;
type RevokeEndUser = Delete<'/v1/end-users/{externalUserId}'>;
type UpdateEndUser = Patch<'/v1/end-users/{externalUserId}'>;
type VerifyEndUser = Post<'/v1/end-users/{externalUserId}/verify'>;

export type StartOAuthBody = Json<OAuthStart['requestBody']>;
/** A pending OAuth flow: send the end user's browser to `authorizationUrl`. */
export type OAuthFlow = Json<OAuthStart['responses'][201]>;

export type ConnectStaticBody = Json<StaticConnect['requestBody']>;
/** A pending hosted form: give `url` to the end user only. */
export type StaticConnectSession = Json<StaticConnect['responses'][201]>;

export type CreateConnectSessionBody = Json<ConnectSessions['requestBody']>;
/** A Connect page link (CONTRACT 10): give `url` to the end user's browser, or to connect.js. */
export type ConnectSession = Json<ConnectSessions['responses'][201]>;

export type ListEndUsersQuery = NonNullable<ListEndUsers['parameters']['query']>;
export type EndUserPage = Json<ListEndUsers['responses'][200]>;
/** An end user as the list shows them: credentials without their secrets. */
export type EndUserSummary = EndUserPage['data'][number];

export type GetEndUserQuery = NonNullable<GetEndUser['parameters']['query']>;
/** An end user with each credential's secrets (access token, or the values typed into the form). */
export type EndUser = Json<GetEndUser['responses'][200]>;
export type Credential = EndUser['credentials'][number];

/** A change to an end user's profile: a field left out stays, null clears it; `tags` merges key by key (null removes a tag). */
export type UpdateEndUserBody = Json<UpdateEndUser['requestBody']>;
/** The end user as the list shows them, after the change. */
export type UpdatedEndUser = Json<UpdateEndUser['responses'][200]>;

export type RevokeEndUserQuery = NonNullable<RevokeEndUser['parameters']['query']>;
export type RevokedEndUser = Json<RevokeEndUser['responses'][200]>;

/** What POST /v1/end-users/{externalUserId}/verify answers: the check of a static credential at its provider. */
export type CredentialCheck = Json<VerifyEndUser['responses'][200]>;

/** RFC 9457 problem details, as every error from /v1 carries them. */
export type Problem = components['schemas']['Problem'];

/** Every event Keyward sends to a webhook endpoint; narrow it on `type`. */
export type WebhookEvent = { [T in keyof webhooks]: Json<NonNullable<webhooks[T]['post']>['requestBody']> }[keyof webhooks];
export type WebhookEventType = WebhookEvent['type'];
/** The event of one type: `WebhookEventOf<'credential.revoked'>`. */
export type WebhookEventOf<T extends WebhookEventType> = Extract<WebhookEvent, { type: T }>;
