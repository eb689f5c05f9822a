/**
 * One call through the gateway (CONTRACT 8.1): the member's credential of a provider, used on the
 * provider's API without the caller ever holding it. `prepareProxyCall` settles everything that can be
 * refused before the caller's body is read (the member, the credential, the provider's API, the
 * target, an OAuth token refreshed first where it expires within 60 s); `send` makes the call through
 * the outbound policy (checked, pinned, no redirect followed) and reads the answer ahead a little, so
 * that a provider breaking off before its first bytes is Keyward's 502, not a truncated answer.
 *
 * An OAuth call answered 401 is sent once more after a refresh (single flight and cooldown as a read:
 * token-refresh.ts) when its body could be kept to send again; the token must then have changed, or
 * the provider's 401 is passed on as it is.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Provider, ProviderApi, StaticProviderApi } from '../../catalog/provider-definition.js';
import { OutboundError } from '../../outbound/outbound-http.js';
import { iso } from '../../primitives/clock.js';
import type { CredentialRow } from '../../store/schema.js';
import type { MemberRead } from '../audience/members.js';
import type { ServiceContext } from '../context.js';
import { openCredentialSecret } from '../credentials/credentials.js';
import { recordUse } from '../credentials/usage.js';
import { DomainError } from '../domain-error.js';
import { callerResponseHeaders, upstreamRequestHeaders } from '../gateway/proxy-headers.js';
import { proxyTarget } from '../gateway/proxy-target.js';
import { type ByteCount, type ReadAhead, readAhead } from '../gateway/read-ahead.js';
import { type InjectedAuth, injectedAuth, parseStaticAuth, withQuery } from '../gateway/static-auth.js';
import { readFresh, readRefreshedAfterRefusal } from '../oauth/token-refresh.js';
import { findProviderDefinition } from '../providers/server-providers.js';

/** An OAuth token that expires within this is refreshed before the call (CONTRACT 8.1). */
const MIN_VALIDITY_SECONDS = 60;
/** A request body up to this size is kept, so that the call can be sent again after a refresh. */
export const REPLAYABLE_BODY_BYTES = 1024 * 1024;
/** How much of an answer is read before the caller is answered: a small one is sent as one buffer. */
const ANSWER_READ_AHEAD_BYTES = 64 * 1024;

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
  /** How long the answer's body may pause between chunks. */
  bodyMs: number;
}

/** The request body: none, kept whole (it can be sent again), or streamed once. */
export type ProxyBody = null | ReadAhead;

export interface ProxyAnswer {
  status: number;
  /** The provider's headers as the caller receives them (proxy-headers.ts). */
  headers: OutgoingHttpHeaders;
  body: ReadAhead;
}

function refusal(code: 'proxy_not_supported' | 'proxy_target_not_allowed' | 'credential_needs_reauth' | 'credential_not_found', detail: string) {
  return new DomainError(code, { detail });
}

/** The member's credential of the provider, its API and the URL to call, checked before any body is read. */
export async function prepareProxyCall(ctx: ServiceContext, read: MemberRead, input: ProxyTargetInput): Promise<ProxyCall> {
  if (!read.member) {
    throw new DomainError('end_user_not_found', {
      detail: 'This server has no end user with that externalUserId. Ids are matched exactly: case, spaces and Unicode normalisation count.',
    });
  }
  const stored = read.credentials.find((row) => row.provider === input.provider);
  if (!stored) throw refusal('credential_not_found', `This end user has no credential of provider "${input.provider}".`);
  const provider = await findProviderDefinition(ctx, stored.server_id, input.provider);
  if (!provider?.api) {
    throw refusal('proxy_not_supported', `Provider "${input.provider}" has no API base URL, so the gateway cannot call it. Read the credential instead.`);
  }
  // Judged before the token is refreshed or the body read: a refused target costs the provider nothing.
  const judged = proxyTarget(provider.api, input.rawPath, input.rawQuery, input.pickedBaseUrl, ctx.outbound.allowPrivateUrls);
  if ('refused' in judged) throw refusal('proxy_target_not_allowed', `The call cannot be made: ${judged.refused}.`);
  const row = await usableRow(ctx, stored, read.since);
  return new ProxyCall(ctx, provider, provider.api, row, input);
}

