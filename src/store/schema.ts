/**
 * Table types for Kysely. Times are ISO 8601 UTC text (the same on SQLite and PostgreSQL, and ordered
 * as text); flags are integers 0/1 (SQLite has no boolean); sealed values are bytes (BLOB / bytea).
 */
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
  /** Policies (0/1, migration 018): every password user must use one-time codes; passwords are off for all but owners. */
  require_mfa: Generated<number>;
  require_sso: Generated<number>;
}

/** A dashboard user's role in their account (CONTRACT 9; services/team/roles.ts says what each may do). */
export type TeamRole = 'owner' | 'admin' | 'developer' | 'viewer';

export interface AccountUsersTable {
  id: string;
  account_id: string;
  email: string;
  password_hash: string | null;
  created_at: string;
  /** CONTRACT 9: `owner`, `admin`, `developer` or `viewer` (services/team/roles.ts). */
  role: TeamRole;
  last_sign_in_at: string | null;
  /** The SSO issuer's `sub` of a user who signed in through the account's provider (migration 018). */
  sso_subject: string | null;
}

/** A user's one-time code app (CONTRACT 9, migration 018): the TOTP secret, sealed; enabled once confirmed. */
export interface UserTotpTable {
  user_id: string;
  secret: Uint8Array;
  created_at: string;
  enabled_at: string | null;
  /** The time step of the last code accepted: a code is accepted only for a later step. */
  last_step: number | null;
}

/** A user's single-use recovery codes, as digests. */
export interface UserRecoveryCodesTable {
  id: string;
  user_id: string;
  code_digest: string;
  created_at: string;
  used_at: string | null;
}

/** An account's OpenID Connect provider (CONTRACT 9, migration 018). */
export interface AccountSsoTable {
  account_id: string;
  issuer: string;
  client_id: string;
  /** Sealed. */
  client_secret: Uint8Array;
  /** A JSON array of lower-case domains. */
  allowed_domains: string;
  default_role: TeamRole;
  created_at: string;
  updated_at: string;
}

export interface DashboardSessionsTable {
  id: string;
  /** SHA-256 of the session cookie's token: the token itself is never stored. */
  token_digest: string;
  user_id: string;
  created_at: string;
  /** The idle deadline: 12 h after the last request, moved at most once a minute (services/users/sessions.ts). */
  expires_at: string;
  /** The absolute deadline: 7 days after sign-in. */
  ends_at: string;
  last_seen_at: string;
  /** The browser's User-Agent and address at sign-in, for the "Security" page's list. */
  user_agent: string | null;
  address: string | null;
}

/** An invitation to an account's team (CONTRACT 9): only a digest of its link's token is stored. */
export interface TeamInvitationsTable {
  id: string;
  account_id: string;
  email: string;
  role: TeamRole;
  token_digest: string;
  /** Who invited: `user:usr_…` or `cli`. */
  invited_by: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** The user the invitation made. */
  used_by: string | null;
  revoked_at: string | null;
}

/** A used one-time form nonce (a dashboard form that creates something): kept until `expires_at`. */
export interface DashboardFormUsesTable {
  nonce: string;
  used_at: string;
  expires_at: string;
}

/** Sign-in attempts per email (a MAC of it): at most MAX_SIGN_IN_ATTEMPTS until `window_ends`. */
export interface SignInAttemptsTable {
  email_mac: string;
  attempts: number;
  window_ends: string;
}

