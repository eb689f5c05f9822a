/**
 * Checking a static credential's values at its provider (CONTRACT 8.3): the provider's `verify`
 * request, filled with the values and sent as a proxied call would be (its path appended to
 * `apiBaseUrl` under the same rules, the values sent as `auth` says), with the fixed headers the
 * catalog says the provider requires (`verifyHeaders`) and Keyward's User-Agent, through ctx.outbound (the
 * address policy checked per call, the pinned lookup, no redirect followed, the body cap), within
 * CHECK_TIMEOUT_MS. Whoever calls it holds no database transaction: a provider may take that long.
 */
import type { StaticProvider, StaticProviderApi } from '../../catalog/provider-definition.js';
import { KEYWARD_USER_AGENT } from '../../outbound/outbound-http.js';
import { iso } from '../../primitives/clock.js';
import type { CheckOutcome } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { parseVerify, verifyPath } from './provider-api.js';
import { proxyTarget } from './proxy-target.js';
import { staticInjection, withQuery } from './static-auth.js';

/** How long a check may take in all before it counts as unreachable. */
export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckResult {
  outcome: CheckOutcome;
  /** When the check ended. */
  at: string;
  /** The provider's status, where it answered (a 3xx is refused by the outbound client: null). */
  status: number | null;
  /** Why it is unreachable, for logs: never a value, a header or the URL called. */
  reason?: string;
}

/** The provider's API where it has a verify request: what a check needs. */
export function checkableApi(provider: StaticProvider): (StaticProviderApi & { verify: string }) | null {
  const api = provider.api;
  return api?.verify !== undefined ? { ...api, verify: api.verify } : null;
}

/** 2xx: the values work; 401 or 403: the provider refuses them; anything else says nothing about them. */
export function outcomeOfStatus(status: number): CheckOutcome {
  if (status >= 200 && status < 300) return 'valid';
  return status === 401 || status === 403 ? 'rejected' : 'unreachable';
}

/**
 * The check of `values` at the provider; null where it has no verify request (nothing to check with).
 * Never throws for the provider's sake: an outage, a timeout, a refused address or a request the
 * values cannot make are all `unreachable`.
 */
export async function checkValues(ctx: ServiceContext, provider: StaticProvider, values: Readonly<Record<string, string>>): Promise<CheckResult | null> {
  const api = checkableApi(provider);
  if (!api) return null;
  const request = buildRequest(ctx, provider, api, values);
  const ended = (outcome: CheckOutcome, status: number | null, reason?: string): CheckResult => ({
    outcome,
    at: iso(ctx.clock.now()),
    status,
    ...(reason ? { reason } : {}),
  });
  if ('refused' in request) return ended('unreachable', null, request.refused);
  try {
    const answer = await ctx.outbound.fetch(request.url, { method: request.method, headers: request.headers, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    const outcome = outcomeOfStatus(answer.status);
    return ended(outcome, answer.status, outcome === 'unreachable' ? `the provider answered ${answer.status}` : undefined);
  } catch (error) {
    // ctx.outbound.fetch throws OutboundError only: its message names neither the URL nor a value.
    return ended('unreachable', null, error instanceof Error ? error.message : 'the check failed');
  }
}

interface CheckRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
}

/** The verify request for these values, or why it cannot be made (a definition or a value it cannot carry). */
function buildRequest(
  ctx: ServiceContext,
  provider: StaticProvider,
  api: StaticProviderApi & { verify: string },
  values: Readonly<Record<string, string>>,
): CheckRequest | { refused: string } {
  const verify = parseVerify(
    api.verify,
    provider.fields.map((f) => f.name),
  );
  if ('refused' in verify) return verify;
  const path = verifyPath(verify, values);
  if ('refused' in path) return path;
  const injected = staticInjection(provider, values);
  if ('refused' in injected) return injected;
  const target = proxyTarget(api, path.rawPath, withQuery('', injected.query), undefined, ctx.outbound.allowPrivateUrls);
  if ('refused' in target) return target;
  const headers = { accept: '*/*', 'user-agent': KEYWARD_USER_AGENT, ...api.verifyHeaders, ...injected.headers };
  return { url: target.url.href, method: verify.method, headers };
}