/** The credential as the call may use it: active, refreshed first where due; needs_reauth is refused. */
async function usableRow(ctx: ServiceContext, stored: CredentialRow, since: string): Promise<CredentialRow> {
  const fresh = stored.type === 'oauth2' ? (await readFresh(ctx, stored, MIN_VALIDITY_SECONDS, since))?.row : stored;
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
  readonly #provider: Provider;
  readonly #api: ProviderApi | StaticProviderApi;
  #row: CredentialRow;
  readonly #input: ProxyTargetInput;
  /** The credential this call used (the last row read): what a use is recorded on. */
  get credential(): CredentialRow {
    return this.#row;
  }

  constructor(ctx: ServiceContext, provider: Provider, api: ProviderApi | StaticProviderApi, row: CredentialRow, input: ProxyTargetInput) {
    this.#ctx = ctx;
    this.#provider = provider;
    this.#api = api;
    this.#row = row;
    this.#input = input;
  }

  /** Whether a 401 may be answered by a refresh and a second call: OAuth, with a body kept whole (or none). */
  canRepeat(body: ProxyBody): boolean {
    return this.#row.type === 'oauth2' && (body === null || 'whole' in body);
  }

  /** Whether the body should be kept whole (up to REPLAYABLE_BODY_BYTES) so the call can be repeated. */
  get wantsReplayableBody(): boolean {
    return this.#row.type === 'oauth2';
  }

  /** Makes the call; its answer read ahead (ANSWER_READ_AHEAD_BYTES), the rest streamed as the caller reads. */
  async send(
    method: string,
    headers: IncomingHttpHeaders,
    body: ProxyBody,
    requestId: string,
    options: { timeouts: ProxyTimeouts; signal: AbortSignal; received: ByteCount },
  ): Promise<ProxyAnswer & { upstreamHost: string }> {
    const attempt = async () => {
      const injected = this.#injected();
      const judged = proxyTarget(
        this.#api,
        this.#input.rawPath,
        withQuery(this.#input.rawQuery, injected.query),
        this.#input.pickedBaseUrl,
        this.#ctx.outbound.allowPrivateUrls,
      );
      // Judged once before; only an injected query parameter changed it, which cannot leave the path.
      if ('refused' in judged) throw refusal('proxy_target_not_allowed', `The call cannot be made: ${judged.refused}.`);
      const url = judged.url;
      const payload = body === null ? null : 'whole' in body ? body.whole : body.stream;
      const answer = await this.#ctx.outbound
        .stream(url, {
          method,
          headers: upstreamRequestHeaders(headers, injected.headers),
          body: payload,
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
    if (answer.status === 401 && this.canRepeat(body) && (await this.#refreshedAfterRefusal())) {
      discard(answer.body);
      ({ url, answer } = await attempt());
    }
    // The provider was called with it: a use (CONTRACT 8.4), written at most once a minute.
    await recordUse(this.#ctx, this.#row);
    const read = await readAhead(answer.body, ANSWER_READ_AHEAD_BYTES, options.received).catch((error: unknown) => {
      discard(answer.body);
      throw providerFailure(error);
    });
    return { status: answer.status, headers: callerResponseHeaders(answer.headers, url.host, requestId), body: read, upstreamHost: url.host };
  }

  /** What the call carries for the credential: OAuth's bearer token, or what a static provider's `auth` says. */
  #injected(): InjectedAuth {
    const secret = openCredentialSecret(this.#ctx, this.#row);
    if (secret.type === 'oauth2') return { headers: { authorization: `Bearer ${secret.accessToken}` }, query: [] };
    const spec = 'auth' in this.#api ? this.#api.auth : undefined;
    const fields = this.#provider.kind === 'static' ? this.#provider.fields.map((f) => f.name) : [];
    const auth = spec === undefined ? { refused: 'the provider does not say how its values are sent' } : parseStaticAuth(spec, fields);
    const injected = 'refused' in auth ? auth : injectedAuth(auth, secret.values);
    if ('refused' in injected)
      throw refusal('credential_needs_reauth', `The stored credential cannot be sent: ${injected.refused}. The end user must connect again.`);
    return injected;
  }

  /** After a 401: refreshed (by this call or, meanwhile, by any other reader) into a token other than the one refused. */
  async #refreshedAfterRefusal(): Promise<boolean> {
    const refused = openCredentialSecret(this.#ctx, this.#row);
    const after = await readRefreshedAfterRefusal(this.#ctx, this.#row, iso(this.#ctx.clock.now()));
    if (after?.row.status !== 'active') return false;
    const now = openCredentialSecret(this.#ctx, after.row);
    if (now.type !== 'oauth2' || refused.type !== 'oauth2' || now.accessToken === refused.accessToken) return false;
    this.#row = after.row;
    return true;
  }
}

/** An answer not passed on: closed unread, with its connection. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

const BODY_TIMEOUT = 'UND_ERR_BODY_TIMEOUT';

/** Why the provider's answer did not come: a timeout, or the provider unreachable (a refused address among them). */
function providerFailure(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const timedOut = (error instanceof OutboundError && error.kind === 'timeout') || (error as { code?: string })?.code === BODY_TIMEOUT;
  if (timedOut) return new DomainError('provider_timeout', { detail: 'The provider did not answer in time.' });
  // The message never names the address or what a name resolved to (outbound-http.ts says why).
  const why = error instanceof OutboundError && error.kind === 'refused' ? ': its address is not allowed' : '';
  return new DomainError('provider_unavailable', { detail: `The provider could not be reached${why}.` });
}