export interface ServersTable {
  id: string;
  account_id: string;
  name: string;
  mode: 'business' | 'personal';
  /** 1, or 0 for a write-only server (CONTRACT 8.2): the member read withholds every secret. */
  secrets_readable: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** A server's branding (migration 020, CONTRACT 10); the logo's three columns are all null or all set. */
export interface ServerBrandingTable {
  server_id: string;
  display_name: string | null;
  /** `#rrggbb`, lower case. */
  accent_color: string | null;
  logo: Uint8Array | null;
  logo_type: string | null;
  /** The first 16 hex of the logo's SHA-256: part of its URL. */
  logo_version: string | null;
  updated_at: string;
}

export interface ServerRedirectUrisTable {
  server_id: string;
  uri: string;
  created_at: string;
}

export interface ServerKeysTable {
  id: string;
  server_id: string;
  digest: string;
  hint: string;
  created_at: string;
  /** Null while the key is current; set by rotation to the end of its grace period. */
  expires_at: string | null;
}

export interface AccountKeysTable {
  id: string;
  account_id: string;
  label: string;
  environment: 'production' | 'staging' | 'development' | 'other';
  digest: string;
  hint: string;
  created_at: string;
  created_by: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  revoked_by: string | null;
  exposed_origin: string | null;
  exposed_at: string | null;
}

export interface AudienceMembersTable {
  id: string;
  server_id: string;
  external_user_id: string;
  created_at: string;
  updated_at: string;
  /** The member's profile (migration 019, CONTRACT 10): null where unset. */
  display_name: ColumnType<string | null, string | null | undefined, string | null>;
  email: ColumnType<string | null, string | null | undefined, string | null>;
  /** The tags as a JSON object, keys sorted; null where none. audience_member_tags holds the same, one row each. */
  tags: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One tag of a member (migration 019): what the list's `tag=key:value` filter walks, in the list's order. */
export interface AudienceMemberTagsTable {
  member_id: string;
  server_id: string;
  tag_key: string;
  tag_value: string;
  /** Copies of the member's created_at and external_user_id, which never change. */
  member_created_at: string;
  external_user_id: string;
}

export interface CredentialsTable {
  id: string;
  server_id: string;
  member_id: string;
  provider: string;
  type: 'oauth2' | 'static';
  status: 'active' | 'needs_reauth';
  /** Sealed JSON: static values, or OAuth tokens. Associated data: credential, server and member ids. */
  secret: Uint8Array;
  access_expires_at: string | null;
  scopes: string | null;
  error_code: string | null;
  error_message: string | null;
  connected_at: string;
  updated_at: string;
  refreshed_at: string | null;
  /** OAuth refresh lease: until when one reader holds the right to refresh, and which reader (token-refresh.ts). */
  refresh_lease_until: string | null;
  refresh_lease_holder: string | null;
  /** When the last refresh attempt ended, whatever its outcome. */
  refresh_attempted_at: string | null;
  /**
   * Copies of the member's created_at and external_user_id (which never change), so the list's
   * provider filter walks one index in list order (migration 008).
   */
  member_created_at: string;
  external_user_id: string;
  /** The last read with its secrets or proxied call; written at most once a minute (services/credentials/usage.ts). */
  last_used_at: string | null;
  /** The last check of a static credential's values at its provider (CONTRACT 8.3; migration 016). */
  last_check_at: string | null;
  /** Null with a last_check_at: the background check found nothing to check with (no verify request). */
  last_check_outcome: CheckOutcome | null;
}

/** What a check of a static credential's values came to (CONTRACT 8.3). */
export type CheckOutcome = 'valid' | 'rejected' | 'unreachable';

export interface ServerProvidersTable {
  server_id: string;
  provider: string;
  client_id: string | null;
  /** Sealed OAuth client secret. Associated data: server id and provider slug. */
  client_secret: Uint8Array | null;
  scopes: string | null;
  enabled_at: string;
}

export interface CustomProvidersTable {
  server_id: string;
  slug: string;
  kind: 'oauth2' | 'static';
  /** The provider's description as JSON (types.ts), without any secret. */
  definition: string;
  created_at: string;
}

export interface StaticFormSessionsTable {
  id: string;
  server_id: string;
  external_user_id: string;
  provider: string;
  token_digest: string;
  redirect_uri: string | null;
  /** `expired`: nobody finished it by its expiry, and its notice (connect.failed, "expired") was written (migration 022). */
  status: 'pending' | 'completed' | 'cancelled' | 'expired';
  expires_at: string;
  created_at: string;
  completed_at: string | null;
  credential_id: string | null;
}

export interface OAuthFlowsTable {
  id: string;
  server_id: string;
  external_user_id: string;
  provider: string;
  state_digest: string;
  /** Sealed PKCE verifier. */
  verifier: Uint8Array;
  redirect_uri: string | null;
  scopes: string;
  /** `exchanging`: a callback claimed the flow and is swapping its code. */
  status: 'pending' | 'exchanging' | 'completed' | 'failed' | 'cancelled';
  error_code: string | null;
  expires_at: string;
  created_at: string;
  completed_at: string | null;
  credential_id: string | null;
  /** The connect session whose page started the flow (migration 021); null for a flow of POST /v1/oauth/{provider}/start. */
  connect_session_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 of the starting browser's nonce cookie: the callback refuses a browser without it (RFC 6749 §10.12). */
  browser_binding: ColumnType<string | null, string | null | undefined, string | null>;
  /** 1 where the Connect page ran in connect.js's popup. */
  connect_popup: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A connect session (CONTRACT 10, migration 021): the Connect page's link, as a digest of its token. */
export interface ConnectSessionsTable {
  id: string;
  server_id: string;
  external_user_id: string;
  token_digest: string;
  /** JSON array of provider slugs; null for every provider enabled on the server when the page is read. */
  providers: string | null;
  redirect_uri: string | null;
  /** JSON array of origins the page posts its events to. */
  allowed_origins: string;
  expires_at: string;
  created_at: string;
  /** The first connection made through it; null while nobody finished anything. */
  connected_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** When the expiry notice of a session nobody finished was written; null until then. */
  expiry_notified_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IdempotencyRecordsTable {
  server_id: string;
  idempotency_key: string;
  request_hash: string;
  status_code: number;
  /** Sealed response body: it can hold a single-use form URL. */
  response: Uint8Array;
  created_at: string;
  expires_at: string;
}

/** One master key the data was sealed under (src/services/sealing/master-key.ts). */
export interface MasterKeysTable {
  /** masterKeyId() of the key, hex. */
  key_id: string;
  /** A fixed text sealed under this key: whoever opens it holds the key. */
  check_value: Uint8Array;
  created_at: string;
  /** Set when a rotation left nothing sealed under this key: it no longer starts the service. */
  retired_at: string | null;
}

/** A random secret of the whole installation, by use (services/sealing/instance-secrets.ts). */
export interface InstanceSecretsTable {
  name: string;
  /** Sealed under the master key, like every other secret. */
  secret: Uint8Array;
  created_at: string;
}

export interface AuditEventsTable {
  id: string;
  account_id: string;
  server_id: string | null;
  actor: string;
  action: string;
  target_id: string;
  /** JSON with no secret: hints, labels, provider slugs, external user ids. */
  detail: string;
  created_at: string;
}

/** One row (id 1): bumped by triggers whenever a key, server key or server changes in a way the guard sees (migration 007). */
export interface AuthVersionTable {
  id: number;
  version: string | number | bigint;
}

/**
 * The per-key rate limit's current window, shared by every node (auth/key-quota.ts): how much of the
 * key's limit the nodes have leased in it. One row per key, reset when its minute is over.
 */
export interface RateLimitWindowsTable {
  key_id: string;
  window_start: string;
  /** Leased to the nodes in this window, at most the limit. */
  granted: number;
  /** What the last lease statement granted (its RETURNING reads this). */
  last_grant: number;
  /** Nodes that leased in this window, and in the one before: a lease is sized on the larger. */
  nodes: number;
  previous_nodes: number;
  /** Lease statements in this window. */
  leases: number;
}

/** A server's webhook endpoint (CONTRACT 7). */
export interface WebhookEndpointsTable {
  id: string;
  server_id: string;
  url: string;
  /** JSON array of the event types it subscribes to; null for all. */
  events: string | null;
  created_at: string;
}

/** An endpoint's signing secret: the current one (expires_at null) and those still in a rotation's grace period. */
export interface WebhookSecretsTable {
  id: string;
  endpoint_id: string;
  /** Sealed `whsec_…` text. Associated data: the secret's and its endpoint's ids. */
  secret: Uint8Array;
  created_at: string;
  expires_at: string | null;
}

export type WebhookMessageStatus = 'pending' | 'delivered' | 'failed';

/** The outbox: one event for one endpoint, written in the transaction of the change it reports. */
export interface WebhookMessagesTable {
  id: string;
  endpoint_id: string;
  server_id: string;
  event_type: string;
  /** The JSON body sent, byte for byte (no secret in it). */
  payload: string;
  status: WebhookMessageStatus;
  created_at: string;
  /** When the 24 hours of retries began: creation, or the last resend. */
  schedule_start: string;
  /** Failed attempts since schedule_start: the retry schedule's step. */
  failures: number;
  next_attempt_at: string;
  /** The node delivering it now, and until when (a node that died leaves a lease that runs out). */
  lease_holder: string | null;
  lease_until: string | null;
  /** When it was delivered or marked failed. */
  ended_at: string | null;
}

/** One delivery attempt: what the endpoint answered (or the error), and how long it took. */
export interface WebhookAttemptsTable {
  id: string;
  message_id: string;
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Database {
  accounts: AccountsTable;
  account_users: AccountUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  team_invitations: TeamInvitationsTable;
  user_totp: UserTotpTable;
  user_recovery_codes: UserRecoveryCodesTable;
  account_sso: AccountSsoTable;
  dashboard_form_uses: DashboardFormUsesTable;
  sign_in_attempts: SignInAttemptsTable;
  servers: ServersTable;
  server_redirect_uris: ServerRedirectUrisTable;
  server_branding: ServerBrandingTable;
  server_keys: ServerKeysTable;
  account_keys: AccountKeysTable;
  audience_members: AudienceMembersTable;
  audience_member_tags: AudienceMemberTagsTable;
  credentials: CredentialsTable;
  server_providers: ServerProvidersTable;
  custom_providers: CustomProvidersTable;
  static_form_sessions: StaticFormSessionsTable;
  oauth_flows: OAuthFlowsTable;
  connect_sessions: ConnectSessionsTable;
  idempotency_records: IdempotencyRecordsTable;
  audit_events: AuditEventsTable;
  master_keys: MasterKeysTable;
  instance_secrets: InstanceSecretsTable;
  auth_version: AuthVersionTable;
  rate_limit_windows: RateLimitWindowsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_secrets: WebhookSecretsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  job_leases: JobLeasesTable;
}

export type AccountKeyRow = Selectable<AccountKeysTable>;
export type CredentialRow = Selectable<CredentialsTable>;
export type NewAuditEvent = Insertable<AuditEventsTable>;

/** A background job's lease while one node runs it (migration 011; store/jobs-repository.ts). */
export interface JobLeasesTable {
  name: string;
  holder: string;
  lease_until: string;
}
