/**
 * How a static credential is sent (services/gateway/static-auth.ts, CONTRACT 3 `auth`): the
 * contract's own examples, the refusals a provider's definition gets, and what a stored value cannot
 * do to the request.
 */
import { describe, expect, it } from 'vitest';
import { injectedAuth, parseStaticAuth, type StaticAuth, withQuery } from '../../src/services/gateway/static-auth.js';

function parsed(spec: string, fields: string[]): StaticAuth {
  const auth = parseStaticAuth(spec, fields);
  if ('refused' in auth) throw new Error(auth.refused);
  return auth;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('a static provider’s auth', () => {
  it('sends the contract’s examples as their providers document', () => {
    expect(injectedAuth(parsed('bearer:apiKey', ['apiKey']), { apiKey: 'sk-proj-abc' })).toEqual({
      headers: { authorization: 'Bearer sk-proj-abc' },
      query: [],
    });
    expect(injectedAuth(parsed('header:x-api-key:{apiKey}', ['apiKey']), { apiKey: 'sk-ant-abc' })).toEqual({
      headers: { 'x-api-key': 'sk-ant-abc' },
      query: [],
    });
    // Stripe: the secret key as the user, no password.
    expect(injectedAuth(parsed('basic:{secretKey}:', ['secretKey']), { secretKey: 'sk_live_abc' })).toEqual({
      headers: { authorization: basic('sk_live_abc', '') },
      query: [],
    });
    expect(injectedAuth(parsed('basic:{accountSid}:{authToken}', ['accountSid', 'authToken']), { accountSid: 'AC123', authToken: 't:o:k' })).toEqual({
      headers: { authorization: basic('AC123', 't:o:k') },
      query: [],
    });
    expect(injectedAuth(parsed('header:Authorization:Token token="{apiKey}"', ['apiKey']), { apiKey: 'abc' })).toEqual({
      headers: { authorization: 'Token token="abc"' },
      query: [],
    });
    expect(injectedAuth(parsed('query:key:apiKey', ['apiKey']), { apiKey: 'k 1&x' })).toEqual({ headers: {}, query: [['key', 'k 1&x']] });
  });

  it.each([
    ['an unknown kind', 'cookie:session', ['apiKey']],
    ['no kind', '', ['apiKey']],
    ['bearer of an unknown field', 'bearer:token', ['apiKey']],
    ['a placeholder naming no field', 'header:x-api-key:{token}', ['apiKey']],
    ['a template with no field', 'header:x-api-key:static', ['apiKey']],
    ['a stray brace', 'header:x-api-key:{apiKey}}', ['apiKey']],
    ['a header name that is not a token', 'header:x api key:{apiKey}', ['apiKey']],
    ['Host', 'header:Host:{apiKey}', ['apiKey']],
    ['Content-Length', 'header:content-length:{apiKey}', ['apiKey']],
    ['Transfer-Encoding', 'header:Transfer-Encoding:{apiKey}', ['apiKey']],
    ['a keyward- header', 'header:keyward-base-url:{apiKey}', ['apiKey']],
    ['an x-forwarded- header', 'header:X-Forwarded-For:{apiKey}', ['apiKey']],
    ['x-service-key', 'header:x-service-key:{apiKey}', ['apiKey']],
    ['Expect', 'header:Expect:{apiKey}', ['apiKey']],
    ['Proxy-Authorization', 'header:Proxy-Authorization:{apiKey}', ['apiKey']],
    ['a control character', 'header:x-api-key:{apiKey}\r\nx-evil: 1', ['apiKey']],
    ['basic without a ":"', 'basic:{apiKey}', ['apiKey']],
    ['basic with no field', 'basic:user:pass', ['apiKey']],
    ['query without a name', 'query::apiKey', ['apiKey']],
    ['query of an unknown field', 'query:key:token', ['apiKey']],
    ['query with a name that breaks the query', 'query:a&b:apiKey', ['apiKey']],
  ])('refuses %s', (_name, spec, fields) => {
    expect(parseStaticAuth(spec, fields)).toHaveProperty('refused');
  });

  it('refuses to send a stored value that would break the request', () => {
    expect(injectedAuth(parsed('bearer:apiKey', ['apiKey']), { apiKey: 'abc\r\nx-evil: 1' })).toHaveProperty('refused');
    expect(injectedAuth(parsed('header:x-api-key:{apiKey}', ['apiKey']), { apiKey: 'a\u0000b' })).toHaveProperty('refused');
    // A pasted zero-width space or curly quote: no header can carry it.
    expect(injectedAuth(parsed('bearer:apiKey', ['apiKey']), { apiKey: 'sk-abc\u200b' })).toHaveProperty('refused');
    expect(injectedAuth(parsed('bearer:apiKey', ['apiKey']), { apiKey: '\u201csk-abc\u201d' })).toHaveProperty('refused');
    expect(injectedAuth(parsed('basic:{user}:{pass}', ['user', 'pass']), { user: 'a:b', pass: 'c' })).toHaveProperty('refused');
  });

  it('sets a query parameter over any the caller sent under its name, keeping the rest as sent', () => {
    expect(withQuery('', [['key', 'k1']])).toBe('key=k1');
    expect(withQuery('q=a%20b+c&key=callers&x=1', [['key', 'k 1&']])).toBe('q=a%20b+c&x=1&key=k%201%26');
    // However the caller spells the name, it is one a server would read as the injected one.
    expect(withQuery('k%65y=callers&key=again&keys=kept', [['key', 'stored']])).toBe('keys=kept&key=stored');
    expect(withQuery('q=1', [])).toBe('q=1');
  });
});
