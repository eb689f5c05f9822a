/**
 * The catalog's `verify` requests as the providers' documentation says they must be sent (CONTRACT 8.3,
 * 8.5). Each catalog entry is taken as written, its apiBaseUrl alone pointed at a stand-in on 127.0.0.1
 * that holds the request to what that provider requires besides the key: Anthropic answers 400 to a
 * request without `anthropic-version`, Postmark 415 to one that does not accept JSON. Without those
 * headers a good key and a bad one would both come back `unreachable`: nothing checked.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogProvider } from '../../src/catalog/catalog.js';
import type { StaticProvider } from '../../src/catalog/provider-definition.js';
import { checkValues } from '../../src/services/gateway/verify-request.js';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

interface Case {
  slug: string;
  good: Record<string, string>;
  bad: Record<string, string>;
  /** The status the provider gives a request missing what it requires beyond the key, or null when the request is fine. */
  malformed: (headers: IncomingHttpHeaders) => number | null;
  /** Whether the request carries the good key. */
  carriesGood: (headers: IncomingHttpHeaders) => boolean;
}

const TOKEN = '6f1c2a3b-0000-4000-8000-00000000c0de';
const CASES: Case[] = [
  {
    slug: 'anthropic',
    good: { apiKey: 'sk-ant-api03-good_0123456789abcdefghij' },
    bad: { apiKey: 'sk-ant-api03-bad_0123456789abcdefghijk' },
    // https://docs.anthropic.com/en/api/versioning: the header is required on every request.
    malformed: (headers) => (headers['anthropic-version'] === '2023-06-01' ? null : 400),
    carriesGood: (headers) => headers['x-api-key'] === 'sk-ant-api03-good_0123456789abcdefghij',
  },
  {
    slug: 'postmark',
    good: { serverToken: TOKEN },
    bad: { serverToken: '6f1c2a3b-0000-4000-8000-0000000000ba' },
    malformed: (headers) => (/application\/json/.test(headers.accept ?? '') ? null : 415),
    carriesGood: (headers) => headers['x-postmark-server-token'] === TOKEN,
  },
];

describe("the catalog's checks, sent as each provider requires", () => {
  let t: TestApp;
  let api: ApiStandIn;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    api = await startApiStandIn();
  });
  afterAll(async () => {
    await api.close();
    await t.close();
  });

  it.each(CASES)('$slug: a good key is valid and a bad one rejected', async ({ slug, good, bad, malformed, carriesGood }) => {
    const catalogEntry = catalogProvider(slug) as StaticProvider;
    const provider: StaticProvider = { ...catalogEntry, api: { ...catalogEntry.api!, apiBaseUrl: api.url } };
    api.reset();
    api.answer = (received, res) => {
      res.writeHead(malformed(received.headers) ?? (carriesGood(received.headers) ? 200 : 401), { 'content-type': 'application/json' });
      res.end('{}');
    };
    expect(await checkValues(t.ctx, provider, good)).toMatchObject({ outcome: 'valid', status: 200 });
    expect(await checkValues(t.ctx, provider, bad)).toMatchObject({ outcome: 'rejected', status: 401 });
    expect(api.received).toHaveLength(2);
    for (const request of api.received) expect(request.headers['user-agent']).toBe('Keyward');
  });
});
