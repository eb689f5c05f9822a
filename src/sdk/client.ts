/**
 * The Keyward client: one method per management operation, each over the transport (retries,
 * Idempotency-Key, errors as KeywardError). Bodies and answers are the generated OpenAPI types.
 */
import { randomUUID } from 'node:crypto';
import type {
  ConnectSession,
  ConnectStaticBody,
  CreateConnectSessionBody,
  CredentialCheck,
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
  UpdatedEndUser,
  UpdateEndUserBody,
} from './bodies.js';
import { KeywardError } from './keyward-error.js';
import { queryString, Transport } from './transport.js';

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

/** A call through the gateway: `path` goes after the provider's API base URL, as written (encode its segments yourself). */
export interface ProxyRequest {
  externalUserId: string;
  provider: string;
  /** GET unless given. */
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** `repos/octo/hello/issues`: appended to the provider's apiBaseUrl; a leading "/" is dropped. */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | URLSearchParams;
  /** Sent on to the provider (Keyward removes its own and the hop-by-hop ones; `keyward-base-url` picks another API host). */
  headers?: Record<string, string>;
  /** A ReadableStream is streamed (and never retried); anything else fetch takes is sent as it is. */
  body?: BodyInit | null;
}

/** The list's query, with `tags` as an object: each pair becomes one `tag=key:value` (all must match). */
export type EndUserListOptions = ListEndUsersQuery & { tags?: Record<string, string> };

/** A path segment: `auth0|a/b` travels as `auth0%7Ca%2Fb`. */
const segment = encodeURIComponent;

/**
 * What the URL parser would change in a proxied path before Keyward saw it: a `.` or `..` segment in
 * any spelling (removed with the segment before it: `../../x` would leave the proxy route for another
 * of Keyward's routes), a `\` (made a `/`), a `?` or `#` (a query or a fragment), the tab and line
 * breaks it drops, any other control character, and a space at the end (trimmed where no query
 * follows). Keyward refuses each of them (`proxy_target_not_allowed`); sent through fetch, they
 * would arrive already rewritten, as some other call.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are among what it looks for.
const REWRITTEN_BY_THE_URL_PARSER = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)|[\\?#\u0000-\u001f\u007f]| $/i;

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

  /**
   * POST /v1/connect-sessions: a Connect page link for one end user, where they connect and disconnect
   * the offered providers until it expires. Open its `url` in the end user's browser, or with
   * connect.js (`Keyward.connect(url)`) from a page on one of `allowedOrigins`.
   */
  createConnectSession(body: CreateConnectSessionBody, options: PostOptions = {}): Promise<ConnectSession> {
    return this.#post('/connect-sessions', body, options);
  }

  /**
   * GET /v1/end-users: one page of the audience; pass its `nextCursor` as `cursor` for the next.
   * `tags: { plan: 'pro' }` keeps the end users with every one of those tags (sent as `tag=plan:pro`).
   */
  listEndUsers(query: EndUserListOptions = {}): Promise<EndUserPage> {
    const { tags, ...rest } = query;
    const tag = tags === undefined ? rest.tag : Object.entries(tags).map(([key, value]) => `${key}:${value}`);
    return this.#transport.send({ method: 'GET', path: '/end-users', query: { ...rest, tag } });
  }

  /** Every end user matching `query`, page after page, oldest first. */
  async *endUsers(query: Omit<EndUserListOptions, 'cursor'> = {}): AsyncGenerator<EndUserSummary, void, undefined> {
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

  /**
   * PATCH /v1/end-users/{externalUserId}: sets the end user's `displayName`, `email` and `tags`. A field
   * left out stays, null clears it; `tags` merges key by key, a tag set to null is removed.
   */
  updateEndUser(externalUserId: string, body: UpdateEndUserBody): Promise<UpdatedEndUser> {
    return this.#transport.send({ method: 'PATCH', path: `/end-users/${segment(externalUserId)}`, body });
  }

  /** DELETE /v1/end-users/{externalUserId}: revokes one provider's credential, or all of them and the end user. */
  revokeEndUser(externalUserId: string, query: RevokeEndUserQuery = {}): Promise<RevokedEndUser> {
    return this.#transport.send({ method: 'DELETE', path: `/end-users/${segment(externalUserId)}`, query });
  }

  /**
   * POST /v1/end-users/{externalUserId}/verify?provider=P: checks the end user's static credential of
   * that provider at the provider now. `rejected` has turned it to needs_reauth.
   */
  verify(input: { externalUserId: string; provider: string }): Promise<CredentialCheck> {
    // No Idempotency-Key: the route creates nothing, and a retried check only checks again.
    return this.#transport.send({ method: 'POST', path: `/end-users/${segment(input.externalUserId)}/verify`, query: { provider: input.provider } });
  }

  /**
   * `METHOD /v1/end-users/{externalUserId}/proxy/{provider}/{path}`: calls the provider's API with the
   * end user's credential, which never reaches this process. Answers the provider's own `Response`,
   * whatever its status (its body streams: read it or cancel it). Keyward's refusals throw KeywardError
   * (`proxy_target_not_allowed`, `credential_needs_reauth`, `provider_unavailable`, …).
   */
  proxy(request: ProxyRequest): Promise<Response> {
    const path = request.path.replace(/^\/+/, '');
    if (REWRITTEN_BY_THE_URL_PARSER.test(path)) {
      const detail = `The path ${JSON.stringify(request.path)} has a "." or ".." segment, a "\\", a "?", a "#" or a line break; put a query in \`query\`.`;
      return Promise.reject(new KeywardError({ status: null, code: 'proxy_target_not_allowed', detail }));
    }
    const { query } = request;
    const search = query instanceof URLSearchParams ? (query.size > 0 ? `?${query}` : '') : queryString(query);
    return this.#transport.open({
      method: request.method ?? 'GET',
      target: `/end-users/${segment(request.externalUserId)}/proxy/${segment(request.provider)}/${path}${search}`,
      headers: { ...request.headers },
      body: request.body ?? null,
    });
  }

  #post<T>(path: string, body: unknown, options: PostOptions): Promise<T> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    return this.#transport.send({ method: 'POST', path, body, headers: { 'idempotency-key': idempotencyKey } });
  }
}
