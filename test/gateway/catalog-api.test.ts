/**
 * The catalog's gateway fields (CONTRACT 8.5): every entry that has them can be proxied and checked as
 * written, the contract's own examples are exactly so, and the `verify` request is judged as a proxied
 * path is.
 */
import { describe, expect, it } from 'vitest';
import { CATALOG as BY_SLUG } from '../../src/catalog/catalog.js';
import { parseVerify, providerApiRefusal, verifyPath } from '../../src/services/gateway/provider-api.js';

const CATALOG = [...BY_SLUG.values()];

describe('the catalog for the gateway', () => {
  it.each(CATALOG.filter((p) => p.api).map((p) => [p.slug, p] as const))('%s can be proxied as written', (_slug, provider) => {
    const fields = provider.kind === 'static' ? provider.fields.map((f) => f.name) : null;
    expect(providerApiRefusal(provider.api!, fields, false)).toBeNull();
    expect(provider.api!.source).toMatch(/^https:\/\//);
    // A check's fixed headers: only beside a verify, plain lowercase names (so that they replace the
    // defaults they mean to), never one that says where the request goes or who sends it.
    const verifyHeaders = provider.kind === 'static' ? (provider.api?.verifyHeaders ?? {}) : {};
    for (const [name, value] of Object.entries(verifyHeaders)) {
      expect(provider.kind === 'static' && provider.api?.verify).toBeTruthy();
      expect(name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(['authorization', 'host', 'cookie', 'content-length', 'connection', 'transfer-encoding']).not.toContain(name);
      if (provider.kind === 'static') expect(provider.api!.auth.toLowerCase()).not.toContain(`header:${name}:`);
      expect(value).toMatch(/^[\x20-\x7e]+$/);
    }
  });

  it('says what the contract says for its named providers', () => {
    const api = (slug: string) => CATALOG.find((p) => p.slug === slug)?.api;
    expect(api('github')?.apiBaseUrl).toBe('https://api.github.com');
    expect(api('google')).toMatchObject({ apiBaseUrl: 'https://www.googleapis.com', apiHosts: ['*.googleapis.com'] });
    expect(api('slack')?.apiBaseUrl).toBe('https://slack.com/api');
    expect(api('microsoft')?.apiBaseUrl).toBe('https://graph.microsoft.com');
    expect(api('notion')?.apiBaseUrl).toBe('https://api.notion.com');
    expect(api('linear')?.apiBaseUrl).toBe('https://api.linear.app');
    expect(api('openai')).toMatchObject({ apiBaseUrl: 'https://api.openai.com', auth: 'bearer:apiKey', verify: 'GET /v1/models' });
    expect(api('anthropic')).toMatchObject({ apiBaseUrl: 'https://api.anthropic.com', auth: 'header:x-api-key:{apiKey}', verify: 'GET /v1/models' });
    expect(api('stripe')).toMatchObject({ apiBaseUrl: 'https://api.stripe.com', auth: 'basic:{secretKey}:', verify: 'GET /v1/balance' });
    expect(api('twilio')).toMatchObject({
      apiBaseUrl: 'https://api.twilio.com',
      auth: 'basic:{accountSid}:{authToken}',
      verify: 'GET /2010-04-01/Accounts/{accountSid}.json',
    });
    // Most of the catalog can be proxied; the few without one base URL say why in the catalog.
    expect(CATALOG.filter((p) => p.api).length).toBeGreaterThanOrEqual(CATALOG.length - 3);
  });

  it('judges the verify request as a proxied path, filled with the stored values', () => {
    const twilio = parseVerify('GET /2010-04-01/Accounts/{accountSid}.json', ['accountSid', 'authToken']);
    if ('refused' in twilio) throw new Error(twilio.refused);
    expect(verifyPath(twilio, { accountSid: 'AC0123', authToken: 'secret' })).toEqual({ rawPath: '2010-04-01/Accounts/AC0123.json' });
    // A value is one segment's text: one that would climb out, or hold a "/", makes no check at all.
    expect(verifyPath(twilio, { accountSid: '../../admin' })).toHaveProperty('refused');
    expect(verifyPath(twilio, { accountSid: 'a b?c' })).toEqual({ rawPath: '2010-04-01/Accounts/a%20b%3Fc.json' });
    const own = parseVerify('GET /v3/domains/{domain}', ['domain']);
    if ('refused' in own) throw new Error(own.refused);
    expect(verifyPath(own, { domain: '..' })).toHaveProperty('refused');
    for (const spec of ['GET v1/models', 'DELETE /v1/models', 'GET /v1/{token}', 'GET /../admin', 'GET //evil.example/x', 'GET /v1/models extra']) {
      expect(parseVerify(spec, ['apiKey']), spec).toHaveProperty('refused');
    }
  });

  it('refuses API fields that cannot be used', () => {
    const fields = ['apiKey'];
    const refused = (api: Parameters<typeof providerApiRefusal>[0], f: string[] | null = fields, allowHttp = false) =>
      providerApiRefusal(api, f, allowHttp)?.reason ?? null;
    expect(refused({ apiBaseUrl: 'http://api.example.com', auth: 'bearer:apiKey', source: 'https://x' })).toMatch(/https/);
    expect(refused({ apiBaseUrl: 'http://127.0.0.1:4100', auth: 'bearer:apiKey', source: 'https://x' }, fields, true)).toBeNull();
    expect(refused({ apiBaseUrl: 'https://user@api.example.com', auth: 'bearer:apiKey', source: 'https://x' })).toMatch(/user/);
    expect(refused({ apiBaseUrl: 'https://api.example.com?x=1', auth: 'bearer:apiKey', source: 'https://x' })).toMatch(/query/);
    expect(refused({ apiBaseUrl: 'not a url', auth: 'bearer:apiKey', source: 'https://x' })).toMatch(/URL/);
    expect(refused({ apiBaseUrl: 'https://api.example.com', apiHosts: ['https://x.example.com'], auth: 'bearer:apiKey', source: 'https://x' })).toMatch(
      /apiHosts/,
    );
    expect(refused({ apiBaseUrl: 'https://api.example.com', apiHosts: ['*.com'], auth: 'bearer:apiKey', source: 'https://x' })).toMatch(/apiHosts/);
    expect(refused({ apiBaseUrl: 'https://api.example.com', apiHosts: ['*.example.com', 'files.example.com:8443'], auth: 'bearer:apiKey' })).toBeNull();
    expect(refused({ apiBaseUrl: 'https://api.example.com', source: 'https://x' })).toMatch(/needs auth/);
    expect(refused({ apiBaseUrl: 'https://api.example.com', auth: 'bearer:token', source: 'https://x' })).toMatch(/auth/);
    expect(refused({ apiBaseUrl: 'https://api.example.com', auth: 'bearer:apiKey', verify: 'GET /../x', source: 'https://x' })).toMatch(/verify/);
    expect(refused({ apiBaseUrl: 'https://api.example.com', auth: 'bearer:apiKey', source: 'https://x' }, null)).toMatch(/only a static/);
  });
});
