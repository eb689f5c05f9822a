/**
 * Where a proxied path begins in a request's target (web/proxy-paths.ts): the gateway's route however
 * its fixed segments are spelled, the caller's path and query after it as sent. The scan replaced a
 * pattern on the hot path; the pattern stays here as the reference it must agree with, on every
 * spelling made by putting one or two pieces (empty segments, `?` and `/`, escapes that do or do not
 * decode) in the route's places.
 */
import { describe, expect, it } from 'vitest';
import { proxiedPathPrefix, proxiedTarget } from '../../src/web/proxy-paths.js';

/** The pattern the scan replaced, with its segment check, as it was. */
function byPattern(target: string): string | null {
  const prefix = /^(\/[^/?]+){5}(\/|(?=\?)|$)/.exec(target)?.[0];
  if (prefix === undefined) return null;
  try {
    const segments = prefix.split('/').slice(1, 6).map(decodeURIComponent);
    return ['v1', 'end-users', null, 'proxy', null].every((name, i) => name === null || segments[i] === name) ? prefix : null;
  } catch {
    return null;
  }
}

describe('the proxied path in a target', () => {
  it('is found after the provider, however the route is spelled, with the path and query as sent', () => {
    expect(proxiedTarget('/v1/end-users/auth0%7C42/proxy/github/repos/a%2Fb?per_page=5&x=%20')).toEqual({
      rawPath: 'repos/a%2Fb',
      rawQuery: 'per_page=5&x=%20',
    });
    expect(proxiedTarget('/%761/end-users/u/proxy/github/user')).toEqual({ rawPath: 'user', rawQuery: '' });
    expect(proxiedTarget('/v1/end-users/u/proxy/github?q=1')).toEqual({ rawPath: '', rawQuery: 'q=1' });
    expect(proxiedPathPrefix('/v1/end-users/u/proxy/github')).toBe('/v1/end-users/u/proxy/github');
    expect(proxiedPathPrefix('/v1/end-users/u/proxy/github/')).toBe('/v1/end-users/u/proxy/github/');
  });

  it('is not found where the target is another route, too short, has an empty segment or does not decode', () => {
    for (const target of [
      '/v1/end-users/u/credentials/github/x',
      '/v1/end-users/u/proxy',
      '/v1/end-users//proxy/github/x',
      '/v1/end-users/u/proxy//x',
      '/v1/end-users/%E0%A4%A/proxy/github/x',
      'v1/end-users/u/proxy/github/x',
      '/v2/end-users/u/proxy/github/x',
      '',
    ]) {
      expect(proxiedPathPrefix(target), target).toBeNull();
    }
  });

  it('agrees with the pattern it replaced on every spelling made from the route’s pieces', () => {
    const pieces = ['/', '?', 'v1', '%761', 'end-users', 'proxy', 'u', '%ZZ', '%E0%A4%A', 'gh', '', 'a?b', '%2F', '#'];
    const route = ['', 'v1', 'end-users', 'u', 'proxy', 'gh', 'x'];
    // The route with every piece in each place, and with every two pieces in each two places; each
    // joined by `/` and by `?`.
    const replaced = (parts: string[], at: number, piece: string) => parts.map((part, i) => (i === at ? piece : part));
    const spellings: string[][] = [];
    for (let i = 0; i < route.length; i += 1) {
      for (const a of pieces) {
        spellings.push(replaced(route, i, a));
        for (let j = i + 1; j < route.length; j += 1) for (const b of pieces) spellings.push(replaced(replaced(route, i, a), j, b));
      }
    }
    const targets = new Set(spellings.flatMap((parts) => [parts.join('/'), parts.join('?')]));
    for (const target of targets) expect(proxiedPathPrefix(target), target).toBe(byPattern(target));
    // Many distinct targets, and among them many that are the route: both answers are tried often.
    const found = [...targets].filter((target) => byPattern(target) !== null);
    expect(targets.size).toBeGreaterThan(5_000);
    expect(found.length).toBeGreaterThan(300);
  });
});
