/**
 * GitHub has no RFC 7009 endpoint: Keyward revokes a GitHub credential through its REST API,
 * `DELETE /applications/{client_id}/token` with the OAuth app's client id and secret as HTTP Basic
 * and `{"access_token": …}` as the body (CONTRACT 8.5; the catalog's `apiRevocation`). A stand-in of
 * GitHub's API on 127.0.0.1 answers as its documentation says, and the catalog entry is pointed at it
 * through ctx.catalog. What DELETE /v1/end-users/{id} says follows what the stand-in answered:
 * 204 succeeded, anything else failed (a 404 too: it may be a client GitHub does not accept); a client id that
 * would leave the API's base URL sends nothing at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { ENGINES } from '../helpers/databases.js';
import { APP_REDIRECT } from '../helpers/oauth-tenant.js';
import { catalogWithStandIns, type ProviderStandIns, startProviderStandIns } from '../helpers/provider-stand-ins.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)("revoking a GitHub credential through GitHub's REST API on %s", (engine) => {
  let s: ProviderStandIns;
  let t: TestApp;
  let headers: Record<string, string>;
  let serverId: string;
  beforeAll(async () => {
    s = await startProviderStandIns();
    const started = await startWithTenant(engine, { catalog: catalogWithStandIns(s) });
    ({ t, headers } = started);
    serverId = started.tenant.serverId;
    await enableGitHub(s.clients.github.id);
    await allowRedirectUri(t.ctx, serverId, APP_REDIRECT, CLI_ACTOR);
  });
  afterAll(async () => {
    await t?.close();
    await s?.close();
  });

  const enableGitHub = (clientId: string) =>
    enableProvider(t.ctx, { serverId, slug: 'github', clientId, clientSecret: s.clients.github.secret, actor: CLI_ACTOR });

  /** A whole flow at the stand-in; answers the access token GitHub issued. */
  async function connect(externalUserId: string): Promise<string> {
    const started = await t.app.inject({ method: 'POST', url: '/v1/oauth/github/start', headers, payload: { externalUserId, redirectUri: APP_REDIRECT } });
    expect(started.statusCode, started.body).toBe(201);
    const back = s.approve('github', started.json().authorizationUrl);
    const done = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    expect(done.statusCode).toBe(303);
    return s.issued.filter((i) => i.provider === 'github').at(-1)!.token;
  }
  async function revoke(externalUserId: string): Promise<string> {
    const response = await t.app.inject({ method: 'DELETE', url: `/v1/end-users/${externalUserId}`, headers });
    expect(response.statusCode, response.body).toBe(200);
    const [revoked] = response.json().revoked as { provider: string; providerRevocation: string }[];
    expect(revoked?.provider).toBe('github');
    return revoked!.providerRevocation;
  }
  const githubCredentials = () => t.ctx.store.db.selectFrom('credentials').select('id').where('provider', '=', 'github').execute();
  const revocationPath = () => `/applications/${s.clients.github.id}/token`;

  it('sends DELETE /applications/{client_id}/token with Basic client_id:client_secret and the token as JSON; 204 is succeeded', async () => {
    const token = await connect('gh-leaver');
    const seen = s.requests.length;
    expect(await revoke('gh-leaver')).toBe('succeeded');

    const sent = s.requests.slice(seen);
    expect(sent.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE ${revocationPath()}`]);
    const [request] = sent;
    const basic = Buffer.from(`${s.clients.github.id}:${s.clients.github.secret}`).toString('base64');
    expect(request!.headers.authorization).toBe(`Basic ${basic}`);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.accept).toBe('application/vnd.github+json');
    expect(request!.headers['user-agent']).toBe('Keyward');
    expect(request!.body).toEqual({ access_token: token });
    expect(s.issued.find((i) => i.token === token)?.revoked).toBe(true);
    expect(await githubCredentials()).toEqual([]);
  });

  it('counts 404 as failed: GitHub answers it to a token it no longer knows and to a client it does not accept alike', async () => {
    const token = await connect('gh-gone');
    // The user revoked it on github.com first: GitHub answers 404 to revoking it again.
    s.issued.find((i) => i.token === token)!.revoked = true;
    const seen = s.requests.length;
    expect(await revoke('gh-gone')).toBe('failed');
    expect(s.requests.slice(seen).map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE ${revocationPath()}`]);
  });

  it("is failed when GitHub answers 500, and Keyward's copy is erased all the same", async () => {
    const token = await connect('gh-outage');
    s.githubRevokeStatus = 500;
    try {
      expect(await revoke('gh-outage')).toBe('failed');
    } finally {
      s.githubRevokeStatus = null;
    }
    expect(s.issued.find((i) => i.token === token)?.revoked).toBe(false);
    expect(await githubCredentials()).toEqual([]);
  });

  it('revokes the credential a second connection replaces', async () => {
    const first = await connect('gh-twice');
    const second = await connect('gh-twice');
    expect(s.issued.find((i) => i.token === first)?.revoked).toBe(true);
    expect(s.issued.find((i) => i.token === second)?.revoked).toBe(false);
    expect(await revoke('gh-twice')).toBe('succeeded');
    expect(s.issued.find((i) => i.token === second)?.revoked).toBe(true);
  });

  it('sends nothing, and says failed, where the client id would take the path out of the API base URL', async () => {
    await connect('gh-odd-client');
    // The operator changed the OAuth client since: percent-encoded, "../x" is a segment holding a "/".
    await enableGitHub('../../admin');
    const seen = s.requests.length;
    try {
      expect(await revoke('gh-odd-client')).toBe('failed');
    } finally {
      await enableGitHub(s.clients.github.id);
    }
    expect(s.requests.length).toBe(seen);
    expect(await githubCredentials()).toEqual([]);
  });
});
