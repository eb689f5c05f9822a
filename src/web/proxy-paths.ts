/**
 * Where a proxied path begins in a request's target (CONTRACT 8.1): after
 * `/v1/end-users/{externalUserId}/proxy/{provider}/`. The gateway's route reads the path from here as
 * the caller sent it (the router's copy is decoded), and the errors before routing use it to tell an
 * undecodable proxied path from any other undecodable path.
 */

/** Five segments, however spelled (the router matched `/%761/…` as `/v1/…`): `/v1/end-users/{id}/proxy/{provider}`. */
const FIVE_SEGMENTS = /^(\/[^/?]+){5}(\/|(?=\?)|$)/;
const ROUTE = ['v1', 'end-users', null, 'proxy', null];

/**
 * The target's part up to and with the `/` after `{provider}` (or up to its end or query) where its
 * segments, decoded, are the gateway's route; null otherwise (or where they do not decode).
 */
export function proxiedPathPrefix(target: string): string | null {
  const prefix = FIVE_SEGMENTS.exec(target)?.[0];
  if (prefix === undefined) return null;
  try {
    const segments = prefix.split('/').slice(1, 6).map(decodeURIComponent);
    return ROUTE.every((name, i) => name === null || segments[i] === name) ? prefix : null;
  } catch {
    return null;
  }
}

/** The raw path after `/proxy/{provider}/` and the raw query, as the caller sent them; null where the target is no proxied call. */
export function proxiedTarget(target: string): { rawPath: string; rawQuery: string } | null {
  const prefix = proxiedPathPrefix(target);
  if (prefix === null) return null;
  const rest = target.slice(prefix.length);
  const question = rest.indexOf('?');
  return question < 0 ? { rawPath: rest, rawQuery: '' } : { rawPath: rest.slice(0, question), rawQuery: rest.slice(question + 1) };
}
