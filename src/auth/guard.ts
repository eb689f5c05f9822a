/**
 * The management-API guard: the fifteen steps of CONTRACT 2.1, in order, first failure wins. Steps 1–7
 * read only the request; 8–14 take the keys from memory while the auth version (one row, read here or
 * by the route's own statement) holds (key-cache.ts); 15 spends the key's share of its rate limit.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ServiceContext } from '../services/context.js';
import { hasKeyShape, isWellFormedKey, KEY_PREFIX, keyDigest } from '../services/keys/key-format.js';
import { recordBrowserExposure, touchAccountKey, touchIsDue } from '../services/keys/key-lookup.js';
import type { AccountKeyLookup, ServerKeyLookup } from '../store/auth-lookups.js';
import { type ErrorCode, Problem } from '../web/problem.js';
import { KeyCache } from './key-cache.js';
import type { KeyQuota } from './key-quota.js';
import type { WindowState } from './rate-limit.js';

export interface AuthContext {
  accountId: string;
  accountKeyId: string;
  serverId: string;
  /** False for a write-only server (CONTRACT 8.2): the member read withholds every secret. */
  secretsReadable: boolean;
  /** The auth version the keys were judged under (key-cache.ts). */
  authVersion: string;
}

export interface GuardRequest {
  method: string;
  headers: IncomingHttpHeaders;
  /** Header names and values exactly as received, repeats included (Node keeps only the first Authorization). */
  rawHeaders: string[];
}

export interface GuardResult {
  auth: AuthContext;
  rateLimit: WindowState;
}

const REALM = 'Bearer realm="keyward"';
const INVALID_TOKEN = `${REALM}, error="invalid_token"`;
/** Codes whose 401 tells the client the Bearer token itself is bad (RFC 6750 `invalid_token`). */
const INVALID_TOKEN_CODES = new Set<ErrorCode>(['keys_swapped', 'account_key_malformed', 'account_key_invalid', 'account_key_revoked', 'account_key_expired']);
const ACCOUNT_KEYS_PAGE = 'Generate a new key in the dashboard: Developer → Account API Keys.';

export function refuse(code: ErrorCode, detail: string): Problem {
  const problem = new Problem(code, detail);
  if (problem.status === 401) problem.headers['www-authenticate'] = INVALID_TOKEN_CODES.has(code) ? INVALID_TOKEN : REALM;
  return problem;
}

/** How many times the header `name` (lower case) comes among a request's raw header lines. */
export function countHeader(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count += 1;
  return count;
}

function bearerToken(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const match = /^(\S+)(?:\s+(.*))?$/.exec(authorization.trim());
  if (!match || match[1]!.toLowerCase() !== 'bearer') return null;
  return (match[2] ?? '').trim();
}

/**
 * Step 3's detail. A key sent without its scheme (`Authorization: service_acct_…`, a common slip) is
 * told what the header must look like; the value itself is never repeated.
 */
function missingBearerDetail(authorization: string | undefined): string {
  if (authorization?.includes(KEY_PREFIX.account)) {
    return 'The Authorization header holds an account API key without the Bearer scheme: it must be sent as Authorization: Bearer service_acct_….';
  }
  if (authorization?.includes(KEY_PREFIX.server)) {
    return 'The Authorization header holds a server API key: it takes the account API key, as Authorization: Bearer service_acct_…, and the server API key goes in x-service-key.';
  }
  return 'Send the account API key as Authorization: Bearer service_acct_….';
}

/** Origins are short and printable; anything else is cut down before it is stored. */
function cleanOrigin(origin: string): string {
  return origin.replace(/[^\x21-\x7e]/g, '').slice(0, 200) || 'unknown';
}

