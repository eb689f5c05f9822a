/**
 * Where a proxied path begins in a request's target (CONTRACT 8.1): after
 * `/v1/end-users/{externalUserId}/proxy/{provider}/`. The gateway's route reads the path from here as
 * the caller sent it (the router's copy is decoded), and the errors before routing use it to tell an
 * undecodable proxied path from any other undecodable path.
 */

const ROUTE = ['v1', 'end-users', null, 'proxy', null];
const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;

/**
 * The target's part up to and with the `/` after `{provider}` (or up to its end or query) where its
 * first five segments, each `/` and one or more characters other than `/` and `?`, decode to the
 * gateway's route (however spelled: the router matched `/%761/…` as `/v1/…`); null otherwise (or
 * where they do not decode). A scan, not a pattern: it runs on every proxied call, and the pattern it
 * replaced cost ~10 µs a call there (bench/RESULTS.md).
 */
export function proxiedPathPrefix(target: string): string | null {
  let end = 0;
  const segments: string[] = [];
  for (let i = 0; i < ROUTE.length; i += 1) {
    if (target.charCodeAt(end) !== SLASH) return null;
    let next = end + 1;
    while (next < target.length) {
      const code = target.charCodeAt(next);
      if (code === SLASH || code === QUESTION_MARK) break;
      next += 1;
    }
    if (next === end + 1) return null;
    segments.push(target.slice(end + 1, next));
    end = next;
  }
  try {
    // Each segment is decoded before its name is looked at: an {id} or {provider} that does not decode
    // makes no proxied path either.
    if (!ROUTE.every((name, i) => decodeURIComponent(segments[i]!) === name || name === null)) return null;
  } catch {
    return null;
  }
  return target.charCodeAt(end) === SLASH ? target.slice(0, end + 1) : target.slice(0, end);
}

/** The raw path after `/proxy/{provider}/` and the raw query, as the caller sent them; null where the target is no proxied call. */
export function proxiedTarget(target: string): { rawPath: string; rawQuery: string } | null {
  const prefix = proxiedPathPrefix(target);
  if (prefix === null) return null;
  const rest = target.slice(prefix.length);
  const question = rest.indexOf('?');
  return question < 0 ? { rawPath: rest, rawQuery: '' } : { rawPath: rest.slice(0, question), rawQuery: rest.slice(question + 1) };
}
