/**
 * The outbound module's own guarantees, for every caller (provider calls go through oauth4webapi, which
 * asks for `redirect: 'manual'` itself; webhook deliveries will not): real sockets to local servers.
 */
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutbound, OutboundError, type OutboundHttp } from '../../src/outbound/outbound-http.js';
import { type ScriptedTokenEndpoint, startScriptedTokenEndpoint } from '../helpers/scripted-token-endpoint.js';

async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'answered';
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return error.kind;
  }
}

describe('outbound HTTP', () => {
  let endpoint: ScriptedTokenEndpoint;
  let elsewhere: ScriptedTokenEndpoint;
  let lenient: OutboundHttp;
  let strict: OutboundHttp;
  beforeAll(async () => {
    [endpoint, elsewhere] = await Promise.all([startScriptedTokenEndpoint(), startScriptedTokenEndpoint()]);
    lenient = createOutbound({ allowPrivateUrls: true, timeoutMs: 5000 });
    // Every name resolves to 127.0.0.1, but for the IPv4-compatible IPv6 ones (::/96, RFC 4291).
    const table: Record<string, LookupAddress[]> = {
      'compat.example.test': [{ address: '::7f00:1', family: 6 }],
      'compat-private.example.test': [{ address: '::a00:5', family: 6 }],
    };
    strict = createOutbound({ allowPrivateUrls: false, timeoutMs: 5000, resolve: async (name) => table[name] ?? [{ address: '127.0.0.1', family: 4 }] });
  });
  afterAll(async () => {
    await Promise.all([lenient.close(), strict.close(), endpoint.close(), elsewhere.close()]);
  });

  it('answers a global Response with the body already read', async () => {
    const response = await lenient.fetch(endpoint.tokenUrl, { method: 'POST', body: new URLSearchParams({ grant_type: 'x' }) });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ token_type: 'bearer' });
  });

  it('never follows a redirect, even when the caller asks for it', async () => {
    endpoint.mode = 'redirect';
    endpoint.redirectTo = elsewhere.tokenUrl;
    expect(await failure(lenient.fetch(endpoint.tokenUrl, { method: 'POST', redirect: 'follow' }))).toBe('redirect');
    expect(elsewhere.requests).toEqual([]);
    endpoint.mode = 'tokens';
  });

  it('refuses private literals and names that resolve to private addresses before any connection', async () => {
    const arrived = endpoint.requests.length;
    const literal = new URL(endpoint.tokenUrl);
    const connected = endpoint.connections;
    for (const url of [
      `https://127.0.0.1:${literal.port}/token`,
      `https://[::ffff:127.0.0.1]:${literal.port}/token`,
      `https://[::7f00:1]:${literal.port}/token`,
      endpoint.tokenUrl,
      `https://idp.example.test:${literal.port}/token`,
      // Not merely unreachable ('network'): refused before the socket is opened.
      `https://compat.example.test:${literal.port}/token`,
      `https://compat-private.example.test:${literal.port}/token`,
    ]) {
      expect(await failure(strict.fetch(url, { method: 'POST' })), url).toBe('refused');
    }
    expect(endpoint.requests.length).toBe(arrived);
    expect(endpoint.connections).toBe(connected);
  });

  it('stops reading past the cap it was given', async () => {
    const small = createOutbound({ allowPrivateUrls: true, timeoutMs: 5000, maxResponseBytes: 64 });
    try {
      expect(await failure(small.fetch(endpoint.tokenUrl, { method: 'POST' }))).toBe('too_large');
    } finally {
      await small.close();
    }
  });

  describe("post(), the webhook delivery's lighter call, under the same policy", () => {
    const post = (client: OutboundHttp, url: string) => client.post(url, { headers: { 'content-type': 'application/json' }, body: '{}' });

    it('answers the status and the headers', async () => {
      const answer = await post(lenient, endpoint.tokenUrl);
      expect(answer.status).toBe(200);
      expect(answer.header('Content-Type')).toMatch(/json/);
      expect(answer.header('retry-after')).toBeNull();
    });

    it('never follows a redirect', async () => {
      endpoint.mode = 'redirect';
      endpoint.redirectTo = elsewhere.tokenUrl;
      try {
        expect(await failure(post(lenient, endpoint.tokenUrl))).toBe('redirect');
        expect(elsewhere.requests).toEqual([]);
      } finally {
        endpoint.mode = 'tokens';
      }
    });

    it('refuses private literals and names that resolve to private addresses before any connection', async () => {
      const arrived = endpoint.requests.length;
      const connected = endpoint.connections;
      const { port } = new URL(endpoint.tokenUrl);
      for (const url of [`https://127.0.0.1:${port}/token`, endpoint.tokenUrl, `https://idp.example.test:${port}/token`]) {
        expect(await failure(post(strict, url)), url).toBe('refused');
      }
      expect(endpoint.requests.length).toBe(arrived);
      expect(endpoint.connections).toBe(connected);
    });

    it('refuses a body declared or streamed past the cap, closing the connection early', async () => {
      endpoint.mode = 'declared-2mib';
      try {
        expect(await failure(post(lenient, endpoint.tokenUrl))).toBe('too_large');
        endpoint.mode = 'stream-past-cap';
        const ends = endpoint.streamEnds.length;
        expect(await failure(post(lenient, endpoint.tokenUrl))).toBe('too_large');
        await expect.poll(() => endpoint.streamEnds.slice(ends)).toEqual(['closed-early']);
      } finally {
        endpoint.mode = 'tokens';
      }
    });

    it('gives up after its timeout, and when the caller aborts', async () => {
      const quick = createOutbound({ allowPrivateUrls: true, timeoutMs: 300 });
      endpoint.mode = 'stream-past-cap';
      try {
        const small = createOutbound({ allowPrivateUrls: true, timeoutMs: 300, maxResponseBytes: 2 * 1024 * 1024 });
        try {
          // The body's end comes 2 s later: the call's whole bound (300 ms) ends it first.
          expect(await failure(post(small, endpoint.tokenUrl))).toBe('timeout');
        } finally {
          await small.close();
        }
        const aborted = new AbortController();
        aborted.abort();
        expect(await failure(quick.post(endpoint.tokenUrl, { headers: {}, body: '', signal: aborted.signal }))).toBe('timeout');
      } finally {
        endpoint.mode = 'tokens';
        await quick.close();
      }
    });
  });
});