/** Steps 2–7: the two keys as presented, well-formed, or the refusal (thrown). Reads only the request. */
function presentedKeys(request: GuardRequest): { token: string; serviceKey: string } {
  const { headers } = request;
  const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
  const serviceKeyHeader = headers['x-service-key'];
  const serviceKey = typeof serviceKeyHeader === 'string' ? serviceKeyHeader.trim() : '';
  // 2.
  if (countHeader(request.rawHeaders, 'authorization') > 1 || countHeader(request.rawHeaders, 'x-service-key') > 1) {
    throw new Problem('duplicate_header', 'Send Authorization and x-service-key once each.');
  }
  // 3.
  const token = bearerToken(authorization);
  if (token === null) throw refuse('account_key_missing', missingBearerDetail(authorization));
  // 4.
  if (hasKeyShape('server', token) || hasKeyShape('account', serviceKey)) {
    throw refuse(
      'keys_swapped',
      "The keys are in each other's headers: Authorization: Bearer takes the account API key (service_acct_…), x-service-key takes the server API key (service_srv_…).",
    );
  }
  // 5.
  if (!isWellFormedKey('account', token)) {
    throw refuse('account_key_malformed', 'The Bearer value is not an account API key (service_acct_ followed by 72 hex characters with a valid checksum).');
  }
  // 6.
  if (!serviceKey) {
    throw refuse('service_key_missing', 'Send the server API key of the server you act on in the x-service-key header.');
  }
  // 7.
  if (!isWellFormedKey('server', serviceKey)) {
    throw refuse(
      'service_key_malformed',
      'The x-service-key value is not a server API key (service_srv_ followed by 72 hex characters with a valid checksum).',
    );
  }
  return { token, serviceKey };
}

/** Steps 8–10 on the account key found (or not) by the Bearer value's digest. */
function judgeAccountKey(accountKey: AccountKeyLookup | undefined, nowIso: string): AccountKeyLookup {
  if (!accountKey) throw refuse('account_key_invalid', `No account API key matches the Bearer value. ${ACCOUNT_KEYS_PAGE}`);
  if (accountKey.revoked_at) {
    throw refuse('account_key_revoked', `This account API key (${accountKey.hint}) was revoked on ${accountKey.revoked_at}. ${ACCOUNT_KEYS_PAGE}`);
  }
  if (accountKey.expires_at && accountKey.expires_at <= nowIso) {
    throw refuse('account_key_expired', `This account API key (${accountKey.hint}) expired on ${accountKey.expires_at}. ${ACCOUNT_KEYS_PAGE}`);
  }
  return accountKey;
}

/** Steps 11–14 on the server key found (or not) by x-service-key's digest, against the account key's account. */
function judgeServerKey(serverKey: ServerKeyLookup | undefined, accountKey: AccountKeyLookup, nowIso: string, version: string): AuthContext {
  // 11–12.
  if (!serverKey)
    throw refuse(
      'service_key_invalid',
      "No server API key matches the x-service-key value. The server's page in the dashboard shows its key hint and can rotate it.",
    );
  if (serverKey.expires_at && serverKey.expires_at <= nowIso) {
    throw refuse(
      'service_key_revoked',
      `This server API key (${serverKey.hint}) was rotated out and its grace period ended on ${serverKey.expires_at}. Use the server's current key.`,
    );
  }
  // 13–14.
  if (serverKey.account_id !== accountKey.account_id) {
    throw new Problem('server_access_denied', 'The server named by x-service-key belongs to another account than the account API key.');
  }
  if (serverKey.mode !== 'business') {
    throw new Problem(
      'server_not_business_mode',
      'This server is in personal mode; the management API acts only on business-mode servers. Change its mode in the dashboard.',
    );
  }
  return {
    accountId: accountKey.account_id,
    accountKeyId: accountKey.id,
    serverId: serverKey.server_id,
    // A number on both engines (an integer column, not a boolean).
    secretsReadable: serverKey.secrets_readable !== 0,
    authVersion: version,
  };
}

