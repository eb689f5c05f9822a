/**
 * Where a proxied call goes (services/gateway/proxy-target.ts, CONTRACT 8.1): the caller's path is
 * appended to the provider's base URL, and no spelling of a path leaves it; `keyward-base-url` picks
 * another base only on the provider's API hosts.
 */
import { describe, expect, it } from 'vitest';
import { hostAllowed, proxyTarget, refusePath } from '../../src/services/gateway/proxy-target.js';

const github = { apiBaseUrl: 'https://api.github.com' };
const slack = { apiBaseUrl: 'https://slack.com/api' };
const google = { apiBaseUrl: 'https://www.googleapis.com', apiHosts: ['*.googleapis.com'] };

function target(base: typeof github | typeof google, path: string, query = '', picked?: string, allowHttp = false): string {
  const answer = proxyTarget(base, path, query, picked, allowHttp);
  return 'url' in answer ? answer.url.href : `refused: ${answer.refused}`;
}

describe('the proxied URL', () => {
  it('appends the path and the query, as sent, to the base URL and its path', () => {
    expect(target(github, 'repos/octocat/hello-world/issues', 'state=open&per_page=5')).toBe(
      'https://api.github.com/repos/octocat/hello-world/issues?state=open&per_page=5',
    );
    expect(target(slack, 'chat.postMessage')).toBe('https://slack.com/api/chat.postMessage');
    expect(target({ apiBaseUrl: 'https://slack.com/api/' }, 'auth.test')).toBe('https://slack.com/api/auth.test');
    expect(target(github, 'search/code', 'q=a%20b%2Fc&x=%40')).toBe('https://api.github.com/search/code?q=a%20b%2Fc&x=%40');
    // A trailing slash is the caller's; encoded characters that are not separators stay as sent.
    expect(target(github, 'user/repos/')).toBe('https://api.github.com/user/repos/');
    // Nothing after the provider: the base URL itself.
    expect(target(slack, '')).toBe('https://slack.com/api/');
    expect(target(github, 'repos/o/caf%C3%A9/contents/a%20b.txt')).toBe('https://api.github.com/repos/o/caf%C3%A9/contents/a%20b.txt');
    // Dots inside a segment are a name, not a step up.
    expect(target(github, 'repos/o/r/compare/v1...v2')).toBe('https://api.github.com/repos/o/r/compare/v1...v2');
    // Encoded once more, "%2e%2e" is a name too: the parser and the provider see the text "%2e%2e".
    expect(target(github, 'repos/%252e%252e/x')).toBe('https://api.github.com/repos/%252e%252e/x');
    // A ";" is a character like any other where the segment is no dot segment.
    expect(target(github, 'repos/a;b/...;c')).toBe('https://api.github.com/repos/a;b/...;c');
  });

  it('refuses a # in the query: the rest would be cut off as a fragment, never sent', () => {
    expect(target(github, 'search/code', 'q=a#b')).toMatch(/^refused: the query holds a #/);
    expect(target(github, 'search/code', 'q=a%23b')).toBe('https://api.github.com/search/code?q=a%23b');
  });

  it.each([
    ['..', 'repos/../../admin'],
    ['.', 'repos/./x'],
    ['a leading ..', '../x'],
    ['%2e%2e', 'repos/%2e%2e/admin'],
    ['%2E%2E', 'repos/%2E%2E/admin'],
    ['.%2e', 'repos/.%2e/admin'],
    ['%2e.', 'repos/%2e./admin'],
    ['%2e', 'repos/%2e/admin'],
    ['%2f', 'repos%2f..%2fadmin'],
    ['%2F', 'repos/a%2Fb'],
    ['..%2f', '..%2fadmin'],
    ['a backslash', 'repos\\..\\admin'],
    ['%5c', 'repos/..%5cadmin'],
    ['%5C', 'repos%5C'],
    ['//host', '/evil.example/x'],
    ['// inside', 'repos//x'],
    ['@host', '@evil.example/x'],
    ['an @ inside', 'repos/a@evil.example'],
    ['%40', 'repos/%40evil.example'],
    ['a scheme', 'https:/evil.example/x'],
    ['a scheme, encoded slashes', 'http:%2f%2fevil.example'],
    ['javascript:', 'javascript:alert(1)'],
    ['overlong . (%c0%ae)', 'repos/%c0%ae%c0%ae/admin'],
    ['overlong . (%e0%80%ae)', 'repos/%e0%80%ae%e0%80%ae/admin'],
    ['overlong / (%c0%af)', 'repos/..%c0%afadmin'],
    ['overlong \\ (%c1%9c)', 'repos/..%c1%9cadmin'],
    ['a lone continuation byte', 'repos/%80'],
    ['a malformed escape', 'repos/%zz'],
    ['a bare %', 'repos/100%'],
    ['NUL', 'repos/a%00b'],
    ['a newline', 'repos/a%0d%0aHost:%20evil'],
    ['..;', 'repos/x/..;/..;/etc'],
    ['.;', 'repos/.;/x'],
    ['%2e%2e;params', 'repos/%2e%2e;a=b/x'],
  ])('refuses %s', (_name, path) => {
    expect(target(github, path)).toMatch(/^refused: /);
    expect(refusePath(path)).not.toBeNull();
  });

  it('picks another base URL only on the provider’s hosts, https, with nothing but a host and a path', () => {
    expect(target(google, 'drive/v3/files', 'pageSize=1', 'https://www.googleapis.com')).toBe('https://www.googleapis.com/drive/v3/files?pageSize=1');
    expect(target(google, 'files', '', 'https://www.googleapis.com/drive/v3')).toBe('https://www.googleapis.com/drive/v3/files');
    expect(target(google, 'b/bucket/o', '', 'https://storage.googleapis.com/storage/v1')).toBe('https://storage.googleapis.com/storage/v1/b/bucket/o');
    expect(target(google, 'x', '', 'https://a.b.googleapis.com')).toBe('https://a.b.googleapis.com/x');
    for (const picked of [
      'https://googleapis.com', // `*.` is a subdomain, not the apex
      'https://evil.example',
      'https://www.googleapis.com.evil.example',
      'https://evilgoogleapis.com',
      'https://www.googleapis.com:8443', // a port must be named in apiHosts
      'http://www.googleapis.com',
      'https://user@www.googleapis.com',
      'https://www.googleapis.com/?x=1',
      'https://www.googleapis.com/#x',
      'ftp://www.googleapis.com',
      'www.googleapis.com',
      '',
    ]) {
      expect(target(google, 'x', '', picked), picked).toMatch(/^refused: /);
    }
    // Without apiHosts, only apiBaseUrl's own host.
    expect(target(github, 'user', '', 'https://api.github.com')).toBe('https://api.github.com/user');
    expect(target(github, 'user', '', 'https://uploads.github.com')).toMatch(/^refused: /);
    // A picked base's path is still a base: the path cannot leave it.
    expect(target(google, '../x', '', 'https://www.googleapis.com/drive/v3')).toMatch(/^refused: /);
  });

  it('lets a picked base be http only where private URLs are allowed (development and tests)', () => {
    const local = { apiBaseUrl: 'http://127.0.0.1:4100/api', apiHosts: ['127.0.0.1:4101'] };
    expect(target(local, 'x', '', 'http://127.0.0.1:4101', true)).toBe('http://127.0.0.1:4101/x');
    expect(target(local, 'x', '', 'http://127.0.0.1:4101', false)).toMatch(/^refused: /);
    expect(target(local, 'x', '', 'http://127.0.0.1:4102', true)).toMatch(/^refused: /);
  });

  it('matches hosts without regard to case, a port only where named', () => {
    expect(hostAllowed(google, new URL('https://WWW.GoogleAPIs.com'))).toBe(true);
    expect(hostAllowed({ apiBaseUrl: 'https://api.example.com', apiHosts: ['files.example.com:8443'] }, new URL('https://files.example.com:8443'))).toBe(true);
    expect(hostAllowed({ apiBaseUrl: 'https://api.example.com', apiHosts: ['files.example.com:8443'] }, new URL('https://files.example.com'))).toBe(false);
  });
});
