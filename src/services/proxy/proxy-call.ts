/**
 * One call through the gateway (CONTRACT 8.1): the member's credential of a provider, used on the
 * provider's API without the caller ever holding it. `prepareProxyCall` settles everything that can be
 * refused before the caller's body is read (the member, the credential, the provider's API, the
 * target, an OAuth token refreshed first where it expires within 60 s); `send` makes the call through
 * the outbound policy (checked, pinned, no redirect followed) and waits for the answer's first chunk,
 * so that a provider breaking off before any byte is Keyward's 502, not a truncated answer.
 *
 * An OAuth call answered 401 is sent once more after a refresh (single flight and cooldown as a read:
 * token-refresh.ts) when its body could be kept to send again; the token must then have changed, or
 * the provider's 401 is passed on as it is.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Provider, type ProviderApi, proxiable } from '../../catalog/provider-definition.js';
import { discard, OutboundError } from '../../outbound/outbound-http.js';
import { iso } from '../../primitives/clock.js';
import { BoundedMap } from '../../primitives/insertion-ordered-map.js';
import type { MemberCredentialForProxy } from '../../store/audience-repository.js';
import type { CredentialRow } from '../../store/schema.js';
import { endUserNotFound } from '../audience/members.js';
import type { ServiceContext } from '../context.js';
import { openCredentialSecret } from '../credentials/credentials.js';
import { keptOpenedSecret } from '../credentials/opened-secrets.js';
import { noteUse } from '../credentials/usage.js';
import { DomainError } from '../domain-error.js';
import { callerResponseHeaders, upstreamRequestHeaders } from '../gateway/proxy-headers.js';
import { proxyTarget } from '../gateway/proxy-target.js';
import { answerBody, type ByteCount, hasNoContent, noContent, type ReadAhead, readAhead } from '../gateway/read-ahead.js';
import { type InjectedAuth, staticInjection, withQuery } from '../gateway/static-auth.js';
import { readFresh, readRefreshedAfterRefusal } from '../oauth/token-refresh.js';

/** An OAuth token that expires within this is refreshed before the call (CONTRACT 8.1). */
const MIN_VALIDITY_SECONDS = 60;
/** A request body up to this size is kept, so that an OAuth call can be sent again after a refresh. */
const REPLAYABLE_BODY_BYTES = 1024 * 1024;

export interface ProxyTargetInput {
  provider: string;
  /** After `/proxy/{provider}/`, as received (still percent-encoded); the query after the `?`, as received. */
  rawPath: string;
  rawQuery: string;
  /** The caller's `keyward-base-url`, where sent. */
  pickedBaseUrl: string | undefined;
}

export interface ProxyTimeouts {
  /** KEYWARD_PROXY_TIMEOUT_SECONDS: how long the provider may take to start answering. */
  headersMs: number;
  /** How long the answer's body may pause between two chunks (an idle event stream's pings come well within it). */
  bodyMs: number;
}

export interface ProxyAnswer {
  status: number;
  /** The provider's headers as the caller receives them (proxy-headers.ts). */
  headers: OutgoingHttpHeaders;
  body: ReadAhead;
  /** The host (and port) called, as in its URL: the answer's `keyward-upstream`. */
  upstreamHost: string;
}

function refusal(code: 'proxy_not_supported' | 'proxy_target_not_allowed' | 'credential_needs_reauth' | 'credential_not_found', detail: string) {
  return new DomainError(code, { detail });
}

/** What a proxied call reads first, in one statement, and when it began (a refresh attempt after that is its answer too). */
export interface ProxyRead {
  /** A Date, made text only where an OAuth token is looked at: most calls never need it. */
  since: Date;
  found: Readonly<MemberCredentialForProxy>;
}

/**
 * The member, its credential of the provider and a custom provider's definition, with the auth
 * version for the caller to confirm the keys by (api/proxy.ts) before anything is refreshed or called.
 */
export async function readForProxy(ctx: ServiceContext, serverId: string, externalUserId: string, provider: string): Promise<ProxyRead> {
  const since = ctx.clock.now();
  return { since, found: await ctx.store.audience.memberCredentialForProxy(serverId, externalUserId, provider) };
}

/**
 * What a read gives every call made with it, worked out once per read object: its provider, and the
 * auth to inject while the credential is used as read. The store hands out the same object until
 * a change is committed, and for a minute at most (store/reads-until-change.ts), so a busy end user's
 * calls work it out once a minute, or once per revocation, refresh or other change; a new read is a
 * new object, and then the secret is still opened only once a
 * minute per sealed value (credentials/opened-secrets.ts), and a custom definition parsed once per
 * text (parsedDefinitions below). Held weakly: what was worked out goes with the read. (The process
 * holds the master key, which opens every stored secret, so an opened one kept this long is no new
 * exposure to whoever can read its memory.)
 */
interface WorkedOut {
  provider: Provider | null;
  injected?: InjectedAuth;
}
const workedOut = new WeakMap<Readonly<MemberCredentialForProxy>, WorkedOut>();