export class ManagementGuard {
  readonly #keys: KeyCache;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly keyLimits: KeyQuota,
  ) {
    this.#keys = new KeyCache(ctx.store.authLookups);
  }

  /**
   * The fifteen steps for a read-only route whose own statement returns the auth version (GET
   * /v1/end-users/{id}), answered synchronously from memory: the keys as judged under the last version
   * this node saw, the rate limit from this node's lease, and no lastUsedAt due. That is every request
   * of a busy key; a promise per step cost more than the steps themselves. Null wherever any step would
   * need I/O or refuses: check() then takes the same steps the long way (a refusal is never answered
   * from here, so one that a change lifted, or makes an earlier step's, is judged on fresh rows). The
   * handler confirms the version its read returned before it acts (confirm in api/guard-hook.ts).
   */
  admitFromMemory(request: GuardRequest): GuardResult | null {
    const version = this.#keys.knownVersion;
    if (version === null || request.headers.origin !== undefined || request.method === 'OPTIONS') return null;
    const now = this.ctx.clock.now();
    let auth: AuthContext;
    let accountKey: AccountKeyLookup;
    try {
      const { token, serviceKey } = presentedKeys(request);
      const nowIso = now.toISOString();
      accountKey = judgeAccountKey(this.#keys.cachedAccountKey(keyDigest(token), version), nowIso);
      const serverKey = this.#keys.cachedServerKey(keyDigest(serviceKey), version);
      if (!serverKey) return null;
      auth = judgeServerKey(serverKey, accountKey, nowIso, version);
    } catch (error) {
      if (error instanceof Problem) return null;
      throw error;
    }
    if (touchIsDue(accountKey, now)) return null;
    const rateLimit = this.keyLimits.takeFromMemory(accountKey.id, now);
    return rateLimit && { auth, rateLimit };
  }

  /**
   * The fifteen steps. `authVersion: 'by-handler'` is for a read-only route whose own statement
   * returns the auth version (GET /v1/end-users/{id}): the keys are judged from memory under the last
   * version this node saw, without a statement of their own, and the handler compares the version its
   * read returned before it acts; where it moved, it calls `recheck`, which judges the keys again on
   * rows read afresh (confirm in api/guard-hook.ts). A refusal judged that way is never answered as it
   * is: the keys are judged again under a version read here, so a key, server key or server that opens
   * again (or a refusal that a change now makes an earlier step's) is seen on the very next request
   * too. Every other route, and every other method on that route's URL, reads the version here, first.
   */
  async check(request: GuardRequest, options: { authVersion: 'here' | 'by-handler' } = { authVersion: 'here' }): Promise<GuardResult> {
    const { token, serviceKey } = await this.#presented(request);
    const known = options.authVersion === 'by-handler' ? this.#keys.knownVersion : null;
    if (known !== null) {
      try {
        return await this.#admit(token, serviceKey, known);
      } catch (error) {
        if (!(error instanceof Problem)) throw error;
      }
    }
    return this.#admit(token, serviceKey, await this.#keys.sync());
  }

  /** Steps 8–15 under `version`, then lastUsedAt. */
  async #admit(token: string, serviceKey: string, version: string): Promise<GuardResult> {
    const now = this.ctx.clock.now();
    const { accountKey, auth } = await this.#judge(token, serviceKey, version, now);
    // 15.
    const rateLimit = await this.keyLimits.take(accountKey.id, now);
    if (rateLimit.limited) {
      throw new Problem(
        'rate_limited',
        `This account API key sent more than ${this.keyLimits.limit} requests this minute. Retry after ${rateLimit.resetSeconds} seconds.`,
        {
          headers: { 'retry-after': String(rateLimit.resetSeconds) },
        },
      );
    }
    await touchAccountKey(this.ctx, accountKey, now);
    return { auth, rateLimit };
  }

  /**
   * Steps 8–14 again on keys read afresh, for a handler whose read found that the auth version moved
   * after the guard judged the keys. The request was counted against the rate limit once already.
   */
  async recheck(request: GuardRequest): Promise<AuthContext> {
    const { token, serviceKey } = await this.#presented(request);
    const version = await this.#keys.sync();
    return (await this.#judge(token, serviceKey, version, this.ctx.clock.now())).auth;
  }

  /** Steps 1–7: the two keys as presented, well-formed, or the refusal. No I/O but the exposure record of step 1. */
  async #presented(request: GuardRequest): Promise<{ token: string; serviceKey: string }> {
    const { headers } = request;
    // 1. Browsers send Origin (and preflight with OPTIONS); account keys must never live in one.
    const origin = headers.origin;
    if (origin !== undefined || request.method === 'OPTIONS') {
      const token = bearerToken(typeof headers.authorization === 'string' ? headers.authorization : undefined);
      if (origin !== undefined && token && isWellFormedKey('account', token)) {
        await recordBrowserExposure(this.ctx, keyDigest(token), cleanOrigin(String(origin)), this.ctx.clock.now());
      }
      throw new Problem(
        'browser_access_forbidden',
        'The management API is for backends only: account API keys must never be sent from a browser or a mobile app. Call Keyward from your server.',
      );
    }
    return presentedKeys(request);
  }

  /** Steps 8–14 on the keys as known under `version` (from memory while it holds). */
  async #judge(token: string, serviceKey: string, version: string, now: Date) {
    const nowIso = now.toISOString();
    // 8–10.
    const accountKey = judgeAccountKey(await this.#keys.accountKey(keyDigest(token), version), nowIso);
    const auth = judgeServerKey(await this.#keys.serverKey(keyDigest(serviceKey), version), accountKey, nowIso, version);
    return { accountKey, auth };
  }
}
