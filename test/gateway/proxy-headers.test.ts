/**
 * The headers of a proxied call (services/gateway/proxy-headers.ts, CONTRACT 8.1): what the caller
 * sent for Keyward never reaches the provider, the credential's headers win, and the answer comes
 * back without hop-by-hop headers or cookies, naming the host called.
 */
import { describe, expect, it } from 'vitest';
import { callerResponseHeaders, upstreamRequestHeaders } from '../../src/services/gateway/proxy-headers.js';

describe('a proxied call’s headers', () => {
  it('forward what the caller meant for the provider, and nothing it meant for Keyward', () => {
    // What the provider is to get as sent; the rest is Keyward's, or this hop's.
    const forProvider = {
      accept: 'application/vnd.github+json',
      'content-type': 'application/json',
      'content-length': '17',
      'idempotency-key': 'idem-1',
      'x-github-api-version': '2022-11-28',
      'x-request-id': 'caller-123',
      'user-agent': 'my-backend/1.0',
      'x-multi': ['a', 'b'],
    };
    const sent = upstreamRequestHeaders(
      {
        authorization: 'Bearer service_acct_0123456789abcdef',
        'x-service-key': 'service_srv_0123456789abcdef',
        cookie: 'keyward_session=abc',
        'proxy-authorization': 'Basic eHg6eXk=',
        host: 'keyward.example.com',
        forwarded: 'for=10.0.0.1',
        'x-forwarded-for': '10.0.0.1',
        'x-forwarded-proto': 'https',
        'keyward-base-url': 'https://uploads.github.com',
        'keyward-anything': 'x',
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'x-hop': 'only for this hop',
        te: 'trailers',
        trailer: 'x-checksum',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        'proxy-connection': 'keep-alive',
        expect: '100-continue',
        ...forProvider,
      },
      { authorization: 'Bearer gho_stored' },
    );
    expect(sent).toEqual({ authorization: 'Bearer gho_stored', ...forProvider });
    expect(JSON.stringify(sent)).not.toMatch(/service_acct_|service_srv_|keyward_session/);
  });

  it('put the credential’s headers over the caller’s of the same name', () => {
    expect(upstreamRequestHeaders({ 'x-api-key': 'callers-own', accept: '*/*' }, { 'x-api-key': 'stored' })).toEqual({ 'x-api-key': 'stored', accept: '*/*' });
    // Nothing injected (a query parameter carries the credential): the caller's authorization still goes nowhere.
    expect(upstreamRequestHeaders({ authorization: 'Bearer service_acct_x' }, {})).toEqual({});
  });

  it('answer the provider’s headers without hop-by-hop ones or cookies, naming the host called', () => {
    const answered = callerResponseHeaders(
      {
        'content-type': 'application/json; charset=utf-8',
        'content-length': '42',
        'set-cookie': ['a=1', 'b=2'],
        connection: 'keep-alive, x-hop',
        'keep-alive': 'timeout=5',
        'x-hop': 'x',
        'transfer-encoding': 'chunked',
        etag: '"abc"',
        link: '<https://api.github.com/user/repos?page=2>; rel="next"',
        'x-ratelimit-remaining': '4999',
        'x-request-id': 'providers-own',
        location: 'https://api.github.com/elsewhere',
      },
      'api.github.com',
      'req_123',
    );
    expect(answered).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'content-length': '42',
      etag: '"abc"',
      link: '<https://api.github.com/user/repos?page=2>; rel="next"',
      'x-ratelimit-remaining': '4999',
      location: 'https://api.github.com/elsewhere',
      'keyward-upstream': 'api.github.com',
      'x-request-id': 'req_123',
    });
  });
});