/**
 * Custom providers' definitions as parsed, by their text. A read is a new object after every change
 * committed (on PostgreSQL, every change the feed notifies), yet the few definitions it carries are the same texts:
 * parsing one again cost ~15 µs a call where calls are spread over many end users (bench/RESULTS.md,
 * "Calls spread over an audience"). A changed definition is another text, so nothing stale is found;
 * the parsed objects are shared, and never written.
 */
const parsedDefinitions = new BoundedMap<Provider>(1_000);

function customProvider(definition: string): Provider {
  let provider = parsedDefinitions.get(definition);
  if (!provider) {
    provider = JSON.parse(definition) as Provider;
    parsedDefinitions.set(definition, provider);
  }
  return provider;
}

function workedOutOf(ctx: ServiceContext, found: Readonly<MemberCredentialForProxy>, slug: string): WorkedOut {
  let known = workedOut.get(found);
  if (!known) {
    // A catalog slug is never a custom provider's (custom-providers.ts refuses it).
    const provider = ctx.catalog(slug) ?? (found.customDefinition === null ? null : customProvider(found.customDefinition));
    known = { provider };
    workedOut.set(found, known);
  }
  return known;
}

/**
 * The member's credential of the provider, its API and the URL to call, checked before any body is
 * read; the credential's use noted then (CONTRACT 8.4), so that a database failing here is answered
 * before any provider saw the call.
 */
export async function prepareProxyCall(ctx: ServiceContext, read: ProxyRead, input: ProxyTargetInput): Promise<ProxyCall> {
  const { found } = read;
  if (!found.member) throw endUserNotFound();
  const stored = found.credential;
  if (!stored) throw refusal('credential_not_found', `This end user has no credential of provider "${input.provider}".`);
  const known = workedOutOf(ctx, found, input.provider);
  const provider = known.provider;
  if (!provider || !proxiable(provider)) {
    throw refusal('proxy_not_supported', `Provider "${input.provider}" has no API base URL, so the gateway cannot call it. Read the credential instead.`);
  }
  const api = provider.api!;
  // Judged before the token is refreshed or the body read: a refused target costs the provider nothing.
  const url = targetUrl(ctx, api, input, input.rawQuery);
  const row = await usableRow(ctx, stored, read.since);
  // A refreshed row is not the one read: its auth is worked out for this call alone.
  const injected = row === stored ? injectedOnce(ctx, provider, known, row) : openInjection(ctx, provider, row);
  await noteUse(ctx, row);
  return new ProxyCall(ctx, api, row, input, injected, url);
}

/** The read's own row's auth, its secret opened once per read object (WorkedOut). */
function injectedOnce(ctx: ServiceContext, provider: Provider, known: WorkedOut, row: CredentialRow): InjectedAuth {
  known.injected ??= openInjection(ctx, provider, row);
  return known.injected;
}

/** The URL to call with this query (proxy-target.ts), or the refusal. */
function targetUrl(ctx: ServiceContext, api: ProviderApi, input: ProxyTargetInput, rawQuery: string): URL {
  const judged = proxyTarget(api, input.rawPath, rawQuery, input.pickedBaseUrl, ctx.outbound.allowPrivateUrls);
  if ('refused' in judged) throw refusal('proxy_target_not_allowed', `The call cannot be made: ${judged.refused}.`);
  return judged.url;
}

/** The credential's secret opened, as the provider's API takes it; a stored value that cannot be sent is refused. */
function openInjection(ctx: ServiceContext, provider: Provider, row: CredentialRow): InjectedAuth {
  const secret = keptOpenedSecret(ctx.vault, row);
  if (secret.type === 'oauth2') return bearer(secret.accessToken);
  const made = provider.kind === 'static' ? staticInjection(provider, secret.values) : { refused: 'an OAuth provider holds no typed values' };
  if ('refused' in made) throw refusal('credential_needs_reauth', `The stored credential cannot be sent: ${made.refused}. The end user must connect again.`);
  return made;
}

const bearer = (accessToken: string): InjectedAuth => ({ headers: { authorization: `Bearer ${accessToken}` }, query: [] });

/** The credential as the call may use it: active, refreshed first where due; needs_reauth is refused. */
async function usableRow(ctx: ServiceContext, stored: CredentialRow, since: Date): Promise<CredentialRow> {
  const fresh = stored.type === 'oauth2' ? (await readFresh(ctx, stored, MIN_VALIDITY_SECONDS, iso(since)))?.row : stored;
  if (!fresh) throw refusal('credential_not_found', `This end user has no credential of provider "${stored.provider}" any more: it was revoked.`);
  if (fresh.status !== 'active') {
    throw refusal(
      'credential_needs_reauth',
      `The credential of provider "${stored.provider}" needs the end user to connect again (${fresh.error_code ?? 'needs_reauth'}).`,
    );
  }
  return fresh;
}

export class ProxyCall {
  readonly #ctx: ServiceContext;
  readonly #api: ProviderApi;
  #row: CredentialRow;
  readonly #input: ProxyTargetInput;
  #injected: InjectedAuth;
  /** The URL as judged before the call, without any query parameter the credential adds. */
  readonly #judgedUrl: URL;

