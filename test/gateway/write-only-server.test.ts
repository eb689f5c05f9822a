/**
 * Write-only servers (CONTRACT 8.2): `secretsReadable` false makes the member read withhold every
 * secret and say so, from the next request on every node (a second node that had the server's key in
 * memory included); set by the CLI and audited; true again brings the secrets back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { setSecretsReadable } from '../../src/services/servers/servers.js';
import { cliEnv, cliJson, runCli } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { type SecondNode, startSecondNode } from '../helpers/test-app.js';

const API_KEY = 'sk-proj-WRITEONLYabcdefghijklmnopqrstu';

describe.each(ENGINES)('a write-only server on %s', (engine) => {
  let o: OAuthTenant;
  let second: SecondNode;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    second = await startSecondNode(o.t);
    await o.connect('u_both');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_both', values: { apiKey: API_KEY } });
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await o?.close();
  });

  const read = (app: OAuthTenant['t']['app']) => app.inject({ method: 'GET', url: '/v1/end-users/u_both', headers: o.headers });
  const byProvider = (body: { credentials: Record<string, unknown>[] }) => Object.fromEntries(body.credentials.map((c) => [c.provider, c]));

  it('withholds every secret from the next read on every node, says so, and gives them back when readable again', async () => {
    const { accessToken, refreshToken } = await storedCredential(o, 'u_both');
    // Both nodes read once: each holds the server's key, and its judgement, in memory.
    for (const app of [o.t.app, second.app]) {
      const before = byProvider((await read(app)).json());
      expect(before[PROVIDER]).toMatchObject({ accessToken, tokenType: expect.any(String) });
      expect(before.openai).toMatchObject({ values: { apiKey: API_KEY } });
      expect(before.openai).not.toHaveProperty('secretsWithheld');
    }

    await setSecretsReadable(o.t.ctx, o.tenant.serverId, false, CLI_ACTOR);
    for (const app of [o.t.app, second.app]) {
      const answer = await read(app);
      expect(answer.statusCode).toBe(200);
      for (const secret of [accessToken, refreshToken, API_KEY]) expect(answer.body).not.toContain(secret);
      const after = byProvider(answer.json());
      expect(Object.keys(after[PROVIDER]!).sort()).toEqual(
        [
          'connectedAt',
          'expiresAt',
          'id',
          'lastCheck',
          'lastUsedAt',
          'provider',
          'refreshedAt',
          'scopes',
          'secretsWithheld',
          'status',
          'type',
          'updatedAt',
        ].sort(),
      );
      expect(after[PROVIDER]).toMatchObject({ type: 'oauth2', status: 'active', secretsWithheld: true, scopes: ['api:read'] });
      expect(Object.keys(after.openai!).sort()).toEqual(
        ['connectedAt', 'id', 'lastCheck', 'lastUsedAt', 'provider', 'secretsWithheld', 'status', 'type', 'updatedAt'].sort(),
      );
    }
    // Nothing is refreshed for a withheld read, even where the token has expired: the gateway refreshes what it uses.
    const stored = await storedCredential(o, 'u_both');
    o.t.clock.advance(2 * 3600);
    expect(byProvider((await read(o.t.app)).json())[PROVIDER]).toMatchObject({ secretsWithheld: true });
    expect((await storedCredential(o, 'u_both')).sealed).toBe(stored.sealed);

    // A second later: the audit trail's order is its time's.
    o.t.clock.advance(1);
    await setSecretsReadable(o.t.ctx, o.tenant.serverId, true, CLI_ACTOR);
    for (const app of [second.app, o.t.app]) {
      const again = byProvider((await read(app)).json());
      expect(again.openai).toMatchObject({ values: { apiKey: API_KEY } });
      expect(again[PROVIDER]).toHaveProperty('accessToken');
      expect(again[PROVIDER]).not.toHaveProperty('secretsWithheld');
    }
    const audit = await o.t.ctx.store.db
      .selectFrom('audit_events')
      .select(['action', 'detail', 'target_id'])
      .where('action', '=', 'server.secrets_readable_changed')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(audit.map((a) => [a.target_id, JSON.parse(a.detail)])).toEqual([
      [o.tenant.serverId, { from: true, to: false }],
      [o.tenant.serverId, { from: false, to: true }],
    ]);
  });

  it('is set by `keyward server secrets`, which takes only true or false', { timeout: 120_000 }, async () => {
    const env = cliEnv({ KEYWARD_DATABASE_URL: o.t.database.url, KEYWARD_MASTER_KEY: o.t.masterKey.toString('base64') });
    expect(await cliJson(env, ['server', 'secrets', '--server', o.tenant.serverId, '--readable', 'false'])).toEqual({
      serverId: o.tenant.serverId,
      secretsReadable: false,
    });
    expect(byProvider((await read(o.t.app)).json()).openai).toMatchObject({ secretsWithheld: true });
    const malformed = await runCli(env, ['server', 'secrets', '--server', o.tenant.serverId, '--readable', 'no', '--json']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--readable');
    const unknown = await runCli(env, ['server', 'secrets', '--server', 'srv_nope', '--readable', 'true', '--json']);
    expect(unknown.code).toBe(1);
    expect(await cliJson(env, ['server', 'secrets', '--server', o.tenant.serverId, '--readable', 'true'])).toEqual({
      serverId: o.tenant.serverId,
      secretsReadable: true,
    });
    expect(byProvider((await read(o.t.app)).json()).openai).toMatchObject({ values: { apiKey: API_KEY } });
  });
});
