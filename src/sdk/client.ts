/**
 * The Keyward client: one method per management operation, each over the transport (retries,
 * Idempotency-Key, errors as KeywardError). Bodies and answers are the generated OpenAPI types.
 */
import { randomUUID } from 'node:crypto';
import type {
  ConnectStaticBody,
  EndUser,
  EndUserPage,
  EndUserSummary,
  GetEndUserQuery,
  ListEndUsersQuery,
  OAuthFlow,
  RevokedEndUser,
  RevokeEndUserQuery,
  StartOAuthBody,
  StaticConnectSession,
} from './bodies.js';
import { Transport } from './transport.js';

export interface KeywardOptions {
  /** Keyward's public URL, as KEYWARD_PUBLIC_URL (`https://keyward.example.com`; a trailing /v1 is fine too). */
  baseUrl: string;
  /** An account API key: `service_acct_…`. */
  accountKey: string;
  /** The server's API key: `service_srv_…`. */
  serverKey: string;
  /** Attempts per call in all, the first included (default 3; 1 turns retries off). */
  maxAttempts?: number;
  /** The longest wait before a retry, in ms (default 30,000). A longer Retry-After throws instead of waiting. */
  maxRetryDelayMs?: number;
  /** How long one attempt may take, in ms (default 30,000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface PostOptions {
  /** Sent as Idempotency-Key; a new random one per call where not given (and kept across its retries). */
  idempotencyKey?: string;
}

/** A path segment: `auth0|a/b` travels as `auth0%7Ca%2Fb`. */
const segment = encodeURIComponent;

export class Keyward {
  readonly #transport: Transport;

  constructor(options: KeywardOptions) {
    for (const name of ['baseUrl', 'accountKey', 'serverKey'] as const) {
      if (typeof options[name] !== 'string' || options[name] === '') throw new TypeError(`new Keyward(): ${name} is required.`);
    }
    this.#transport = new Transport({
      baseUrl: options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
      accountKey: options.accountKey,
      serverKey: options.serverKey,
      retry: { maxAttempts: Math.max(1, options.maxAttempts ?? 3), maxDelayMs: options.maxRetryDelayMs ?? 30_000 },
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch,
    });
  }

  /** POST /v1/oauth/{provider}/start: a pending flow whose `authorizationUrl` the end user's browser opens. */
  startOAuth(provider: string, body: StartOAuthBody, options: PostOptions = {}): Promise<OAuthFlow> {
    return this.#post(`/oauth/${segment(provider)}/start`, body, options);
  }

  /** POST /v1/credentials/static/{providerSlug}/connect: a hosted form's `url` for the end user. */
  connectStatic(providerSlug: string, body: ConnectStaticBody, options: PostOptions = {}): Promise<StaticConnectSession> {
    return this.#post(`/credentials/static/${segment(providerSlug)}/connect`, body, options);
  }

  /** GET /v1/end-users: one page of the audience; pass its `nextCursor` as `cursor` for the next. */
  listEndUsers(query: ListEndUsersQuery = {}): Promise<EndUserPage> {
    return this.#transport.send({ method: 'GET', path: '/end-users', query });
  }

  /** Every end user matching `query`, page after page, oldest first. */
  async *endUsers(query: Omit<ListEndUsersQuery, 'cursor'> = {}): AsyncGenerator<EndUserSummary, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listEndUsers({ ...query, cursor });
      yield* page.data;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /** GET /v1/end-users/{externalUserId}: the end user with each credential's secrets. */
  getEndUser(externalUserId: string, query: GetEndUserQuery = {}): Promise<EndUser> {
    return this.#transport.send({ method: 'GET', path: `/end-users/${segment(externalUserId)}`, query });
  }

  /** DELETE /v1/end-users/{externalUserId}: revokes one provider's credential, or all of them and the end user. */
  revokeEndUser(externalUserId: string, query: RevokeEndUserQuery = {}): Promise<RevokedEndUser> {
    return this.#transport.send({ method: 'DELETE', path: `/end-users/${segment(externalUserId)}`, query });
  }

  #post<T>(path: string, body: unknown, options: PostOptions): Promise<T> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    return this.#transport.send({ method: 'POST', path, body, headers: { 'idempotency-key': idempotencyKey } });
  }
}