  constructor(ctx: ServiceContext, api: ProviderApi, row: CredentialRow, input: ProxyTargetInput, injected: InjectedAuth, judgedUrl: URL) {
    this.#ctx = ctx;
    this.#api = api;
    this.#row = row;
    this.#input = input;
    this.#injected = injected;
    this.#judgedUrl = judgedUrl;
  }

  /**
   * Where the call goes: the URL judged before, or with the credential's query parameters, judged
   * again (an injected query parameter cannot leave the path, but the URL is judged whole each time).
   */
  #url(): URL {
    if (this.#injected.query.length === 0) return this.#judgedUrl;
    return targetUrl(this.#ctx, this.#api, this.#input, withQuery(this.#input.rawQuery, this.#injected.query));
  }

  /**
   * Makes the call with the caller's body (null: none). An OAuth call's body is read ahead first, up
   * to REPLAYABLE_BODY_BYTES, so that a 401 can be answered by a refresh and the same call again.
   * The answer is passed on from its first chunk (gateway/read-ahead.ts answerBody); a 204's or 304's has none (noContent).
   */
  async send(
    method: string,
    headers: IncomingHttpHeaders,
    callerBody: Readable | null,
    requestId: string,
    options: { timeouts: ProxyTimeouts; signal: AbortSignal; received: ByteCount },
  ): Promise<ProxyAnswer> {
    const body: ReadAhead | null =
      callerBody === null ? null : this.#row.type === 'oauth2' ? await readAhead(callerBody, REPLAYABLE_BODY_BYTES) : { stream: callerBody };
    const attempt = async () => {
      const url = this.#url();
      const answer = await this.#ctx.outbound
        .stream(url, {
          method,
          headers: upstreamRequestHeaders(headers, this.#injected.headers),
          body: body === null ? null : 'whole' in body ? body.whole : body.stream,
          signal: options.signal,
          headersTimeoutMs: options.timeouts.headersMs,
          bodyTimeoutMs: options.timeouts.bodyMs,
        })
        .catch((error: unknown) => {
          throw providerFailure(error);
        });
      return { url, answer };
    };
    let { url, answer } = await attempt();
    try {
      const repeatable = this.#row.type === 'oauth2' && (body === null || 'whole' in body);
      if (answer.status === 401 && repeatable && (await this.#refreshedAfterRefusal())) {
        discard(answer.body);
        ({ url, answer } = await attempt());
      }
      // HTTP's statuses end at 599, and a final answer starts at 200: anything else cannot be passed on (Node would refuse to send it).
      if (answer.status < 200 || answer.status > 599) {
        throw new DomainError('provider_unavailable', { detail: `The provider answered with status ${answer.status}, which HTTP does not have.` });
      }
      const length = answer.headers['content-length'];
      const passed = hasNoContent(answer.status)
        ? await noContent(answer.body)
        : await answerBody(answer.body, length === undefined ? null : Number(length), options.received);
      return { status: answer.status, headers: callerResponseHeaders(answer.headers, url.host, requestId), body: passed, upstreamHost: url.host };
    } catch (error) {
      // Whatever failed after the provider answered (its body breaking off, the refresh's database),
      // its connection is closed rather than left to its timeout.
      discard(answer.body);
      throw providerFailure(error);
    }
  }

  /** After a 401: refreshed (by this call or, meanwhile, by any other reader) into a token other than the one refused. */
  async #refreshedAfterRefusal(): Promise<boolean> {
    const after = await readRefreshedAfterRefusal(this.#ctx, this.#row, iso(this.#ctx.clock.now()));
    if (after?.row.status !== 'active') return false;
    const secret = openCredentialSecret(this.#ctx, after.row);
    if (secret.type !== 'oauth2' || this.#injected.headers.authorization === bearer(secret.accessToken).headers.authorization) return false;
    this.#row = after.row;
    this.#injected = bearer(secret.accessToken);
    return true;
  }
}

const BODY_TIMEOUT = 'UND_ERR_BODY_TIMEOUT';

/**
 * Why the provider's answer did not come: a timeout, or the provider unreachable (a refused address
 * among them). Keyward's own failures (a DomainError, the database's) go on as they are.
 */
function providerFailure(error: unknown): unknown {
  if (error instanceof DomainError || !(error instanceof OutboundError || isUndiciError(error))) return error;
  const timedOut = (error instanceof OutboundError && error.kind === 'timeout') || (error as { code?: string }).code === BODY_TIMEOUT;
  if (timedOut) return new DomainError('provider_timeout', { detail: 'The provider did not answer in time.' });
  // The message never names the address or what a name resolved to (outbound-http.ts says why).
  const why = error instanceof OutboundError && error.kind === 'refused' ? ': its address is not allowed' : '';
  return new DomainError('provider_unavailable', { detail: `The provider could not be reached${why}.` });
}

/** An error of the provider's connection or answer as undici reports it (`UND_ERR_…`), or the socket's own. */
function isUndiciError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('UND_ERR') || code.startsWith('ECONN') || code === 'EPIPE');
}
